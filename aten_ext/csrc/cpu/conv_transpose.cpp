// Transposed convolution glue: shapes, checks and the problem description; the GEMM driver
// (kernels/gemm/driver.h, run_col2im) runs the GEMM + col2im task loop and the threads. Design
// notes: docs/design/conv.md ("Transposed convolution").
#include <algorithm>
#include <vector>

#include "cpu/conv.h"
#include "kernels/dispatch.h"
#include "kernels/gemm/driver.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {

std::vector<int64_t> conv_transpose_output_sizes(const char* op, IntArrayRef xs, const ConvWeights& p) {
  const int64_t sp = p.spatial;
  QP_CHECK_VALUE(static_cast<int64_t>(xs.size()) == sp + 2, "qplugin::", op, ": qx should have ", sp + 2, " dims (N, C",
                 sp == 3 ? ", D" : "", sp >= 2 ? ", H" : "", ", W), got ", xs.size(), " dims ", xs);
  QP_CHECK_VALUE(xs[1] == p.ICg * p.groups, "qplugin::", op, ": qx channels should be ", p.ICg * p.groups,
                 " (weight in_channels), got ", xs[1]);
  std::vector<int64_t> ys = {xs[0], p.OC};
  for (int64_t i = 0; i < sp; ++i) {
    const int64_t in = xs[2 + i];
    QP_CHECK_VALUE(in >= 1, "qplugin::", op, ": qx spatial dims should be >= 1, got ", xs);
    const int64_t k = p.weight.size(2 + i);
    const int64_t o = (in - 1) * p.stride[i] - 2 * p.padding[i] + p.dilation[i] * (k - 1) + p.output_padding[i] + 1;
    QP_CHECK_VALUE(o >= 1, "qplugin::", op, ": output size should be >= 1 in every spatial dim, got input ", xs,
                   " with kernel ", p.weight.sizes().slice(2), ", stride ", IntArrayRef(p.stride), ", padding ",
                   IntArrayRef(p.padding), ", output_padding ", IntArrayRef(p.output_padding), ", dilation ",
                   IntArrayRef(p.dilation));
    ys.push_back(o);
  }
  check_output_size(op, ys, 1);
  return ys;
}

void conv_transpose_forward_int(const char* op, const Tensor& x_int, double x_scale, int64_t x_zp, ConvWeights& p,
                                double y_scale, int64_t y_zp, Tensor& y_int) {
  // The kernel path, read once (the packed layout and every kernel of the driver must agree).
  conv_transpose_forward_view(op, x_int, x_scale, x_zp, p, p.packed_view(kernels::active_isa()), y_scale, y_zp, y_int);
}

void conv_transpose_forward_view(const char* op, const Tensor& x_int, double x_scale, int64_t x_zp,
                                 const ConvWeights& p, const ConvPackedView& k, double y_scale, int64_t y_zp,
                                 Tensor& y_int) {
  QP_ASSERT(p.transpose);
  check_conv_io_qparams(op, x_scale, x_zp, y_scale, y_zp);
  const std::vector<int64_t> ys = conv_transpose_output_sizes(op, x_int.sizes(), p);
  QP_ASSERT(y_int.sizes() == IntArrayRef(ys));
  const double w_scale_max = *std::max_element(p.w_scale.begin(), p.w_scale.end());
  check_requant_multiplier(op, "output_scale", y_scale, x_scale * w_scale_max, "qx scale * weight scale");
  if (y_int.numel() == 0) return;

  const int64_t sp = p.spatial;
  const ConvInput x = conv_channels_last_input(x_int, sp, 0);
  const auto& xs = x_int.sizes();
  const int64_t OC = p.OC;
  const kernels::ConvGeom g = conv_geom(xs, p, ys);

  std::vector<float> mult(OC), bias(OC);
  for (int64_t o = 0; o < OC; ++o) {
    mult[o] = static_cast<float>(x_scale * p.w_scale[o] / y_scale);
    bias[o] = static_cast<float>(static_cast<double>(p.bias_f[o]) / y_scale);
  }
  QP_ASSERT(static_cast<int64_t>(k.b.size()) == p.groups * p.KD * p.KH && k.tzp != nullptr);
  kernels::gemm::Col2ImProblem pr;
  pr.isa = k.isa;
  pr.x = x.data;
  pr.g = g;
  pr.images = xs[0];
  pr.x_zp = static_cast<int32_t>(x_zp);
  pr.b = k.b.data();
  pr.b_zero_points = k.tzp;
  pr.b_zero_points_all_zero = !p.any_wzp;
  pr.mult = mult.data();
  pr.bias = bias.data();
  pr.y_zp = static_cast<int32_t>(y_zp);
  pr.y = tensor::mutable_data<uint8_t>(y_int);
  kernels::gemm::run_col2im(pr);
}

}  // namespace cpu
}  // namespace qplugin
