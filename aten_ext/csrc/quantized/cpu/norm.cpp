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
  check_qparams(op, arg, qx);
  check_scale(op, "output_scale", output_scale);
  check_zero_point(op, "output_zero_point", output_zero_point, qx.scalar_type());
  TORCH_CHECK_VALUE(std::isfinite(eps) && eps >= 0, "qplugin::", op,
                    ": eps should be a finite non-negative number, got ", eps);
}

// A float parameter tensor of the given shape (undefined allowed when optional).
void check_param(const char* op, const char* arg, const at::Tensor& t, at::IntArrayRef shape) {
  if (!t.defined()) return;
  TORCH_CHECK(!t.is_quantized() && (t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble),
              "qplugin::", op, ": ", arg, " should be a float32 or float64 tensor, got ",
              t.is_quantized() ? "a quantized tensor of dtype " : "dtype ", t.scalar_type());
  TORCH_CHECK_VALUE(t.sizes() == shape, "qplugin::", op, ": ", arg, " should have shape ", shape,
                    ", got ", t.sizes());
}

at::Tensor layer_norm_q(const at::Tensor& input, at::IntArrayRef normalized_shape,
                        const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias,
                        double eps, double output_scale, int64_t output_zero_point) {
  constexpr const char* op = "layer_norm";
  check_common(op, "input", input, eps, output_scale, output_zero_point);
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK_VALUE(k <= input.dim() && input.sizes().slice(input.dim() - k) == normalized_shape,
                    "qplugin::layer_norm: normalized_shape should match the last dims of input (shape ",
                    input.sizes(), "), got ", normalized_shape);
  const at::Tensor w = weight.has_value() ? *weight : at::Tensor();
  const at::Tensor b = bias.has_value() ? *bias : at::Tensor();
  check_param(op, "weight", w, normalized_shape);
  check_param(op, "bias", b, normalized_shape);
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
  TORCH_CHECK_VALUE(qx.dim() == 4, "qplugin::batch_norm2d: qx should be 4-D [N, C, H, W], got ", qx.dim(),
                    " dims (shape ", qx.sizes(), ")");
  const int64_t C = qx.size(1);
  const at::Tensor w = weight.has_value() ? *weight : at::Tensor();
  const at::Tensor b = bias.has_value() ? *bias : at::Tensor();
  check_param(op, "weight", w, {C});
  check_param(op, "bias", b, {C});
  TORCH_CHECK(mean.defined() && var.defined(), "qplugin::batch_norm2d: mean and var should be defined");
  check_param(op, "mean", mean, {C});
  check_param(op, "var", var, {C});
  const at::Tensor vd = var.to(at::kDouble).contiguous();
  for (int64_t c = 0; c < C; ++c) {
    const double v = vd.const_data_ptr<double>()[c];
    TORCH_CHECK_VALUE(v + eps > 0 && std::isfinite(v), "qplugin::batch_norm2d: var + eps should be positive and "
                      "finite for every channel, got var[", c, "] = ", v, " and eps ", eps);
  }
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
