// QuantizedCPU adapters for the activations: unwrap the quantized tensor into
// plain-integer data + qparams, call the CPU glue (cpu/activation.cpp), wrap.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>

#include "cpu/activation.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

using kernels::ActKind;
using kernels::ActSpec;

// Input checks shared by every activation: per-tensor quantized, sane qparams.
void check_input(const char* op, const char* arg, const at::Tensor& qx) {
  cpu::check_per_tensor_input(op, arg, qx);
  check_qparams(op, arg, qx);
}

void check_output_qparams(const char* op, const at::Tensor& qx, double scale, int64_t zp) {
  check_scale(op, "output_scale", scale);
  check_zero_point(op, "output_zero_point", zp, qx.scalar_type());
}

at::Tensor new_output(const at::Tensor& qx, double scale, int64_t zp) {
  return at::_empty_affine_quantized(qx.sizes(), qx.options(), scale, zp, kept_format(qx));
}

double finite_scalar(const char* op, const char* arg, const at::Scalar& s) {
  const double v = s.toDouble();
  TORCH_CHECK_VALUE(std::isfinite(v), "qplugin::", op, ": ", arg, " should be a finite number, got ", v);
  return v;
}

// Integer clamp, into a new tensor or (inplace) into qx.
at::Tensor clamp_to(const at::Tensor& qx, int64_t lo, int64_t hi, bool inplace) {
  const at::MemoryFormat fmt = kept_format(qx);
  if (qx.is_contiguous(fmt)) {
    // Dense input (the common case): raw pointers, no integer views.
    at::Tensor out = inplace ? qx : at::_empty_affine_quantized(qx.sizes(), qx.options(), qx.q_scale(),
                                                                 qx.q_zero_point(), fmt);
    cpu::clamp_raw(qx.const_data_ptr(), out.data_ptr(), qx.numel(), qx.element_size(),
                   qx.scalar_type() == at::kQInt8, lo, hi);
    return out;
  }
  if (inplace && qx.is_contiguous(kept_format(qx))) {
    const at::Tensor d = int_view(qx);
    cpu::clamp_int_out(d, d, lo, hi);
    return qx;
  }
  at::Tensor out = new_output(qx, qx.q_scale(), qx.q_zero_point());
  cpu::clamp_int_out(int_view(qx), int_view(out), lo, hi);
  if (inplace) {
    int_view(qx).copy_(int_view(out));
    return qx;
  }
  return out;
}

at::Tensor activation(const at::Tensor& qx, ActSpec spec, bool inplace = false) {
  spec.in_scale = static_cast<float>(qx.q_scale());
  spec.in_zp = static_cast<int32_t>(qx.q_zero_point());
  if (inplace && qx.is_contiguous(kept_format(qx))) {
    const at::Tensor d = int_view(qx);
    cpu::activation_int_out(d, d, spec);
    return qx;
  }
  at::Tensor out = new_output(qx, spec.out_scale, spec.out_zp);
  cpu::activation_int_out(int_view(qx), int_view(out), spec);
  if (inplace) {
    int_view(qx).copy_(int_view(out));
    return qx;
  }
  return out;
}

ActSpec spec_of(ActKind kind, double out_scale, int64_t out_zp, double p0 = 0, double p1 = 0, double p2 = 0) {
  return ActSpec{kind, p0, p1, p2, 0.0f, 0, out_scale, static_cast<int32_t>(out_zp)};
}

at::Tensor relu_q(const at::Tensor& qx) {
  check_input("relu", "qx", qx);
  return clamp_to(qx, qx.q_zero_point(), qrange(qx.scalar_type()).second, false);
}

at::Tensor relu6_q(const at::Tensor& qx, bool inplace) {
  check_input("relu6", "qx", qx);
  const int64_t six = cpu::quantize_bound(6.0, qx.q_scale(), qx.q_zero_point(), qx.scalar_type());
  return clamp_to(qx, qx.q_zero_point(), six, inplace);
}

at::Tensor clamp_q(const at::Tensor& qx, const c10::optional<at::Scalar>& min,
                   const c10::optional<at::Scalar>& max) {
  constexpr const char* op = "clamp";
  check_input(op, "qx", qx);
  TORCH_CHECK_VALUE(min.has_value() || max.has_value(), "qplugin::clamp: min and max should not both be None");
  const auto r = qrange(qx.scalar_type());
  int64_t lo = r.first, hi = r.second;
  if (min.has_value()) lo = cpu::quantize_bound(finite_scalar(op, "min", *min), qx.q_scale(), qx.q_zero_point(), qx.scalar_type());
  if (max.has_value()) hi = cpu::quantize_bound(finite_scalar(op, "max", *max), qx.q_scale(), qx.q_zero_point(), qx.scalar_type());
  return clamp_to(qx, lo, hi, false);
}

at::Tensor leaky_relu_q(const at::Tensor& qx, const at::Scalar& negative_slope, bool inplace,
                        double output_scale, int64_t output_zero_point) {
  constexpr const char* op = "leaky_relu";
  check_input(op, "qx", qx);
  check_output_qparams(op, qx, output_scale, output_zero_point);
  const double slope = finite_scalar(op, "negative_slope", negative_slope);
  TORCH_CHECK_VALUE(!inplace || (output_scale == qx.q_scale() && output_zero_point == qx.q_zero_point()),
                    "qplugin::leaky_relu: inplace=True writes into qx, so output_scale and "
                    "output_zero_point should equal qx's (", qx.q_scale(), ", ", qx.q_zero_point(),
                    "), got (", output_scale, ", ", output_zero_point, ")");
  return activation(qx, spec_of(ActKind::kLeakyRelu, output_scale, output_zero_point, slope), inplace);
}

at::Tensor hardswish_q(const at::Tensor& input, double output_scale, int64_t output_zero_point) {
  check_input("hardswish", "input", input);
  check_output_qparams("hardswish", input, output_scale, output_zero_point);
  return activation(input, spec_of(ActKind::kHardswish, output_scale, output_zero_point));
}

at::Tensor hardsigmoid_q(const at::Tensor& input, double output_scale, int64_t output_zero_point) {
  check_input("hardsigmoid", "input", input);
  check_output_qparams("hardsigmoid", input, output_scale, output_zero_point);
  return activation(input, spec_of(ActKind::kHardsigmoid, output_scale, output_zero_point));
}

at::Tensor sigmoid_q(const at::Tensor& qx, double output_scale, int64_t output_zero_point) {
  check_input("sigmoid", "qx", qx);
  check_output_qparams("sigmoid", qx, output_scale, output_zero_point);
  return activation(qx, spec_of(ActKind::kSigmoid, output_scale, output_zero_point));
}

at::Tensor elu_q(const at::Tensor& self, double output_scale, int64_t output_zero_point,
                 const at::Scalar& alpha, const at::Scalar& scale, const at::Scalar& input_scale) {
  constexpr const char* op = "elu";
  check_input(op, "self", self);
  check_output_qparams(op, self, output_scale, output_zero_point);
  return activation(self, spec_of(ActKind::kElu, output_scale, output_zero_point,
                                  finite_scalar(op, "alpha", alpha), finite_scalar(op, "scale", scale),
                                  finite_scalar(op, "input_scale", input_scale)));
}

} // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("relu", TORCH_FN(relu_q));
  m.impl("relu6", TORCH_FN(relu6_q));
  m.impl("clamp", TORCH_FN(clamp_q));
  m.impl("leaky_relu", TORCH_FN(leaky_relu_q));
  m.impl("hardswish", TORCH_FN(hardswish_q));
  m.impl("hardsigmoid", TORCH_FN(hardsigmoid_q));
  m.impl("sigmoid", TORCH_FN(sigmoid_q));
  m.impl("elu", TORCH_FN(elu_q));
}

} // namespace qplugin
