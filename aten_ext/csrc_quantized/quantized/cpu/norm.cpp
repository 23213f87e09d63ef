// QuantizedCPU adapters for layer_norm / group_norm / instance_norm /
// batch_norm2d / 3d (+ relu): check, unwrap, call
// cpu/norm.cpp, wrap.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <string>
#include <vector>

#include "cpu/activation.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

void check_common(const char* op, const char* arg, const at::Tensor& qx, double eps, double output_scale,
                  int64_t output_zero_point) {
  check_per_tensor_input(op, arg, qx);
  check_qparams(op, arg, qx);
  cpu::check_norm_qparams(op, qx.q_scale(), qx.q_zero_point(), eps, output_scale, output_zero_point,
                          underlying_dtype(qx.scalar_type()));
}

at::Tensor layer_norm_q(const at::Tensor& input, at::IntArrayRef normalized_shape,
                        const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias, double eps,
                        double output_scale, int64_t output_zero_point) {
  constexpr const char* op = "layer_norm";
  check_common(op, "input", input, eps, output_scale, output_zero_point);
  const at::Tensor w = weight.has_value() ? *weight : at::Tensor();
  const at::Tensor b = bias.has_value() ? *bias : at::Tensor();
  cpu::check_layer_norm_args(op, "input", input.sizes(), normalized_shape, w, b);
  at::Tensor out =
      at::_empty_affine_quantized(input.sizes(), input.options(), output_scale, output_zero_point, kept_format(input));
  cpu::layer_norm_int_out(int_view(input), int_view(out), normalized_shape, w, b, eps, input.q_scale(),
                          input.q_zero_point(), output_scale, output_zero_point);
  return out;
}

// batch_norm{2,3}d{,_relu}: kDims-D input [N, C, ...].
template <const char* kOp, int64_t kDims, bool kRelu>
at::Tensor batch_norm_q(const at::Tensor& qx, const c10::optional<at::Tensor>& weight,
                        const c10::optional<at::Tensor>& bias, const at::Tensor& mean, const at::Tensor& var,
                        double eps, double output_scale, int64_t output_zero_point) {
  constexpr const char* op = kOp;
  check_common(op, "qx", qx, eps, output_scale, output_zero_point);
  const at::Tensor w = weight.has_value() ? *weight : at::Tensor();
  const at::Tensor b = bias.has_value() ? *bias : at::Tensor();
  cpu::check_batch_norm_args(op, "qx", qx.sizes(), kDims, w, b, mean, var, eps);
  at::Tensor out =
      at::_empty_affine_quantized(qx.sizes(), qx.options(), output_scale, output_zero_point, kept_format(qx));
  cpu::batch_norm_int_out(op, int_view(qx), int_view(out), w, b, mean, var, eps, qx.q_scale(), qx.q_zero_point(),
                          output_scale, output_zero_point, kRelu);
  return out;
}
constexpr char kBatchNorm2d[] = "batch_norm2d";
constexpr char kBatchNorm3d[] = "batch_norm3d";
constexpr char kBatchNorm2dRelu[] = "batch_norm2d_relu";
constexpr char kBatchNorm3dRelu[] = "batch_norm3d_relu";

// group_norm / instance_norm (groups = C): input [N, C, ...].
at::Tensor group_norm_common(const char* op, const at::Tensor& input, c10::optional<int64_t> num_groups,
                             const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias, double eps,
                             double output_scale, int64_t output_zero_point) {
  check_common(op, "input", input, eps, output_scale, output_zero_point);
  const at::Tensor w = weight.has_value() ? *weight : at::Tensor();
  const at::Tensor b = bias.has_value() ? *bias : at::Tensor();
  const int64_t groups = cpu::check_group_norm_args(op, "input", input.sizes(), num_groups, w, b);
  at::Tensor out =
      at::_empty_affine_quantized(input.sizes(), input.options(), output_scale, output_zero_point, kept_format(input));
  if (input.size(1) == 0) return out;
  cpu::group_norm_int_out(int_view(input), int_view(out), groups, w, b, eps, input.q_scale(), input.q_zero_point(),
                          output_scale, output_zero_point);
  return out;
}

at::Tensor group_norm_q(const at::Tensor& input, int64_t num_groups, const c10::optional<at::Tensor>& weight,
                        const c10::optional<at::Tensor>& bias, double eps, double output_scale,
                        int64_t output_zero_point) {
  return group_norm_common("group_norm", input, num_groups, weight, bias, eps, output_scale, output_zero_point);
}

at::Tensor instance_norm_q(const at::Tensor& input, const c10::optional<at::Tensor>& weight,
                           const c10::optional<at::Tensor>& bias, double eps, double output_scale,
                           int64_t output_zero_point) {
  return group_norm_common("instance_norm", input, c10::nullopt, weight, bias, eps, output_scale, output_zero_point);
}

// prelu with torch's quantized::prelu arguments: weight a quantized (per-tensor) or float tensor of
// 1 or C = qx.size(1) slopes.
at::Tensor prelu_q(const at::Tensor& qx, const at::Tensor& weight, double output_scale, int64_t output_zero_point) {
  constexpr const char* op = "prelu";
  check_common(op, "qx", qx, 0.0, output_scale, output_zero_point);
  TORCH_CHECK(qx.scalar_type() == at::kQUInt8 || qx.scalar_type() == at::kQInt8,
              "qplugin::prelu: qx should be "
              "quint8 or qint8, got ",
              qx.scalar_type());
  TORCH_CHECK(weight.defined() && (weight.is_quantized() ? weight.qscheme() == at::kPerTensorAffine
                                                         : at::isFloatingType(weight.scalar_type())),
              "qplugin::prelu: weight should be a per-tensor quantized or float tensor, got ",
              weight.is_quantized() ? "qscheme " + std::string(toString(weight.qscheme()))
                                    : "dtype " + std::string(toString(weight.scalar_type())));
  if (weight.is_quantized()) check_qparams(op, "weight", weight);
  const std::vector<double> slopes =
      cpu::prelu_slopes(op, "qx", qx.sizes(), weight.is_quantized() ? weight.dequantize() : weight);
  at::Tensor out =
      at::_empty_affine_quantized(qx.sizes(), qx.options(), output_scale, output_zero_point, kept_format(qx));
  cpu::prelu_int_out(op, int_view(qx), int_view(out), slopes, qx.q_scale(), qx.q_zero_point(), output_scale,
                     output_zero_point);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("layer_norm", TORCH_FN(layer_norm_q));
  m.impl("batch_norm2d", TORCH_FN((batch_norm_q<kBatchNorm2d, 4, false>)));
  m.impl("batch_norm3d", TORCH_FN((batch_norm_q<kBatchNorm3d, 5, false>)));
  m.impl("batch_norm2d_relu", TORCH_FN((batch_norm_q<kBatchNorm2dRelu, 4, true>)));
  m.impl("batch_norm3d_relu", TORCH_FN((batch_norm_q<kBatchNorm3dRelu, 5, true>)));
  m.impl("group_norm", TORCH_FN(group_norm_q));
  m.impl("instance_norm", TORCH_FN(instance_norm_q));
  m.impl("prelu", TORCH_FN(prelu_q));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

at::Tensor layer_norm_cpu_error(const at::Tensor& input, at::IntArrayRef, const c10::optional<at::Tensor>&,
                                const c10::optional<at::Tensor>&, double, double, int64_t) {
  refuse_non_quantized("layer_norm", "input", input);
  return input;
}
template <const char* kOp>
at::Tensor batch_norm_cpu_error(const at::Tensor& qx, const c10::optional<at::Tensor>&,
                                const c10::optional<at::Tensor>&, const at::Tensor&, const at::Tensor&, double, double,
                                int64_t) {
  refuse_non_quantized(kOp, "qx", qx);
  return qx;
}
at::Tensor prelu_cpu_error(const at::Tensor& qx, const at::Tensor&, double, int64_t) {
  refuse_non_quantized("prelu", "qx", qx);
  return qx;
}
at::Tensor group_norm_cpu_error(const at::Tensor& input, int64_t, const c10::optional<at::Tensor>&,
                                const c10::optional<at::Tensor>&, double, double, int64_t) {
  refuse_non_quantized("group_norm", "input", input);
  return input;
}
at::Tensor instance_norm_cpu_error(const at::Tensor& input, const c10::optional<at::Tensor>&,
                                   const c10::optional<at::Tensor>&, double, double, int64_t) {
  refuse_non_quantized("instance_norm", "input", input);
  return input;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("layer_norm", TORCH_FN(layer_norm_cpu_error));
  m.impl("batch_norm2d", TORCH_FN(batch_norm_cpu_error<kBatchNorm2d>));
  m.impl("batch_norm3d", TORCH_FN(batch_norm_cpu_error<kBatchNorm3d>));
  m.impl("batch_norm2d_relu", TORCH_FN(batch_norm_cpu_error<kBatchNorm2dRelu>));
  m.impl("batch_norm3d_relu", TORCH_FN(batch_norm_cpu_error<kBatchNorm3dRelu>));
  m.impl("group_norm", TORCH_FN(group_norm_cpu_error));
  m.impl("instance_norm", TORCH_FN(instance_norm_cpu_error));
  m.impl("prelu", TORCH_FN(prelu_cpu_error));
}

}  // namespace qplugin
