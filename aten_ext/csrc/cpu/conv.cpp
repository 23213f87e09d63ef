// Convolution glue: shapes, layouts, checks and the problem description; the GEMM driver
// (kernels/gemm/driver.h) does the blocking and threads, depthwise included. Kernels in
// kernels/conv_kernel.*. Design notes: docs/design/conv.md.
#include "cpu/conv.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/conv_kernel.h"
#include "kernels/dispatch.h"
#include "kernels/gemm/driver.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {

kernels::ConvGeom conv_geom(IntArrayRef xs, const ConvWeights& p, const std::vector<int64_t>& ys) {
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
  g.KD = p.KD;
  g.KH = p.KH;
  g.KW = p.KW;
  g.SD = p.SD;
  g.SH = p.SH;
  g.SW = p.SW;
  g.PD = p.PD;
  g.PH = p.PH;
  g.PW = p.PW;
  g.DD = p.DD;
  g.DH = p.DH;
  g.DW = p.DW;
  g.groups = p.groups;
  g.icg = p.ICg;
  g.ocg = p.OC / p.groups;
  return g;
}

namespace {

// Swaps the units of `bits` bits (masked by `mask` in b) between a >> bits and b: one stage of an
// 8 x 8 byte transpose held in eight 64-bit rows.
inline void swap_units(uint64_t& a, uint64_t& b, int bits, uint64_t mask) {
  const uint64_t t = ((a >> bits) ^ b) & mask;
  b ^= t;
  a ^= t << bits;
}

// Positions [s0, s1) of one image: in is [C, S] bytes, out [S, C]. Blocks of 8 channels x 8
// positions go through an 8 x 8 byte transpose in registers; the channels and positions left
// over, one byte at a time.
void transpose_bytes(const uint8_t* in, uint8_t* out, int64_t C, int64_t S, int64_t s0, int64_t s1) {
  const int64_t C8 = C / 8 * 8;
  for (int64_t c0 = 0; c0 < C8; c0 += 8) {
    int64_t s = s0;
    for (; s + 8 <= s1; s += 8) {
      uint64_t r[8];
      for (int k = 0; k < 8; ++k) std::memcpy(&r[k], in + (c0 + k) * S + s, 8);
      for (int k = 0; k < 8; k += 2) swap_units(r[k], r[k + 1], 8, 0x00FF00FF00FF00FFull);
      for (int k : {0, 1, 4, 5}) swap_units(r[k], r[k + 2], 16, 0x0000FFFF0000FFFFull);
      for (int k = 0; k < 4; ++k) swap_units(r[k], r[k + 4], 32, 0x00000000FFFFFFFFull);
      for (int k = 0; k < 8; ++k) std::memcpy(out + (s + k) * C + c0, &r[k], 8);
    }
    for (; s < s1; ++s) {
      for (int64_t c = c0; c < c0 + 8; ++c) out[s * C + c] = in[c * S + s];
    }
  }
  for (int64_t s = s0; s < s1; ++s) {
    for (int64_t c = C8; c < C; ++c) out[s * C + c] = in[c * S + s];
  }
}

// x (N, C, spatial...) dense in the default order, one byte an element, copied to `dst` in the
// channels-last order (each image's [C, S] bytes transposed to [S, C]), kTileS positions a task.
void channels_last_copy(const Tensor& x, uint8_t* dst) {
  constexpr int64_t kTileS = 64;
  const int64_t N = x.size(0), C = x.size(1);
  const int64_t S = N * C == 0 ? 0 : x.numel() / (N * C);
  const auto* src = static_cast<const uint8_t*>(x.const_data_ptr());
  const int64_t tiles = (S + kTileS - 1) / kTileS;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / (kTileS * std::max<int64_t>(C, 1)));
  tensor::parallel_for(0, N * tiles, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / tiles, s0 = (t % tiles) * kTileS;
      transpose_bytes(src + n * C * S, dst + n * S * C, C, S, s0, std::min(S, s0 + kTileS));
    }
  });
}

// This thread's scratch buffer `slot`, at least n bytes.
constexpr int64_t kScratchBytes = int64_t{1} << 18;
uint8_t* scratch(int slot, int64_t n) {
  thread_local std::vector<uint8_t> bufs[2];
  std::vector<uint8_t>& b = bufs[slot];
  if (static_cast<int64_t>(b.size()) < n) b.resize(static_cast<size_t>(n));
  return b.data();
}

}  // namespace

ConvInput conv_channels_last_input(const Tensor& x, int64_t spatial, int slot) {
  QP_ASSERT(tensor::dtype(x) == kByte && (slot == 0 || slot == 1));
  const Tensor x4 = spatial == 1 ? tensor::unsqueeze(x, 2) : x;
  const MemoryFormat fmt = spatial == 1 ? MemoryFormat::ChannelsLast : conv_memory_format(x.dim());
  ConvInput in;
  if (!tensor::is_contiguous(x4, fmt) && x4.is_contiguous()) {
    const int64_t n = x4.numel();
    uint8_t* dst = nullptr;
    if (n <= kScratchBytes) {
      dst = scratch(slot, n);
    } else {
      in.tensor = tensor::empty(x4.sizes(), kByte, fmt);
      dst = tensor::mutable_data<uint8_t>(*in.tensor);
    }
    channels_last_copy(x4, dst);
    in.data = dst;
    return in;
  }
  in.tensor = tensor::contiguous(x4, fmt);
  in.data = tensor::data<uint8_t>(*in.tensor);
  return in;
}

Tensor conv_empty_output(const std::vector<int64_t>& ys, ScalarType dtype) {
  if (ys.size() == 3) {
    const std::vector<int64_t> ys4{ys[0], ys[1], 1, ys[2]};
    return tensor::squeeze(tensor::empty(ys4, dtype, MemoryFormat::ChannelsLast), 2);
  }
  return tensor::empty(ys, dtype, conv_memory_format(static_cast<int64_t>(ys.size())));
}

MemoryFormat conv_memory_format(int64_t dim) {
  return dim == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
}

std::vector<int64_t> conv_output_sizes(const char* op, IntArrayRef xs, const ConvWeights& p) {
  const int64_t sp = p.spatial;
  QP_CHECK_VALUE(static_cast<int64_t>(xs.size()) == sp + 2, "qplugin::", op, ": qx should have ", sp + 2, " dims (N, C",
                 sp == 3 ? ", D" : "", sp >= 2 ? ", H" : "", ", W), got ", xs.size(), " dims ", xs);
  QP_CHECK_VALUE(xs[1] == p.ICg * p.groups, "qplugin::", op, ": qx channels should be ", p.ICg * p.groups,
                 " (weight in_channels ", p.ICg, " * groups ", p.groups, "), got ", xs[1]);
  std::vector<int64_t> ys = {xs[0], p.OC};
  for (int64_t i = 0; i < sp; ++i) {
    const int64_t in = xs[2 + i];
    const int64_t k = p.weight.size(2 + i);
    const int64_t o = (in + 2 * p.padding[i] - p.dilation[i] * (k - 1) - 1) / p.stride[i] + 1;
    const bool ok = in + 2 * p.padding[i] - p.dilation[i] * (k - 1) - 1 >= 0 && o >= 1;
    QP_CHECK_VALUE(ok, "qplugin::", op, ": output size should be >= 1 in every spatial dim, got ", "input ", xs,
                   " with kernel ", p.weight.sizes().slice(2), ", stride ", p.stride, ", padding ", p.padding,
                   ", dilation ", p.dilation);
    ys.push_back(o);
  }
  check_output_size(op, ys, 1);
  return ys;
}

void check_conv_io_qparams(const char* op, double x_scale, int64_t x_zp, double y_scale, int64_t y_zp) {
  check_scale(op, "qx scale", x_scale);
  check_zero_point(op, "qx zero_point", x_zp, kByte);
  check_scale(op, "output_scale", y_scale);
  check_zero_point(op, "output_zero_point", y_zp, kByte);
}

void conv_forward_int(const char* op, const Tensor& x_int, double x_scale, int64_t x_zp, ConvWeights& p, double y_scale,
                      int64_t y_zp, bool relu, const Tensor* add_int, double add_scale, int64_t add_zp, Tensor& y_int) {
  // The kernel path, read once: the packed layout, the im2col element size and every kernel
  // must agree even if another thread switches paths meanwhile (kernels/dispatch.h).
  conv_forward_view(op, x_int, x_scale, x_zp, p, p.packed_view(kernels::active_isa()), y_scale, y_zp, relu, add_int,
                    add_scale, add_zp, y_int);
}

void conv_forward_view(const char* op, const Tensor& x_int, double x_scale, int64_t x_zp, const ConvWeights& p,
                       const ConvPackedView& k, double y_scale, int64_t y_zp, bool relu, const Tensor* add_int,
                       double add_scale, int64_t add_zp, Tensor& y_int) {
  check_conv_io_qparams(op, x_scale, x_zp, y_scale, y_zp);
  const std::vector<int64_t> ys = conv_output_sizes(op, x_int.sizes(), p);
  QP_ASSERT(y_int.sizes() == IntArrayRef(ys));
  if (add_int != nullptr) {
    check_scale(op, "qaccum scale", add_scale);
    check_zero_point(op, "qaccum zero_point", add_zp, kByte);
    QP_CHECK_VALUE(add_int->sizes() == IntArrayRef(ys), "qplugin::", op, ": qaccum should have the output's shape ",
                   IntArrayRef(ys), ", got ", add_int->sizes());
    check_requant_multiplier(op, "output_scale", y_scale, add_scale, "qaccum scale");
  }
  const double w_scale_max = p.w_scale.empty() ? 0.0 : *std::max_element(p.w_scale.begin(), p.w_scale.end());
  check_requant_multiplier(op, "output_scale", y_scale, x_scale * w_scale_max, "qx scale * weight scale");
  if (y_int.numel() == 0) return;

  const kernels::ConvGeom g = conv_geom(x_int.sizes(), p, ys);
  const ConvInput x = conv_channels_last_input(x_int, p.spatial, 0);
  ConvInput add;
  if (add_int != nullptr) add = conv_channels_last_input(*add_int, p.spatial, 1);
  const uint8_t* xp = x.data;
  const uint8_t* addp = add.data;
  uint8_t* yp = tensor::mutable_data<uint8_t>(y_int);
  const int64_t N = ys[0];
  const int64_t OC = p.OC;

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
  const kernels::Isa path = k.isa;  // the path k's layouts were made for

  if (p.depthwise) {
    kernels::gemm::DepthwiseProblem dp;
    dp.isa = path;
    dp.x = xp;
    dp.g = g;
    dp.images = N;
    dp.x_zp = xzp;
    QP_ASSERT(k.dw != nullptr);
    dp.w = k.dw;
    dp.wpk = k.dw_packed;
    dp.ep = base;
    dp.ep.add = addp;
    dp.y = yp;
    kernels::gemm::run_depthwise(dp);
    return;
  }

  // The engine's packed weight of each group (the AVX2 path reads its int16 layout when present).
  QP_ASSERT(static_cast<int64_t>(k.b.size()) == p.groups);
  // How the rows of A are read: in place (1x1, stride 1, no padding, one group), through row
  // pointers into the padded input (paths with qgemm_block_indirect, every weight zero point 0:
  // no row sums), or gathered by im2col.
  kernels::gemm::ConvA ca;
  ca.x = xp;
  ca.g = g;
  ca.images = N;
  ca.elem = QPLUGIN_ISA_CALL_ON(path, conv_a_elem_size);
  ca.kp = p.Kp;
  const int64_t G = p.groups;
  const bool direct = ca.elem == 1 && G == 1 && p.KD * p.KH * p.KW == 1 && p.SD == 1 && p.SH == 1 && p.SW == 1 &&
                      p.PD == 0 && p.PH == 0 && p.PW == 0 && p.Kp == g.C && !p.any_wzp;
  const bool has_ind = !direct && QPLUGIN_ISA_CALL_ON(path, qgemm_has_indirect) && !p.any_wzp;
  // Stem convs (C = 3): each kernel row's KW * C input bytes are contiguous; read them as one
  // "tap" of S4 = round_up(KW * C, 4) bytes against zero-padded weights, rather than im2col.
  const bool rows_mode = conv_reads_rows(p, path);
  // Groups of a shape the path's qgemm_block_groups runs (AVX2 too, which has no other indirect
  // GEMM) read all groups of a row block through one set of row pointers.
  const bool by_groups = !direct && !p.any_wzp && G > 1 && p.ICg % 4 == 0 &&
                         QPLUGIN_ISA_CALL_ON(path, qgemm_has_groups, G, p.ICg, p.OC / G);
  const bool indirect = (has_ind && (p.ICg % 4 == 0 || rows_mode)) || by_groups;
  QP_ASSERT(!rows_mode || k.rows.data != nullptr);
  ca.mode = direct     ? kernels::gemm::ConvAMode::kInPlace
            : indirect ? kernels::gemm::ConvAMode::kIndirect
                       : kernels::gemm::ConvAMode::kIm2col;
  ca.rows_mode = rows_mode;
  ca.s4 = p.S4;
  ca.rows_b = &k.rows;

  // The epilogue: kU8 with the per-channel constants, clamp (relu) and conv2d_add's residual.
  kernels::gemm::Problem pr;
  pr.isa = path;
  pr.conv = &ca;
  pr.b_groups = k.b.data();
  kernels::gemm::QGemmParams& q = pr.p;
  q.a_zero_point = xzp;
  q.b_zero_points = p.w_zp.data();
  q.b_zero_points_all_zero = !p.any_wzp;
  q.multipliers = mult.data();
  q.bias = bias.data();
  q.kind = kernels::gemm::OutKind::kU8;
  q.out = yp;
  q.ldc = OC;
  q.out_zero_point = base.y_zp;
  q.out_min = base.qmin;
  q.out_max = base.qmax;
  q.add = addp;
  q.ld_add = OC;
  q.add_zp = base.add_zp;
  q.add_mult = base.add_mult;
  kernels::gemm::run(pr);
}

}  // namespace cpu
}  // namespace qplugin
