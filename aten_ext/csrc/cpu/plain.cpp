// The plain-integer tier's ops (qplugin::plain_*, CPU key): uint8 / int8 / int32
// tensors with explicit qparams in, plain tensors out. Each is a thin adapter
// onto the same cpu/ entry point the QuantizedCPU adapter calls, with the same
// argument checks. No quantized-tensor API here (the wall, docs/design.md).
// Fake (meta) kernels: torch_qplugin/_fakes.py.
#include "utils/torch_api.h"

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/activation.h"
#include "cpu/elementwise.h"
#include "cpu/pool.h"
#include "cpu/quantize.h"
#include "cpu/sort.h"
#include "cpu/upsample.h"
#include "utils/checks.h"
#include "utils/layout.h"

namespace qplugin {
namespace cpu {
namespace {

// A per-tensor plain input: integer dtype and sane qparams (arg names the tensor argument).
void check_input(const char* op, const char* arg, const Tensor& x, double scale, int64_t zero_point) {
  check_int_input(op, arg, x);
  check_scale(op, "input scale", scale);
  check_zero_point(op, "input zero_point", zero_point, tensor::dtype(x));
}

// An output like x (its dtype and kept memory format).
Tensor new_like(const Tensor& x) { return tensor::empty(x.sizes(), tensor::dtype(x), kept_format(x)); }

// ---- quantize / dequantize ----
// Ops whose kernels exist for 8-bit data only (the quantized twins take quint8 / qint8).
void check_8bit_input(const char* op, const Tensor& x) {
  QP_CHECK(tensor::dtype(x) == kByte || tensor::dtype(x) == kChar, "qplugin::", op,
           ": x should be a uint8 or int8 tensor, got dtype ", tensor::dtype(x));
}
Tensor p_quantize_per_tensor(const Tensor& self, double scale, int64_t zero_point, ScalarType dtype) {
  return quantize_per_tensor_int("plain_quantize_per_tensor", self, scale, zero_point, dtype);
}
Tensor p_quantize_per_channel(const Tensor& self, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                              ScalarType dtype) {
  return quantize_per_channel_int("plain_quantize_per_channel", self, scales, zero_points, axis, dtype);
}
Tensor p_dequantize_per_tensor(const Tensor& self, double scale, int64_t zero_point) {
  constexpr const char* op = "plain_dequantize_per_tensor";
  check_int_input(op, "self", self);
  check_scale(op, "scale", scale);
  check_zero_point(op, "zero_point", zero_point, tensor::dtype(self));
  return dequantize_per_tensor_int(self, scale, zero_point);
}
Tensor p_dequantize_per_channel(const Tensor& self, const Tensor& scales, const Tensor& zero_points, int64_t axis) {
  constexpr const char* op = "plain_dequantize_per_channel";
  check_int_input(op, "self", self);
  int64_t ax = axis;
  check_per_channel_qparams(op, self, scales, zero_points, &ax);
  return dequantize_per_channel_int(self, scales, zero_points, ax);
}

// ---- elementwise (add_int / mul_int check dtypes and every qparam) ----
template <BinaryKind kKind, bool kRelu>
Tensor p_binary(const Tensor& a, double a_scale, int64_t a_zp, const Tensor& b, double b_scale, int64_t b_zp,
                double scale, int64_t zero_point) {
  const char* op =
      kKind == BinaryKind::kAdd ? (kRelu ? "plain_add_relu" : "plain_add") : (kRelu ? "plain_mul_relu" : "plain_mul");
  check_int_input(op, "a", a);
  check_int_input(op, "b", b);
  const Names n{op, "a", "b", true};
  return kKind == BinaryKind::kAdd ? add_int(n, a, {a_scale, a_zp}, b, {b_scale, b_zp}, {scale, zero_point}, kRelu)
                                   : mul_int(n, a, {a_scale, a_zp}, b, {b_scale, b_zp}, {scale, zero_point}, kRelu);
}

template <BinaryKind kKind, bool kRelu>
Tensor p_scalar(const Tensor& a, double a_scale, int64_t a_zp, double b) {
  const char* op =
      kKind == BinaryKind::kAdd ? (kRelu ? "plain_add_scalar_relu" : "plain_add_scalar") : "plain_mul_scalar";
  check_input(op, "a", a, a_scale, a_zp);
  Tensor out = new_like(a);
  if (kKind == BinaryKind::kAdd) {
    add_scalar_into({op, "a", "", true}, a, {a_scale, a_zp}, b, kRelu, out);
  } else {
    mul_scalar_into({op, "a", "", true}, a, {a_scale, a_zp}, b, kRelu, out);
  }
  return out;
}

// The output qparams of add_scalar / mul_scalar (dtype: the data's uint8 / int8 / int32).
template <BinaryKind kKind>
std::tuple<double, int64_t> p_scalar_qparams(double scale, int64_t zero_point, ScalarType dtype, double b) {
  const char* op = kKind == BinaryKind::kAdd ? "plain_add_scalar_qparams" : "plain_mul_scalar_qparams";
  check_int_dtype(op, "dtype", dtype);
  check_scale(op, "scale", scale);
  check_zero_point(op, "zero_point", zero_point, dtype);
  const QP qo = kKind == BinaryKind::kAdd ? add_scalar_qparams(op, {scale, zero_point}, dtype, b)
                                          : mul_scalar_qparams(op, {scale, zero_point}, dtype, b);
  return {qo.scale, qo.zero_point};
}

Tensor p_matmul(const Tensor& a, double a_scale, int64_t a_zp, const Tensor& b, double b_scale, int64_t b_zp,
                double scale, int64_t zero_point) {
  constexpr const char* op = "plain_matmul";
  check_input(op, "a", a, a_scale, a_zp);
  check_input(op, "b", b, b_scale, b_zp);
  return matmul_int({op, "a", "b", true}, a, {a_scale, a_zp}, b, {b_scale, b_zp}, {scale, zero_point});
}

template <bool kRelu>
Tensor p_cat(TensorListArg xs, FloatListArg scales, IntListArg zero_points, int64_t dim, double scale,
             int64_t zero_point) {
  const char* op = kRelu ? "plain_cat_relu" : "plain_cat";
  QP_CHECK_VALUE(!xs.empty(), "qplugin::", op, ": xs should be a non-empty list of tensors, got an empty list");
  QP_CHECK_VALUE(scales.size() == xs.size() && zero_points.size() == xs.size(), "qplugin::", op,
                 ": scales and zero_points should have one entry per tensor (", xs.size(), "), got ", scales.size(),
                 " and ", zero_points.size());
  std::vector<Tensor> ts(xs.begin(), xs.end());
  std::vector<QP> qps;
  for (size_t i = 0; i < ts.size(); ++i) {
    check_int_input(op, ("xs[" + std::to_string(i) + "]").c_str(), ts[i]);
    qps.push_back({scales[i], zero_points[i]});
  }
  return cat_int({op, "xs", "", true}, ts, qps, dim, {scale, zero_point}, kRelu);
}

// ---- comparators (compare_int checks dtypes and qparams) ----
template <CmpOp kOp>
const char* p_cmp_name() {
  static const std::string name = std::string("plain_") + cmp_name(kOp);
  return name.c_str();
}
template <CmpOp kOp>
Tensor p_cmp(const Tensor& self, double self_scale, int64_t self_zp, const Tensor& other, double other_scale,
             int64_t other_zp) {
  const char* op = p_cmp_name<kOp>();
  check_int_input(op, "self", self);
  check_int_input(op, "other", other);
  return compare_int({op, "self", "other", true}, kOp, self, {self_scale, self_zp}, other, {other_scale, other_zp});
}
template <CmpOp kOp>
Tensor p_cmp_scalar(const Tensor& self, double self_scale, int64_t self_zp, double other) {
  const char* op = p_cmp_name<kOp>();
  check_int_input(op, "self", self);
  return compare_scalar_int({op, "self", "", true}, kOp, self, {self_scale, self_zp}, other);
}

// ---- sorting and reductions (values keep the input's qparams) ----
std::tuple<Tensor, Tensor> p_sort(const Tensor& self, double scale, int64_t zero_point, int64_t dim, bool descending,
                                  std::optional<bool> stable) {
  check_input("plain_sort", "self", self, scale, zero_point);
  (void)stable;  // always stable: the unstable contract is a subset
  return sort_int("plain_sort", self, scale, zero_point, dim, descending, plain_alloc(self));
}
Tensor p_argsort(const Tensor& self, double scale, int64_t zero_point, int64_t dim, bool descending) {
  check_input("plain_argsort", "self", self, scale, zero_point);
  return argsort_int("plain_argsort", self, scale, zero_point, dim, descending);
}
std::tuple<Tensor, Tensor> p_topk(const Tensor& self, double scale, int64_t zero_point, int64_t k, int64_t dim,
                                  bool largest, bool sorted) {
  check_input("plain_topk", "self", self, scale, zero_point);
  return topk_int("plain_topk", self, scale, zero_point, k, dim, largest, sorted, plain_alloc(self));
}
template <bool kMax>
Tensor p_max_all(const Tensor& self, double scale, int64_t zero_point) {
  const char* op = kMax ? "plain_max" : "plain_min";
  check_input(op, "self", self, scale, zero_point);
  return max_all_int(op, self, scale, zero_point, kMax, plain_alloc(self));
}
template <bool kMax>
std::tuple<Tensor, Tensor> p_max_dim(const Tensor& self, double scale, int64_t zero_point, int64_t dim, bool keepdim) {
  const char* op = kMax ? "plain_max" : "plain_min";
  check_input(op, "self", self, scale, zero_point);
  return max_dim_int(op, self, scale, zero_point, dim, keepdim, kMax, plain_alloc(self));
}
template <bool kMax>
Tensor p_argmax(const Tensor& self, double scale, int64_t zero_point, std::optional<int64_t> dim, bool keepdim) {
  const char* op = kMax ? "plain_argmax" : "plain_argmin";
  check_input(op, "self", self, scale, zero_point);
  return argmax_int(op, self, scale, zero_point, dim, keepdim, kMax);
}
Tensor p_mean(const Tensor& self, OptIntListArg dim, bool keepdim) {
  check_int_input("plain_mean", "self", self);
  return mean_int("plain_mean", self, dim, keepdim, plain_alloc(self));
}

// ---- activations ----
Tensor clamp_new(const Tensor& x, std::pair<int64_t, int64_t> b) {
  Tensor out = new_like(x);
  clamp_int_out(x, out, b.first, b.second);
  return out;
}
Tensor p_relu(const Tensor& x, double x_scale, int64_t x_zp) {
  check_input("plain_relu", "x", x, x_scale, x_zp);
  return clamp_new(x, relu_bounds(x_zp, tensor::dtype(x)));
}
Tensor p_relu6(const Tensor& x, double x_scale, int64_t x_zp) {
  check_input("plain_relu6", "x", x, x_scale, x_zp);
  return clamp_new(x, relu6_bounds(x_scale, x_zp, tensor::dtype(x)));
}
Tensor p_clamp(const Tensor& x, double x_scale, int64_t x_zp, std::optional<double> min, std::optional<double> max) {
  check_input("plain_clamp", "x", x, x_scale, x_zp);
  return clamp_new(x, clamp_bounds("plain_clamp", x_scale, x_zp, tensor::dtype(x), min, max));
}
Tensor act_new(const char* op, const Tensor& x, double x_scale, int64_t x_zp, kernels::ActKind kind, double out_scale,
               int64_t out_zp, double p0 = 0, double p1 = 0, double p2 = 0) {
  check_int_input(op, "x", x);
  check_act_qparams(op, x_scale, x_zp, out_scale, out_zp, tensor::dtype(x));
  Tensor out = new_like(x);
  activation_int_out(x, out, act_spec(kind, x_scale, x_zp, out_scale, out_zp, p0, p1, p2));
  return out;
}
Tensor p_leaky_relu(const Tensor& x, double x_scale, int64_t x_zp, double negative_slope, double output_scale,
                    int64_t output_zero_point) {
  constexpr const char* op = "plain_leaky_relu";
  return act_new(op, x, x_scale, x_zp, kernels::ActKind::kLeakyRelu, output_scale, output_zero_point,
                 finite_scalar(op, "negative_slope", negative_slope));
}
template <kernels::ActKind kKind>
Tensor p_act(const Tensor& x, double x_scale, int64_t x_zp, double output_scale, int64_t output_zero_point) {
  const char* op = kKind == kernels::ActKind::kHardswish     ? "plain_hardswish"
                   : kKind == kernels::ActKind::kHardsigmoid ? "plain_hardsigmoid"
                                                             : "plain_sigmoid";
  return act_new(op, x, x_scale, x_zp, kKind, output_scale, output_zero_point);
}
Tensor p_elu(const Tensor& x, double x_scale, int64_t x_zp, double output_scale, int64_t output_zero_point,
             double alpha, double scale, double input_scale) {
  constexpr const char* op = "plain_elu";
  return act_new(op, x, x_scale, x_zp, kernels::ActKind::kElu, output_scale, output_zero_point,
                 finite_scalar(op, "alpha", alpha), finite_scalar(op, "scale", scale),
                 finite_scalar(op, "input_scale", input_scale));
}

// ---- softmax and normalization ----
Tensor p_softmax(const Tensor& x, double x_scale, int64_t x_zp, int64_t dim, double output_scale,
                 int64_t output_zero_point) {
  constexpr const char* op = "plain_softmax";
  check_int_input(op, "x", x);
  check_act_qparams(op, x_scale, x_zp, output_scale, output_zero_point, tensor::dtype(x));
  const int64_t d = check_dim(op, "dim", dim, x.dim());
  Tensor out = new_like(x);
  softmax_int_out(x, out, d, x_scale, x_zp, output_scale, output_zero_point);
  return out;
}
Tensor p_layer_norm(const Tensor& x, double x_scale, int64_t x_zp, IntListArg normalized_shape,
                    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, double eps,
                    double output_scale, int64_t output_zero_point) {
  constexpr const char* op = "plain_layer_norm";
  check_int_input(op, "x", x);
  check_norm_qparams(op, x_scale, x_zp, eps, output_scale, output_zero_point, tensor::dtype(x));
  const Tensor w = weight.has_value() ? *weight : Tensor();
  const Tensor b = bias.has_value() ? *bias : Tensor();
  check_layer_norm_args(op, "x", x.sizes(), normalized_shape, w, b);
  Tensor out = new_like(x);
  layer_norm_int_out(x, out, normalized_shape, w, b, eps, x_scale, x_zp, output_scale, output_zero_point);
  return out;
}

// batch_norm2d_relu / batch_norm3d(_relu) (batch_norm2d above keeps its own name in messages)
template <int64_t kDims, bool kRelu>
Tensor p_batch_norm(const Tensor& x, double x_scale, int64_t x_zp, const std::optional<Tensor>& weight,
                    const std::optional<Tensor>& bias, const Tensor& mean, const Tensor& var, double eps,
                    double output_scale, int64_t output_zero_point) {
  const char* op = kDims == 4 ? (kRelu ? "plain_batch_norm2d_relu" : "plain_batch_norm2d")
                              : (kRelu ? "plain_batch_norm3d_relu" : "plain_batch_norm3d");
  check_int_input(op, "x", x);
  check_norm_qparams(op, x_scale, x_zp, eps, output_scale, output_zero_point, tensor::dtype(x));
  const Tensor w = weight.has_value() ? *weight : Tensor();
  const Tensor b = bias.has_value() ? *bias : Tensor();
  check_batch_norm_args(op, "x", x.sizes(), kDims, w, b, mean, var, eps);
  Tensor out = new_like(x);
  batch_norm_int_out(op, x, out, w, b, mean, var, eps, x_scale, x_zp, output_scale, output_zero_point, kRelu);
  return out;
}
Tensor group_norm_new(const char* op, const Tensor& x, double x_scale, int64_t x_zp, std::optional<int64_t> num_groups,
                      const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, double eps,
                      double output_scale, int64_t output_zero_point) {
  check_int_input(op, "x", x);
  check_norm_qparams(op, x_scale, x_zp, eps, output_scale, output_zero_point, tensor::dtype(x));
  const Tensor w = weight.has_value() ? *weight : Tensor();
  const Tensor b = bias.has_value() ? *bias : Tensor();
  const int64_t groups = check_group_norm_args(op, "x", x.sizes(), num_groups, w, b);
  Tensor out = new_like(x);
  if (x.size(1) == 0) return out;
  group_norm_int_out(x, out, groups, w, b, eps, x_scale, x_zp, output_scale, output_zero_point);
  return out;
}
Tensor p_group_norm(const Tensor& x, double x_scale, int64_t x_zp, int64_t num_groups,
                    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, double eps,
                    double output_scale, int64_t output_zero_point) {
  return group_norm_new("plain_group_norm", x, x_scale, x_zp, num_groups, weight, bias, eps, output_scale,
                        output_zero_point);
}
Tensor p_instance_norm(const Tensor& x, double x_scale, int64_t x_zp, const std::optional<Tensor>& weight,
                       const std::optional<Tensor>& bias, double eps, double output_scale, int64_t output_zero_point) {
  return group_norm_new("plain_instance_norm", x, x_scale, x_zp, std::nullopt, weight, bias, eps, output_scale,
                        output_zero_point);
}
Tensor p_prelu(const Tensor& x, double x_scale, int64_t x_zp, const Tensor& weight, double output_scale,
               int64_t output_zero_point) {
  constexpr const char* op = "plain_prelu";
  check_8bit_input(op, x);
  check_norm_qparams(op, x_scale, x_zp, 0.0, output_scale, output_zero_point, tensor::dtype(x));
  QP_CHECK(is_floating_dtype(tensor::dtype(weight)), "qplugin::", op, ": weight should be a float tensor, got dtype ",
           tensor::dtype(weight));
  const std::vector<double> slopes = prelu_slopes(op, "x", x.sizes(), weight);
  Tensor out = new_like(x);
  prelu_int_out(op, x, out, slopes, x_scale, x_zp, output_scale, output_zero_point);
  return out;
}
Tensor p_celu(const Tensor& x, double x_scale, int64_t x_zp, double output_scale, int64_t output_zero_point,
              double alpha) {
  constexpr const char* op = "plain_celu";
  const double a = finite_scalar(op, "alpha", alpha);
  QP_CHECK_VALUE(a != 0, "qplugin::plain_celu: alpha should be non-zero, got 0");
  return act_new(op, x, x_scale, x_zp, kernels::ActKind::kCelu, output_scale, output_zero_point, a);
}
// Keeps x's qparams: x where x > threshold, else value (quantized with x's qparams).
Tensor p_threshold(const Tensor& x, double x_scale, int64_t x_zp, double threshold, double value) {
  constexpr const char* op = "plain_threshold";
  return act_new(op, x, x_scale, x_zp, kernels::ActKind::kThreshold, x_scale, x_zp,
                 finite_scalar(op, "threshold", threshold), finite_scalar(op, "value", value));
}

// ---- pooling and upsampling (integer domain: no scale needed) ----
Tensor pool_out(const Tensor& x, const std::vector<int64_t>& sizes) {
  return tensor::empty(sizes, tensor::dtype(x), pool_format(x));
}
Tensor p_max_pool2d(const Tensor& x, IntListArg kernel_size, IntListArg stride, IntListArg padding, IntListArg dilation,
                    bool ceil_mode) {
  constexpr const char* op = "plain_max_pool2d";
  check_int_input(op, "x", x);
  check_pool_input_rank(op, "x", x);
  const auto w = check_pool2d_args(op, x.sizes(), kernel_size, stride, padding, dilation, ceil_mode);
  Tensor out = pool_out(x, pool2d_output_sizes(op, x.sizes(), w));
  max_pool2d_int_out(x, w, out);
  return out;
}
Tensor p_avg_pool2d(const Tensor& x, int64_t x_zp, IntListArg kernel_size, IntListArg stride, IntListArg padding,
                    bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  constexpr const char* op = "plain_avg_pool2d";
  check_int_input(op, "x", x);
  check_zero_point(op, "x_zero_point", x_zp, tensor::dtype(x));
  check_pool_input_rank(op, "x", x);
  const auto w = check_pool2d_args(op, x.sizes(), kernel_size, stride, padding, {}, ceil_mode);
  check_divisor_override(op, divisor_override);
  Tensor out = pool_out(x, pool2d_output_sizes(op, x.sizes(), w));
  avg_pool2d_int_out(x, x_zp, w, count_include_pad, divisor_override, out);
  return out;
}
Tensor p_adaptive_avg_pool2d(const Tensor& x, IntListArg output_size) {
  constexpr const char* op = "plain_adaptive_avg_pool2d";
  check_int_input(op, "x", x);
  check_pool_input_rank(op, "x", x);
  Tensor out = pool_out(x, adaptive_output_sizes(op, x.sizes(), output_size));
  adaptive_avg_pool2d_int_out(x, out);
  return out;
}
Tensor pool3d_out(const Tensor& x, const std::vector<int64_t>& sizes) {
  return tensor::empty(sizes, tensor::dtype(x), pool3d_format(x));
}
Tensor p_avg_pool3d(const Tensor& x, int64_t x_zp, IntListArg kernel_size, IntListArg stride, IntListArg padding,
                    bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  constexpr const char* op = "plain_avg_pool3d";
  check_int_input(op, "x", x);
  check_zero_point(op, "x_zero_point", x_zp, tensor::dtype(x));
  check_pool3d_input_rank(op, "x", x);
  const auto w = check_pool3d_args(op, kernel_size, stride, padding, ceil_mode);
  check_divisor_override(op, divisor_override);
  Tensor out = pool3d_out(x, pool3d_output_sizes(op, x.sizes(), w));
  avg_pool3d_int_out(x, x_zp, w, count_include_pad, divisor_override, out);
  return out;
}
Tensor p_adaptive_avg_pool3d(const Tensor& x, IntListArg output_size) {
  constexpr const char* op = "plain_adaptive_avg_pool3d";
  check_int_input(op, "x", x);
  check_pool3d_input_rank(op, "x", x);
  Tensor out = pool3d_out(x, adaptive3d_output_sizes(op, x.sizes(), output_size));
  adaptive_avg_pool3d_int_out(x, out);
  return out;
}
Tensor p_upsample_nearest2d(const Tensor& x, IntListArg output_size) {
  constexpr const char* op = "plain_upsample_nearest2d";
  check_int_input(op, "x", x);
  Tensor out = pool_out(x, upsample_nearest2d_output_sizes(op, x.sizes(), output_size));
  upsample_nearest2d_int_out(x, out);
  return out;
}
Tensor p_upsample_bilinear2d(const Tensor& x, IntListArg output_size, bool align_corners,
                             std::optional<double> scales_h, std::optional<double> scales_w) {
  constexpr const char* op = "plain_upsample_bilinear2d";
  check_8bit_input(op, x);
  for (const auto& sc : {scales_h, scales_w}) {
    QP_CHECK_VALUE(!sc.has_value() || (std::isfinite(*sc) && *sc > 0), "qplugin::", op,
                   ": scales_h / scales_w should be positive finite numbers or None, got ", *sc);
  }
  Tensor out = pool_out(x, upsample_nearest2d_output_sizes(op, x.sizes(), output_size));
  upsample_bilinear2d_int_out(x, out, align_corners, scales_h, scales_w);
  return out;
}

}  // namespace

QPLUGIN_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("plain_quantize_per_tensor", QPLUGIN_FN(&p_quantize_per_tensor));
  m.impl("plain_quantize_per_channel", QPLUGIN_FN(&p_quantize_per_channel));
  m.impl("plain_dequantize_per_tensor", QPLUGIN_FN(&p_dequantize_per_tensor));
  m.impl("plain_dequantize_per_channel", QPLUGIN_FN(&p_dequantize_per_channel));
  m.impl("plain_add", QPLUGIN_FN((&p_binary<BinaryKind::kAdd, false>)));
  m.impl("plain_add_relu", QPLUGIN_FN((&p_binary<BinaryKind::kAdd, true>)));
  m.impl("plain_mul", QPLUGIN_FN((&p_binary<BinaryKind::kMul, false>)));
  m.impl("plain_mul_relu", QPLUGIN_FN((&p_binary<BinaryKind::kMul, true>)));
  m.impl("plain_add_scalar", QPLUGIN_FN((&p_scalar<BinaryKind::kAdd, false>)));
  m.impl("plain_add_scalar_relu", QPLUGIN_FN((&p_scalar<BinaryKind::kAdd, true>)));
  m.impl("plain_mul_scalar", QPLUGIN_FN((&p_scalar<BinaryKind::kMul, false>)));
  m.impl("plain_matmul", QPLUGIN_FN(&p_matmul));
  m.impl("plain_cat", QPLUGIN_FN((&p_cat<false>)));
  m.impl("plain_cat_relu", QPLUGIN_FN((&p_cat<true>)));
  m.impl("plain_eq", QPLUGIN_FN((&p_cmp<CmpOp::kEq>)));
  m.impl("plain_ne", QPLUGIN_FN((&p_cmp<CmpOp::kNe>)));
  m.impl("plain_ge", QPLUGIN_FN((&p_cmp<CmpOp::kGe>)));
  m.impl("plain_le", QPLUGIN_FN((&p_cmp<CmpOp::kLe>)));
  m.impl("plain_gt", QPLUGIN_FN((&p_cmp<CmpOp::kGt>)));
  m.impl("plain_lt", QPLUGIN_FN((&p_cmp<CmpOp::kLt>)));
  m.impl("plain_eq.Scalar", QPLUGIN_FN((&p_cmp_scalar<CmpOp::kEq>)));
  m.impl("plain_ne.Scalar", QPLUGIN_FN((&p_cmp_scalar<CmpOp::kNe>)));
  m.impl("plain_ge.Scalar", QPLUGIN_FN((&p_cmp_scalar<CmpOp::kGe>)));
  m.impl("plain_le.Scalar", QPLUGIN_FN((&p_cmp_scalar<CmpOp::kLe>)));
  m.impl("plain_gt.Scalar", QPLUGIN_FN((&p_cmp_scalar<CmpOp::kGt>)));
  m.impl("plain_lt.Scalar", QPLUGIN_FN((&p_cmp_scalar<CmpOp::kLt>)));
  m.impl("plain_sort", QPLUGIN_FN(&p_sort));
  m.impl("plain_argsort", QPLUGIN_FN(&p_argsort));
  m.impl("plain_topk", QPLUGIN_FN(&p_topk));
  m.impl("plain_max", QPLUGIN_FN((&p_max_all<true>)));
  m.impl("plain_min", QPLUGIN_FN((&p_max_all<false>)));
  m.impl("plain_max.dim", QPLUGIN_FN((&p_max_dim<true>)));
  m.impl("plain_min.dim", QPLUGIN_FN((&p_max_dim<false>)));
  m.impl("plain_argmax", QPLUGIN_FN((&p_argmax<true>)));
  m.impl("plain_argmin", QPLUGIN_FN((&p_argmax<false>)));
  m.impl("plain_mean", QPLUGIN_FN(&p_mean));
  m.impl("plain_relu", QPLUGIN_FN(&p_relu));
  m.impl("plain_relu6", QPLUGIN_FN(&p_relu6));
  m.impl("plain_clamp", QPLUGIN_FN(&p_clamp));
  m.impl("plain_leaky_relu", QPLUGIN_FN(&p_leaky_relu));
  m.impl("plain_hardswish", QPLUGIN_FN((&p_act<kernels::ActKind::kHardswish>)));
  m.impl("plain_hardsigmoid", QPLUGIN_FN((&p_act<kernels::ActKind::kHardsigmoid>)));
  m.impl("plain_sigmoid", QPLUGIN_FN((&p_act<kernels::ActKind::kSigmoid>)));
  m.impl("plain_elu", QPLUGIN_FN(&p_elu));
  m.impl("plain_softmax", QPLUGIN_FN(&p_softmax));
  m.impl("plain_layer_norm", QPLUGIN_FN(&p_layer_norm));
  m.impl("plain_batch_norm2d", QPLUGIN_FN((&p_batch_norm<4, false>)));
  m.impl("plain_max_pool2d", QPLUGIN_FN(&p_max_pool2d));
  m.impl("plain_avg_pool2d", QPLUGIN_FN(&p_avg_pool2d));
  m.impl("plain_adaptive_avg_pool2d", QPLUGIN_FN(&p_adaptive_avg_pool2d));
  m.impl("plain_avg_pool3d", QPLUGIN_FN(&p_avg_pool3d));
  m.impl("plain_adaptive_avg_pool3d", QPLUGIN_FN(&p_adaptive_avg_pool3d));
  m.impl("plain_upsample_nearest2d", QPLUGIN_FN(&p_upsample_nearest2d));
  m.impl("plain_upsample_bilinear2d", QPLUGIN_FN(&p_upsample_bilinear2d));
  m.impl("plain_batch_norm2d_relu", QPLUGIN_FN((&p_batch_norm<4, true>)));
  m.impl("plain_batch_norm3d", QPLUGIN_FN((&p_batch_norm<5, false>)));
  m.impl("plain_batch_norm3d_relu", QPLUGIN_FN((&p_batch_norm<5, true>)));
  m.impl("plain_group_norm", QPLUGIN_FN(&p_group_norm));
  m.impl("plain_instance_norm", QPLUGIN_FN(&p_instance_norm));
  m.impl("plain_prelu", QPLUGIN_FN(&p_prelu));
  m.impl("plain_celu", QPLUGIN_FN(&p_celu));
  m.impl("plain_threshold", QPLUGIN_FN(&p_threshold));
}

// An empty list (or no tensor argument) carries no dispatch key; the dispatcher then takes this entry.
QPLUGIN_LIBRARY_IMPL(qplugin, CompositeExplicitAutograd, m) {
  m.impl("plain_add_scalar_qparams", QPLUGIN_FN((&p_scalar_qparams<BinaryKind::kAdd>)));
  m.impl("plain_mul_scalar_qparams", QPLUGIN_FN((&p_scalar_qparams<BinaryKind::kMul>)));
  m.impl("plain_cat", QPLUGIN_FN((&p_cat<false>)));
  m.impl("plain_cat_relu", QPLUGIN_FN((&p_cat<true>)));
}

}  // namespace cpu
}  // namespace qplugin
