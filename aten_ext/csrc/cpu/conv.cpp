// Convolution glue: shapes, layouts, blocking and threads; kernels in
// kernels/conv_kernel.*. Design notes: docs/design/conv.md.
#include "cpu/conv.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/conv_kernel.h"
#include "kernels/dispatch.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {

namespace {

// The 3-d geometry (D = 1 for 1d / 2d, H = 1 for 1d) of x against p.
kernels::ConvGeom make_geom(at::IntArrayRef xs, const ConvPackedParams& p,
                            const std::vector<int64_t>& ys) {
  kernels::ConvGeom g{};
  const int64_t sp = p.spatial;
  g.C = xs[1];
  g.D = sp == 3 ? xs[2] : 1;
  g.H = sp >= 2 ? xs[xs.size() - 2] : 1;
  g.W = xs[xs.size() - 1];
  g.OC = p.OC;
  g.OD = sp == 3 ? ys[2] : 1;
  g.OH = sp >= 2 ? ys[ys.size() - 2] : 1;
  g.OW = ys[ys.size() - 1];
  g.KD = p.KD; g.KH = p.KH; g.KW = p.KW;
  g.SD = p.SD; g.SH = p.SH; g.SW = p.SW;
  g.PD = p.PD; g.PH = p.PH; g.PW = p.PW;
  g.DD = p.DD; g.DH = p.DH; g.DW = p.DW;
  g.groups = p.groups;
  g.icg = p.ICg;
  g.ocg = p.OC / p.groups;
  return g;
}

} // namespace

at::Tensor conv_channels_last_input(const at::Tensor& x, int64_t spatial) {
  if (spatial == 1) return x.unsqueeze(2).contiguous(at::MemoryFormat::ChannelsLast);
  return x.contiguous(conv_memory_format(x.dim()));
}

at::Tensor conv_empty_output(const std::vector<int64_t>& ys, const at::TensorOptions& options) {
  if (ys.size() == 3) {
    return at::empty({ys[0], ys[1], 1, ys[2]}, options, at::MemoryFormat::ChannelsLast).squeeze(2);
  }
  return at::empty(ys, options, conv_memory_format(static_cast<int64_t>(ys.size())));
}

at::MemoryFormat conv_memory_format(int64_t dim) {
  return dim == 5 ? at::MemoryFormat::ChannelsLast3d : at::MemoryFormat::ChannelsLast;
}

std::vector<int64_t> conv_output_sizes(const char* op, at::IntArrayRef xs, const ConvPackedParams& p) {
  const int64_t sp = p.spatial;
  TORCH_CHECK_VALUE(static_cast<int64_t>(xs.size()) == sp + 2, "qplugin::", op, ": qx should have ",
                    sp + 2, " dims (N, C", sp == 3 ? ", D" : "", sp >= 2 ? ", H" : "", ", W), got ",
                    xs.size(), " dims ", xs);
  TORCH_CHECK_VALUE(xs[1] == p.ICg * p.groups, "qplugin::", op, ": qx channels should be ",
                    p.ICg * p.groups, " (weight in_channels ", p.ICg, " * groups ", p.groups, "), got ",
                    xs[1]);
  std::vector<int64_t> ys = {xs[0], p.OC};
  for (int64_t i = 0; i < sp; ++i) {
    const int64_t in = xs[2 + i];
    const int64_t k = p.weight.size(2 + i);
    const int64_t o =
        (in + 2 * p.padding[i] - p.dilation[i] * (k - 1) - 1) / p.stride[i] + 1;
    const bool ok = in + 2 * p.padding[i] - p.dilation[i] * (k - 1) - 1 >= 0 && o >= 1;
    TORCH_CHECK_VALUE(ok, "qplugin::", op, ": output size should be >= 1 in every spatial dim, got ",
                      "input ", xs, " with kernel ", p.weight.sizes().slice(2), ", stride ", p.stride,
                      ", padding ", p.padding, ", dilation ", p.dilation);
    ys.push_back(o);
  }
  check_output_size(op, ys, 1);
  return ys;
}

void check_conv_io_qparams(const char* op, double x_scale, int64_t x_zp, double y_scale, int64_t y_zp) {
  check_scale(op, "qx scale", x_scale);
  check_zero_point(op, "qx zero_point", x_zp, at::kByte);
  check_scale(op, "output_scale", y_scale);
  check_zero_point(op, "output_zero_point", y_zp, at::kByte);
}

void conv_forward_int(const char* op, const at::Tensor& x_int, double x_scale, int64_t x_zp,
                      ConvPackedParams& p, double y_scale, int64_t y_zp, bool relu,
                      const at::Tensor* add_int, double add_scale, int64_t add_zp, at::Tensor& y_int) {
  check_conv_io_qparams(op, x_scale, x_zp, y_scale, y_zp);
  const std::vector<int64_t> ys = conv_output_sizes(op, x_int.sizes(), p);
  TORCH_INTERNAL_ASSERT(y_int.sizes() == at::IntArrayRef(ys));
  if (add_int != nullptr) {
    check_scale(op, "qaccum scale", add_scale);
    check_zero_point(op, "qaccum zero_point", add_zp, at::kByte);
    TORCH_CHECK_VALUE(add_int->sizes() == at::IntArrayRef(ys), "qplugin::", op,
                      ": qaccum should have the output's shape ", at::IntArrayRef(ys), ", got ",
                      add_int->sizes());
    check_requant_multiplier(op, "output_scale", y_scale, add_scale, "qaccum scale");
  }
  const double w_scale_max = p.w_scale.empty() ? 0.0 : *std::max_element(p.w_scale.begin(), p.w_scale.end());
  check_requant_multiplier(op, "output_scale", y_scale, x_scale * w_scale_max, "qx scale * weight scale");
  if (y_int.numel() == 0) return;

  const kernels::ConvGeom g = make_geom(x_int.sizes(), p, ys);
  const at::Tensor x = conv_channels_last_input(x_int, p.spatial);
  at::Tensor add;
  if (add_int != nullptr) add = conv_channels_last_input(*add_int, p.spatial);
  const uint8_t* xp = x.data_ptr<uint8_t>();
  const uint8_t* addp = add.defined() ? add.data_ptr<uint8_t>() : nullptr;
  uint8_t* yp = y_int.data_ptr<uint8_t>();
  const int64_t N = ys[0];
  const int64_t OC = p.OC;
  const int64_t in_img = g.D * g.H * g.W * g.C;
  const int64_t M = g.OD * g.OH * g.OW;  // output pixels per image
  const int64_t out_img = M * OC;

  // Per-call requantization constants.
  std::vector<float> mult(OC), bias(OC);
  for (int64_t o = 0; o < OC; ++o) {
    mult[o] = static_cast<float>(x_scale * p.w_scale[o] / y_scale);
    bias[o] = static_cast<float>(static_cast<double>(p.bias_f[o]) / y_scale);
  }
  kernels::ConvEpilogue base{};
  base.mult = mult.data();
  base.bias = bias.data();
  base.add_mult = static_cast<float>(add_scale / y_scale);
  base.add_zp = static_cast<int32_t>(add_zp);
  base.y_zp = static_cast<int32_t>(y_zp);
  base.qmin = relu ? static_cast<int32_t>(y_zp) : 0;
  base.qmax = 255;
  const int32_t xzp = static_cast<int32_t>(x_zp);
  // The kernel path, read once: the packed layout, the im2col element size and every kernel
  // below must agree even if another thread switches paths meanwhile (kernels/dispatch.h).
  const kernels::Isa path = kernels::active_isa();

  if (p.depthwise) {
    const int64_t rows = g.OD * g.OH;
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.OW * OC * p.KH * p.KW));
    const int32_t* wpk = p.dw_packed(path);
    at::parallel_for(0, N * rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end;) {
        const int64_t n = t / rows;
        const int64_t r0 = t % rows;
        const int64_t rc = std::min(end - t, rows - r0);
        kernels::ConvEpilogue ep = base;
        ep.add = addp != nullptr ? addp + n * out_img : nullptr;
        QPLUGIN_ISA_CALL_ON(path, conv_depthwise, xp + n * in_img, g, r0, rc, p.dw.data(), wpk, xzp, ep,
                         yp + n * out_img);
        t += rc;
      }
    });
    return;
  }

  // The engine's packed weight of each group (the AVX2 path reads its int16 layout).
  std::vector<kernels::gemm::PackedB> wb(static_cast<size_t>(p.groups));
  for (int64_t gi = 0; gi < p.groups; ++gi) wb[gi] = p.packed[gi]->view(path == kernels::Isa::kAvx2);
  const int64_t elem = QPLUGIN_ISA_CALL_ON(path, conv_a_elem_size);
  const int64_t kp = p.Kp;
  const int64_t G = p.groups;
  const int64_t ocg = OC / G;
  const bool direct = elem == 1 && G == 1 && p.KD * p.KH * p.KW == 1 && p.SD == 1 && p.SH == 1 &&
                      p.SW == 1 && p.PD == 0 && p.PH == 0 && p.PW == 0 && kp == g.C && !p.any_wzp;
  const bool has_ind = !direct && QPLUGIN_ISA_CALL_ON(path, qgemm_has_indirect) && !p.any_wzp;
  // Stem convs (C = 3): each kernel row's KW * C input bytes are contiguous; read them as one
  // "tap" of S4 = round_up(KW * C, 4) bytes against zero-padded weights, rather than im2col.
  const bool rows_mode = has_ind && p.ICg % 4 != 0 && G == 1 && p.DW == 1;
  const bool indirect = has_ind && (p.ICg % 4 == 0 || rows_mode);
  const kernels::gemm::PackedB rows_b = rows_mode ? p.packed_rows().view() : kernels::gemm::PackedB{};
  // Indirect: read the receptive fields in place from an x_zp-padded copy of x.
  at::Tensor xpad;
  kernels::ConvGeom gp = g;
  const uint8_t* xsrc = xp;
  int64_t src_img = in_img;
  if (indirect) {
    gp.D += 2 * g.PD;
    gp.H += 2 * g.PH;
    gp.W += 2 * g.PW;
    gp.PD = gp.PH = gp.PW = 0;
    if (rows_mode || gp.D != g.D || gp.H != g.H || gp.W != g.W) {
      src_img = gp.D * gp.H * gp.W * g.C;
      // + 64 bytes of slack: rows mode reads up to 3 bytes past the last kernel row.
      // Only the border is filled with x_zp: every padded row is [PW * C fill | W * C copied |
      // PW * C fill]; whole padded planes / rows get one fill each.
      xpad = at::empty({N * src_img + 64}, x.options());
      uint8_t* dst = xpad.data_ptr<uint8_t>();
      const int zp = static_cast<int>(x_zp);
      const int64_t row_bytes = g.W * g.C;
      const int64_t prow = gp.W * g.C;       // padded row
      const int64_t pplane = gp.H * prow;    // padded plane
      const int64_t side = g.PW * g.C;
      // One task per input row (n, d, h): its copy, the fill after it (right side + next
      // row's left side, or the bottom rows), the top rows before h = 0 and the front / back
      // padding planes at the first / last row of an image. Rows are split over the threads
      // (the copy is ~2-4 % of a 3x3 conv; serial it would not scale).
      const int64_t nrows = N * g.D * g.H;
      at::parallel_for(0, nrows, std::max<int64_t>(1, (64 * 1024) / std::max<int64_t>(1, prow)),
                       [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t h = t % g.H;
          const int64_t d = (t / g.H) % g.D;
          const int64_t n = t / (g.H * g.D);
          uint8_t* di = dst + n * src_img;
          uint8_t* dp = di + (d + g.PD) * pplane;
          if (d == 0 && h == 0) std::memset(di, zp, static_cast<size_t>(g.PD * pplane));
          if (d == g.D - 1 && h == g.H - 1) {
            std::memset(di + (g.PD + g.D) * pplane, zp, static_cast<size_t>(g.PD * pplane));
          }
          if (h == 0) std::memset(dp, zp, static_cast<size_t>(g.PH * prow + side));
          uint8_t* r = dp + (h + g.PH) * prow + side;
          std::memcpy(r, xp + n * in_img + (d * g.H + h) * row_bytes, static_cast<size_t>(row_bytes));
          // right fill of this row + left fill of the next (or the bottom rows)
          const int64_t gap = h + 1 < g.H ? 2 * side : side + g.PH * prow;
          std::memset(r + row_bytes, zp, static_cast<size_t>(gap));
        }
      });
      std::memset(dst + N * src_img, zp, 64);
      xsrc = xpad.data_ptr<uint8_t>();
    }
    if (rows_mode) {
      gp.KW = 1;
      gp.icg = p.S4;
    }
  }
  // Rows per block: the block of A stays in L2 (about 128 KiB).
  int64_t mb = std::max<int64_t>(24, (128 * 1024) / std::max<int64_t>(1, kp * elem));
  if (indirect) mb = 252;  // a multiple of the 6-, 12- and 14-row tiles
  mb = std::min(mb, M);
  const int64_t threads = at::get_num_threads();
  // Threads: at least 4 blocks per thread (load balance). One thread: blocks only as small as
  // keeps a block's output in L2 (<= 512 KiB) across its column strips; halving a 14 x 14 map's
  // 196 rows into 4 x 49 only added a 1-row remainder tile per block and strip.
  auto split = [&]() {
    return threads > 1 ? N * G * ((M + mb - 1) / mb) < 4 * threads : mb * ocg > 512 * 1024;
  };
  while (mb > 24 && split()) mb = (mb + 1) / 2;
  // Few rows in all (small maps: 7 x 7 = 49, 14 x 14 = 196 or 28 x 28 = 784 rows per image) and
  // few row blocks for the threads: split the output channels too, into `nsplit` ranges of whole
  // 16-channel panels, ordered outermost so each thread gets one range over every row block
  // (equal work; each thread gathers the rows it uses itself, a few % of the GEMM; the indirect
  // path builds its row pointers per block, cheaper still). Not on more rows: the threads then
  // write neighbouring bytes of every output row, and the cache lines they share cost more than
  // the split saves (a 1x1 conv with 64 or 144 output channels on 56 x 56 ran slower on 2 threads
  // than on 1).
  int64_t nsplit = 1;
  if (threads > 1 && N * G * M <= 1024 && N * G * ((M + mb - 1) / mb) < 8 * threads && ocg >= 32 * threads) {
    nsplit = threads;
  }
  const int64_t panels = (ocg + 15) / 16;
  if (nsplit == 1 && threads > 1 && (N * G) % threads != 0) {
    // parallel_for hands each thread a contiguous run of ceil(tasks / threads) tasks: make the
    // task count a multiple of the thread count with blocks of equal size (a multiple of 12
    // rows, the microkernel tiles), e.g. 3136 rows on 2 threads: 14 blocks of 228 (split 1596 /
    // 1540 rows) instead of 13 x 240 + 16 (1680 / 1456).
    int64_t blocks = (M + mb - 1) / mb;
    while ((N * G * blocks) % threads != 0) ++blocks;
    const int64_t mb2 = ((M + blocks - 1) / blocks + 11) / 12 * 12;
    // (rounding up to 12 rows can drop a block: 49 rows in 4 blocks of 13 -> 24 + 24 + 1, which
    // parallel_for splits 48 / 1; keep such a split only when the count stays a multiple)
    if (mb2 >= 12 && mb2 < M && (N * G * ((M + mb2 - 1) / mb2)) % threads == 0) mb = mb2;
  }
  const int64_t mblocks = (M + mb - 1) / mb;
  const int64_t tasks = nsplit * N * G * mblocks;
  // The GEMM engine (kernels/gemm: its tiles, zero-point algebra and epilogue) runs every block;
  // conv supplies the A side (im2col rows, the input in place, or the indirect row pointers).
  // Indirect: the tap offsets of the receptive field in the padded input (rows mode: one "tap"
  // of S4 bytes per kernel row).
  std::vector<int64_t> tap_off;
  if (indirect) {
    for (int64_t kd = 0; kd < gp.KD; ++kd)
      for (int64_t kh = 0; kh < gp.KH; ++kh)
        for (int64_t kw = 0; kw < gp.KW; ++kw)
          tap_off.push_back(((kd * gp.DD * gp.H + kh * gp.DH) * gp.W + kw * gp.DW) * gp.C);
  }
  kernels::gemm::QGemmParams qbase;
  qbase.lda = kp;
  qbase.a_zero_point = xzp;
  qbase.b_zero_points_all_zero = !p.any_wzp;
  qbase.kind = kernels::gemm::OutKind::kU8;
  qbase.ldc = OC;
  qbase.out_zero_point = base.y_zp;
  qbase.out_min = base.qmin;
  qbase.out_max = base.qmax;
  qbase.ld_add = OC;
  qbase.add_zp = base.add_zp;
  qbase.add_mult = base.add_mult;
  at::parallel_for(0, tasks, 1, [&](int64_t begin, int64_t end) {
    const bool need_a = !direct && !indirect;
    std::vector<uint8_t> abuf(need_a ? static_cast<size_t>(mb * kp * elem + 64) : 0);
    std::vector<const uint8_t*> rows(indirect ? static_cast<size_t>(mb) : 0);
    for (int64_t t0 = begin; t0 < end; ++t0) {
      const int64_t si = t0 / (N * G * mblocks);  // output channel range (nsplit > 1)
      const int64_t t = t0 % (N * G * mblocks);
      const int64_t p0 = panels * si / nsplit, p1 = panels * (si + 1) / nsplit;
      const int64_t nc0 = p0 * 16, nc1 = std::min(ocg, p1 * 16);
      const int64_t n = t / (G * mblocks);
      const int64_t gi = (t / mblocks) % G;
      const int64_t m0 = (t % mblocks) * mb;
      const int64_t mc = std::min(mb, M - m0);
      // output / residual at row m0, column 0 of the group: the block writes its rows [0, mc)
      // and columns [nc0, nc1)
      const int64_t ooff = n * out_img + m0 * OC + gi * ocg;
      kernels::gemm::QGemmParams q = qbase;
      q.M = mc;
      q.b = indirect && rows_mode ? &rows_b : &wb[gi];
      q.b_zero_points = p.w_zp.data() + gi * ocg;
      q.multipliers = mult.data() + gi * ocg;
      q.bias = bias.data() + gi * ocg;
      q.out = yp + ooff;
      q.add = addp != nullptr ? addp + ooff : nullptr;
      if (indirect) {
        // Row pointers of the output pixels m0, m0 + 1, ... into the padded image, walked
        // incrementally (no divisions per pixel).
        const uint8_t* x0 = xsrc + n * src_img + gi * g.icg;
        int64_t ow = m0 % g.OW, oh = (m0 / g.OW) % g.OH, od = m0 / (g.OW * g.OH);
        for (int64_t i = 0; i < mc; ++i) {
          rows[i] = x0 + (((od * g.SD) * gp.H + oh * g.SH) * gp.W + ow * g.SW) * g.C;
          if (++ow == g.OW) {
            ow = 0;
            if (++oh == g.OH) {
              oh = 0;
              ++od;
            }
          }
        }
        kernels::gemm::IndirectA ia;
        ia.rows = rows.data();
        ia.tap_off = tap_off.data();
        ia.ntaps = static_cast<int64_t>(tap_off.size());
        ia.seg = gp.icg;
        QPLUGIN_ISA_CALL_ON(path, qgemm_block_indirect, q, ia, 0, mc, nc0, nc1);
        continue;
      }
      if (direct) {
        q.a = xp + n * in_img + m0 * g.C;  // rows of C = kp bytes, in place
      } else {
        QPLUGIN_ISA_CALL_ON(path, conv_im2col, xp + n * in_img, g, gi, m0, mc, abuf.data(), kp, xzp);
        if (elem == 2) {
          q.a16 = reinterpret_cast<const int16_t*>(abuf.data());
        } else {
          q.a = abuf.data();
        }
      }
      QPLUGIN_ISA_CALL_ON(path, qgemm_block, q, 0, mc, nc0, nc1);
    }
  });
}

} // namespace cpu
} // namespace qplugin
