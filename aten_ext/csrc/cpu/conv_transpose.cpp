// Transposed convolution glue: shapes, the GEMM + col2im task loop and threads. Design notes:
// docs/design/conv.md ("Transposed convolution").
//
// Per output row (n, od, oh) and range of output columns [ow0, ow1) (one task, one thread, so
// no two threads add into the same accumulators): for every kernel row (kd, kh) that maps an
// input row (id, ih) onto this output row (od = id * SD - PD + kd * DD, same for h), and every
// group, the GEMM engine computes, for the input columns that reach [ow0, ow1),
//   C[iw][kw * OCg + oc] = sum_ic (x[id][ih][iw][g * ICg + ic] - x_zp) * (w[...][oc][kd][kh][kw] - w_zp[oc])
// (qgemm_block, kS32: exact int32, the engine's zero-point algebra, the weight packed once at
// prepack per (group, kd, kh)), and col2im adds each C[iw][kw * OCg ..] run into the int32
// accumulator of output column iw * SW - PW + kw * DW. Every (input row, kernel row) pair is
// computed once (it maps to exactly one output row); input columns next to a column-range
// boundary are computed by both neighbours. Finished rows are requantized with the engine's step.
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "cpu/conv.h"
#include "kernels/conv_transpose_kernel.h"
#include "kernels/dispatch.h"
#include "kernels/gemm/qgemm.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {

namespace {

// floor(a / b) for b > 0
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

} // namespace

std::vector<int64_t> conv_transpose_output_sizes(const char* op, at::IntArrayRef xs, const ConvPackedParams& p) {
  const int64_t sp = p.spatial;
  TORCH_CHECK_VALUE(static_cast<int64_t>(xs.size()) == sp + 2, "qplugin::", op, ": qx should have ", sp + 2,
                    " dims (N, C", sp == 3 ? ", D" : "", sp >= 2 ? ", H" : "", ", W), got ", xs.size(), " dims ",
                    xs);
  TORCH_CHECK_VALUE(xs[1] == p.ICg * p.groups, "qplugin::", op, ": qx channels should be ", p.ICg * p.groups,
                    " (weight in_channels), got ", xs[1]);
  std::vector<int64_t> ys = {xs[0], p.OC};
  for (int64_t i = 0; i < sp; ++i) {
    const int64_t in = xs[2 + i];
    TORCH_CHECK_VALUE(in >= 1, "qplugin::", op, ": qx spatial dims should be >= 1, got ", xs);
    const int64_t k = p.weight.size(2 + i);
    const int64_t o = (in - 1) * p.stride[i] - 2 * p.padding[i] + p.dilation[i] * (k - 1) + p.output_padding[i] + 1;
    TORCH_CHECK_VALUE(o >= 1, "qplugin::", op, ": output size should be >= 1 in every spatial dim, got input ", xs,
                      " with kernel ", p.weight.sizes().slice(2), ", stride ", at::IntArrayRef(p.stride), ", padding ",
                      at::IntArrayRef(p.padding), ", output_padding ", at::IntArrayRef(p.output_padding),
                      ", dilation ", at::IntArrayRef(p.dilation));
    ys.push_back(o);
  }
  check_output_size(op, ys, 1);
  return ys;
}

void conv_transpose_forward_int(const char* op, const at::Tensor& x_int, double x_scale, int64_t x_zp,
                                const ConvPackedParams& p, double y_scale, int64_t y_zp, at::Tensor& y_int) {
  TORCH_INTERNAL_ASSERT(p.transpose);
  check_conv_io_qparams(op, x_scale, x_zp, y_scale, y_zp);
  const std::vector<int64_t> ys = conv_transpose_output_sizes(op, x_int.sizes(), p);
  TORCH_INTERNAL_ASSERT(y_int.sizes() == at::IntArrayRef(ys));
  const double w_scale_max = *std::max_element(p.w_scale.begin(), p.w_scale.end());
  check_requant_multiplier(op, "output_scale", y_scale, x_scale * w_scale_max, "qx scale * weight scale");
  if (y_int.numel() == 0) return;

  const int64_t sp = p.spatial;
  const at::Tensor x = conv_channels_last_input(x_int, sp);
  const uint8_t* xp = x.data_ptr<uint8_t>();
  uint8_t* yp = y_int.data_ptr<uint8_t>();
  const auto& xs = x_int.sizes();
  const int64_t N = xs[0], C = xs[1];
  const int64_t D = sp == 3 ? xs[2] : 1, H = sp >= 2 ? xs[xs.size() - 2] : 1, W = xs[xs.size() - 1];
  const int64_t OD = sp == 3 ? ys[2] : 1, OH = sp >= 2 ? ys[ys.size() - 2] : 1, OW = ys[ys.size() - 1];
  const int64_t OC = p.OC, G = p.groups, ICg = p.ICg, OCg = OC / G;
  const int64_t KD = p.KD, KH = p.KH, KW = p.KW;
  const int64_t ncols = KW * OCg;

  std::vector<float> mult(OC), bias(OC);
  for (int64_t o = 0; o < OC; ++o) {
    mult[o] = static_cast<float>(x_scale * p.w_scale[o] / y_scale);
    bias[o] = static_cast<float>(static_cast<double>(p.bias_f[o]) / y_scale);
  }
  // The kernel path, read once (the packed layout and every kernel below must agree).
  const kernels::Isa path = kernels::active_isa();
  std::vector<kernels::gemm::PackedB> wb(p.tpacked.size());
  for (size_t i = 0; i < wb.size(); ++i) wb[i] = p.tpacked[i]->view(path == kernels::Isa::kAvx2);
  kernels::gemm::QGemmParams qbase;
  qbase.lda = C;
  qbase.a_zero_point = static_cast<int32_t>(x_zp);
  qbase.b_zero_points_all_zero = !p.any_wzp;
  qbase.kind = kernels::gemm::OutKind::kS32;
  qbase.ldc = ncols;

  // Tasks: output rows x column ranges. A range's accumulators stay within ~256 KiB; ranges are
  // halved (down to 16 columns) until there are 4 tasks per thread.
  const int64_t rows = N * OD * OH;
  const int64_t threads = at::get_num_threads();
  int64_t owc = std::min<int64_t>(OW, std::max<int64_t>(16, (64 * 1024) / OC));
  while (owc > 16 && rows * ((OW + owc - 1) / owc) < 4 * threads) owc = (owc + 1) / 2;
  const int64_t nchunks = (OW + owc - 1) / owc;
  const int64_t tasks = rows * nchunks;
  at::parallel_for(0, tasks, 1, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> acc(static_cast<size_t>(owc * OC));
    std::vector<int32_t> cbuf;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r = t / nchunks;
      const int64_t ow0 = (t % nchunks) * owc, ow1 = std::min(OW, ow0 + owc);
      const int64_t oh = r % OH, od = (r / OH) % OD, n = r / (OH * OD);
      std::fill(acc.begin(), acc.begin() + (ow1 - ow0) * OC, 0);
      // input columns whose taps reach [ow0, ow1): iw * SW in [ow0 + PW - (KW - 1) * DW, ow1 - 1 + PW]
      const int64_t iw0 = std::max<int64_t>(0, floor_div(ow0 + p.PW - (KW - 1) * p.DW + p.SW - 1, p.SW));
      const int64_t iw1 = std::min<int64_t>(W, floor_div(ow1 - 1 + p.PW, p.SW) + 1);
      if (iw0 < iw1) {
        const int64_t m = iw1 - iw0;
        if (static_cast<int64_t>(cbuf.size()) < m * ncols) cbuf.resize(static_cast<size_t>(m * ncols));
        kernels::Col2ImRow cr{m, ncols, iw0, KW, p.SW, p.PW, p.DW, ow0, ow1, OCg, OC};
        for (int64_t kd = 0; kd < KD; ++kd) {
          const int64_t td = od + p.PD - kd * p.DD;
          if (td < 0 || td % p.SD != 0 || td / p.SD >= D) continue;
          const int64_t id = td / p.SD;
          for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t th = oh + p.PH - kh * p.DH;
            if (th < 0 || th % p.SH != 0 || th / p.SH >= H) continue;
            const int64_t ih = th / p.SH;
            const uint8_t* xrow = xp + (((n * D + id) * H + ih) * W + iw0) * C;
            for (int64_t g = 0; g < G; ++g) {
              kernels::gemm::QGemmParams q = qbase;
              q.M = m;
              q.a = xrow + g * ICg;
              q.b = &wb[(g * KD + kd) * KH + kh];
              q.b_zero_points = p.tzp.data() + g * ncols;
              q.out = cbuf.data();
              QPLUGIN_ISA_CALL_ON(path, qgemm_block, q, 0, m, 0, ncols);
              QPLUGIN_ISA_CALL_ON(path, col2im_add_row_s32, cbuf.data(), cr, acc.data() + g * OCg);
            }
          }
        }
      }
      QPLUGIN_ISA_CALL_ON(path, requant_rows_s32, acc.data(), ow1 - ow0, OC, mult.data(), bias.data(),
                          static_cast<int32_t>(y_zp), 0, 255, yp + (r * OW + ow0) * OC);
    }
  });
}

} // namespace cpu
} // namespace qplugin
