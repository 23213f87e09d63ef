// QuantizedCPU adapters for layer_norm / batch_norm2d: check, unwrap, call
// cpu/norm.cpp, wrap.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>

#include "cpu/activation.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

void check_common(const char* op, const char* arg, const at::Tensor& qx, double eps, double output_scale,
                  int64_t output_zero_point) {
  cpu::check_per_tensor_input(op, arg, qx);
  cpu::check_norm_qparams(op, qx.q_scale(), qx.q_zero_point(), eps, output_scale, output_zero_point,
                          qx.scalar_type());
}

at::Tensor layer_norm_q(const at::Tensor& input, at::IntArrayRef normalized_shape,
                        const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias,
                        double eps, double output_scale, int64_t output_zero_point) {
  constexpr const char* op = "layer_norm";
  check_common(op, "input", input, eps, output_scale, output_zero_point);
  const at::Tensor w = weight.has_value() ? *weight : at::Tensor();
  const at::Tensor b = bias.has_value() ? *bias : at::Tensor();
  cpu::check_layer_norm_args(op, "input", input.sizes(), normalized_shape, w, b);
  at::Tensor out = at::_empty_affine_quantized(input.sizes(), input.options(), output_scale, output_zero_point,
                                               kept_format(input));
  cpu::layer_norm_int_out(int_view(input), int_view(out), normalized_shape, w, b, eps, input.q_scale(),
                          input.q_zero_point(), output_scale, output_zero_point);
  return out;
}

at::Tensor batch_norm2d_q(const at::Tensor& qx, const c10::optional<at::Tensor>& weight,
                          const c10::optional<at::Tensor>& bias, const at::Tensor& mean, const at::Tensor& var,
                          double eps, double output_scale, int64_t output_zero_point) {
  constexpr const char* op = "batch_norm2d";
  check_common(op, "qx", qx, eps, output_scale, output_zero_point);
  const at::Tensor w = weight.has_value() ? *weight : at::Tensor();
  const at::Tensor b = bias.has_value() ? *bias : at::Tensor();
  cpu::check_batch_norm_args(op, "qx", qx.sizes(), w, b, mean, var, eps);
  at::Tensor out = at::_empty_affine_quantized(qx.sizes(), qx.options(), output_scale, output_zero_point,
                                               kept_format(qx));
  cpu::batch_norm_int_out(int_view(qx), int_view(out), w, b, mean, var, eps, qx.q_scale(), qx.q_zero_point(),
                          output_scale, output_zero_point);
  return out;
}

} // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("layer_norm", TORCH_FN(layer_norm_q));
  m.impl("batch_norm2d", TORCH_FN(batch_norm2d_q));
}

} // namespace qplugin
