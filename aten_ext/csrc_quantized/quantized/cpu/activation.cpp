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

void check_input(const char* op, const char* arg, const at::Tensor& qx) {
  check_per_tensor_input(op, arg, qx);
  check_qparams(op, arg, qx);
}

// A real, finite Scalar parameter (alpha, negative_slope, threshold, ...) as a double.
double finite_arg(const char* op, const char* arg, const at::Scalar& s) {
  return cpu::finite_scalar(op, arg, real_scalar(op, arg, s));
}

// Per-tensor input checked, with its input and output qparams.
ActSpec checked_spec(const char* op, const char* arg, const at::Tensor& qx, ActKind kind, double out_scale,
                     int64_t out_zp, double p0 = 0, double p1 = 0, double p2 = 0) {
  check_input(op, arg, qx);
  cpu::check_act_qparams(op, qx.q_scale(), qx.q_zero_point(), out_scale, out_zp, underlying_dtype(qx.scalar_type()));
  return cpu::act_spec(kind, qx.q_scale(), qx.q_zero_point(), out_scale, out_zp, p0, p1, p2);
}

at::Tensor new_output(const at::Tensor& qx, double scale, int64_t zp) {
  return at::_empty_affine_quantized(qx.sizes(), qx.options(), scale, zp, kept_format(qx));
}

// Integer clamp, into a new tensor or (inplace) into qx.
at::Tensor clamp_to(const at::Tensor& qx, int64_t lo, int64_t hi, bool inplace) {
  const at::MemoryFormat fmt = kept_format(qx);
  if (qx.is_contiguous(fmt)) {
    // Dense input (the common case): raw pointers, no integer views.
    at::Tensor out =
        inplace ? qx : at::_empty_affine_quantized(qx.sizes(), qx.options(), qx.q_scale(), qx.q_zero_point(), fmt);
    cpu::clamp_raw(qx.const_data_ptr(), out.data_ptr(), qx.numel(), qx.element_size(), qx.scalar_type() == at::kQInt8,
                   lo, hi);
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

at::Tensor activation(const at::Tensor& qx, const ActSpec& spec, bool inplace = false) {
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

// Input checks of the integer clamps (relu, relu6, clamp).
void check_clamp_input(const char* op, const at::Tensor& qx) {
  check_input(op, "qx", qx);
  check_scale(op, "input scale", qx.q_scale());
  check_zero_point(op, "input zero_point", qx.q_zero_point(), underlying_dtype(qx.scalar_type()));
}

at::Tensor relu_q(const at::Tensor& qx) {
  check_clamp_input("relu", qx);
  const auto b = cpu::relu_bounds(qx.q_zero_point(), underlying_dtype(qx.scalar_type()));
  return clamp_to(qx, b.first, b.second, false);
}

at::Tensor relu6_q(const at::Tensor& qx, bool inplace) {
  check_clamp_input("relu6", qx);
  const auto b = cpu::relu6_bounds(qx.q_scale(), qx.q_zero_point(), underlying_dtype(qx.scalar_type()));
  return clamp_to(qx, b.first, b.second, inplace);
}

at::Tensor clamp_q(const at::Tensor& qx, const c10::optional<at::Scalar>& min, const c10::optional<at::Scalar>& max) {
  check_clamp_input("clamp", qx);
  const auto b = cpu::clamp_bounds("clamp", qx.q_scale(), qx.q_zero_point(), underlying_dtype(qx.scalar_type()),
                                   real_scalar("clamp", "min", min), real_scalar("clamp", "max", max));
  return clamp_to(qx, b.first, b.second, false);
}

at::Tensor leaky_relu_q(const at::Tensor& qx, const at::Scalar& negative_slope, bool inplace, double output_scale,
                        int64_t output_zero_point) {
  constexpr const char* op = "leaky_relu";
  const ActSpec spec = checked_spec(op, "qx", qx, ActKind::kLeakyRelu, output_scale, output_zero_point,
                                    finite_arg(op, "negative_slope", negative_slope));
  TORCH_CHECK_VALUE(!inplace || (output_scale == qx.q_scale() && output_zero_point == qx.q_zero_point()),
                    "qplugin::leaky_relu: inplace=True writes into qx, so output_scale and "
                    "output_zero_point should equal qx's (",
                    qx.q_scale(), ", ", qx.q_zero_point(), "), got (", output_scale, ", ", output_zero_point, ")");
  return activation(qx, spec, inplace);
}

at::Tensor hardswish_q(const at::Tensor& input, double output_scale, int64_t output_zero_point) {
  return activation(input,
                    checked_spec("hardswish", "input", input, ActKind::kHardswish, output_scale, output_zero_point));
}

at::Tensor hardsigmoid_q(const at::Tensor& input, double output_scale, int64_t output_zero_point) {
  return activation(
      input, checked_spec("hardsigmoid", "input", input, ActKind::kHardsigmoid, output_scale, output_zero_point));
}

at::Tensor sigmoid_q(const at::Tensor& qx, double output_scale, int64_t output_zero_point) {
  return activation(qx, checked_spec("sigmoid", "qx", qx, ActKind::kSigmoid, output_scale, output_zero_point));
}

at::Tensor elu_q(const at::Tensor& self, double output_scale, int64_t output_zero_point, const at::Scalar& alpha,
                 const at::Scalar& scale, const at::Scalar& input_scale) {
  constexpr const char* op = "elu";
  return activation(self, checked_spec(op, "self", self, ActKind::kElu, output_scale, output_zero_point,
                                       finite_arg(op, "alpha", alpha), finite_arg(op, "scale", scale),
                                       finite_arg(op, "input_scale", input_scale)));
}

at::Tensor celu_q(const at::Tensor& self, double output_scale, int64_t output_zero_point, const at::Scalar& alpha) {
  constexpr const char* op = "celu";
  const ActSpec spec =
      checked_spec(op, "self", self, ActKind::kCelu, output_scale, output_zero_point, finite_arg(op, "alpha", alpha));
  TORCH_CHECK_VALUE(spec.p0 != 0, "qplugin::celu: alpha should be non-zero, got 0");
  return activation(self, spec);
}

// Keeps qx's qparams: x where x > threshold, else value (quantized with qx's qparams).
at::Tensor threshold_q(const at::Tensor& qx, const at::Scalar& threshold, const at::Scalar& value) {
  constexpr const char* op = "threshold";
  check_input(op, "qx", qx);  // before q_scale() below
  return activation(qx, checked_spec(op, "qx", qx, ActKind::kThreshold, qx.q_scale(), qx.q_zero_point(),
                                     finite_arg(op, "threshold", threshold), finite_arg(op, "value", value)));
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("relu", TORCH_FN(relu_q));
  m.impl("relu6", TORCH_FN(relu6_q));
  m.impl("clamp", TORCH_FN(clamp_q));
  m.impl("leaky_relu", TORCH_FN(leaky_relu_q));
  m.impl("hardswish", TORCH_FN(hardswish_q));
  m.impl("hardsigmoid", TORCH_FN(hardsigmoid_q));
  m.impl("sigmoid", TORCH_FN(sigmoid_q));
  m.impl("elu", TORCH_FN(elu_q));
  m.impl("celu", TORCH_FN(celu_q));
  m.impl("threshold", TORCH_FN(threshold_q));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

// Wrong tensor kind: the CPU key sees float / integer tensors.
at::Tensor relu_cpu_error(const at::Tensor& qx) {
  refuse_non_quantized("relu", "qx", qx);
  return qx;
}
at::Tensor relu6_cpu_error(const at::Tensor& qx, bool) {
  refuse_non_quantized("relu6", "qx", qx);
  return qx;
}
at::Tensor leaky_relu_cpu_error(const at::Tensor& qx, const at::Scalar&, bool, double, int64_t) {
  refuse_non_quantized("leaky_relu", "qx", qx);
  return qx;
}
at::Tensor hardswish_cpu_error(const at::Tensor& input, double, int64_t) {
  refuse_non_quantized("hardswish", "input", input);
  return input;
}
at::Tensor hardsigmoid_cpu_error(const at::Tensor& input, double, int64_t) {
  refuse_non_quantized("hardsigmoid", "input", input);
  return input;
}
at::Tensor sigmoid_cpu_error(const at::Tensor& qx, double, int64_t) {
  refuse_non_quantized("sigmoid", "qx", qx);
  return qx;
}
at::Tensor elu_cpu_error(const at::Tensor& self, double, int64_t, const at::Scalar&, const at::Scalar&,
                         const at::Scalar&) {
  refuse_non_quantized("elu", "self", self);
  return self;
}
at::Tensor celu_cpu_error(const at::Tensor& self, double, int64_t, const at::Scalar&) {
  refuse_non_quantized("celu", "self", self);
  return self;
}
at::Tensor threshold_cpu_error(const at::Tensor& qx, const at::Scalar&, const at::Scalar&) {
  refuse_non_quantized("threshold", "qx", qx);
  return qx;
}
at::Tensor clamp_cpu_error(const at::Tensor& qx, const c10::optional<at::Scalar>&, const c10::optional<at::Scalar>&) {
  refuse_non_quantized("clamp", "qx", qx);
  return qx;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("relu", TORCH_FN(relu_cpu_error));
  m.impl("relu6", TORCH_FN(relu6_cpu_error));
  m.impl("leaky_relu", TORCH_FN(leaky_relu_cpu_error));
  m.impl("hardswish", TORCH_FN(hardswish_cpu_error));
  m.impl("hardsigmoid", TORCH_FN(hardsigmoid_cpu_error));
  m.impl("sigmoid", TORCH_FN(sigmoid_cpu_error));
  m.impl("elu", TORCH_FN(elu_cpu_error));
  m.impl("clamp", TORCH_FN(clamp_cpu_error));
  m.impl("celu", TORCH_FN(celu_cpu_error));
  m.impl("threshold", TORCH_FN(threshold_cpu_error));
}

}  // namespace qplugin
