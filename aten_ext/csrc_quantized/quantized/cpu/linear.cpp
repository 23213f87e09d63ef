// QuantizedCPU adapters for linear: unwrap X (quint8, per tensor) and W, call
// the CPU glue (cpu/linear.cpp), wrap the quint8 result.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/linear.h"
#include "packed_params/linear_packed_params.h"
#include "utils/checks.h"
#include "utils/class_check.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

at::Tensor linear_q(const char* op, const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w,
                    double y_scale, int64_t y_zero_point, bool relu) {
  TORCH_CHECK(x.scalar_type() == at::kQUInt8, "qplugin::", op, ": X should be torch.quint8, got ", x.scalar_type());
  TORCH_CHECK(x.qscheme() == at::kPerTensorAffine || x.qscheme() == at::kPerTensorSymmetric, "qplugin::", op,
              ": X should be per_tensor_affine, got qscheme ", c10::toString(x.qscheme()));
  check_qparams(op, "X", x);
  const auto out_sizes = cpu::linear_out_sizes(op, x.sizes(), *w);
  check_scale(op, "Y_scale_i", y_scale);
  check_zero_point(op, "Y_zero_point_i", y_zero_point, at::kByte);
  at::Tensor out = at::_empty_affine_quantized(out_sizes, x.options().dtype(at::kQUInt8), y_scale, y_zero_point);
  // raw data pointers: no per-call int_view wrappers (a batch-1 call is a few microseconds)
  const at::Tensor xc = x.contiguous();
  const int64_t M = w->N > 0 ? out.numel() / w->N : 0;
  cpu::linear_u8(op, static_cast<const uint8_t*>(xc.const_data_ptr()), M, x.q_scale(), x.q_zero_point(), *w, y_scale,
                 y_zero_point, relu, static_cast<uint8_t*>(out.data_ptr()));
  return out;
}

at::Tensor linear_quantized(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w, double s, int64_t z) {
  return linear_q("linear", x, w, s, z, false);
}
at::Tensor linear_relu_quantized(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w, double s,
                                 int64_t z) {
  return linear_q("linear_relu", x, w, s, z, true);
}

c10::intrusive_ptr<LinearPackedParams> linear_prepack_quantized(const at::Tensor& w,
                                                                const c10::optional<at::Tensor>& b) {
  return LinearPackedParams::prepack(w, b);
}

[[noreturn]] void quantized_x(const char* op, const at::Tensor& x) {
  TORCH_CHECK(false, "qplugin::", op, ": X should be a float32 tensor, got a quantized tensor of dtype ",
              x.scalar_type(), " (use linear for quantized input, or dequantize first)");
}
at::Tensor linear_dynamic_q_error(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>&, bool) {
  quantized_x("linear_dynamic", x);
}
at::Tensor linear_relu_dynamic_q_error(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>&, bool) {
  quantized_x("linear_relu_dynamic", x);
}
at::Tensor linear_dynamic_fp16_q_error(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>&) {
  quantized_x("linear_dynamic_fp16", x);
}
at::Tensor linear_relu_dynamic_fp16_q_error(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>&) {
  quantized_x("linear_relu_dynamic_fp16", x);
}
c10::intrusive_ptr<LinearPackedParams> linear_prepack_fp16_q_error(const at::Tensor& w,
                                                                   const c10::optional<at::Tensor>&) {
  TORCH_CHECK(false,
              "qplugin::linear_prepack_fp16: W should be a float32 or float16 tensor, got a quantized tensor "
              "of dtype ",
              w.scalar_type(), " (pass the float weight; use linear_prepack for qint8 weights)");
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  register_linear_classes();
  m.impl("linear_prepack", TORCH_FN(linear_prepack_quantized));
  m.impl("linear", with_class_check<LinearPackedParams, 1>(TORCH_FN(linear_quantized)));
  m.impl("linear_relu", with_class_check<LinearPackedParams, 1>(TORCH_FN(linear_relu_quantized)));
  m.impl("linear_dynamic", TORCH_FN(linear_dynamic_q_error));
  m.impl("linear_relu_dynamic", TORCH_FN(linear_relu_dynamic_q_error));
  m.impl("linear_dynamic_fp16", TORCH_FN(linear_dynamic_fp16_q_error));
  m.impl("linear_relu_dynamic_fp16", TORCH_FN(linear_relu_dynamic_fp16_q_error));
  m.impl("linear_prepack_fp16", TORCH_FN(linear_prepack_fp16_q_error));
}

// ---- The CPU key: float input (dynamic and fp16 linear), and refusals of plain tensors ----
namespace {

at::Tensor linear_dynamic(const at::Tensor& x_in, const c10::intrusive_ptr<LinearPackedParams>& wp, bool reduce_range,
                          bool relu) {
  const char* op = relu ? "linear_relu_dynamic" : "linear_dynamic";
  check_float_input(op, "X", x_in);
  cpu::linear_out_sizes(op, x_in.sizes(), *wp);
  return cpu::linear_dynamic_view(op, x_in, cpu::linear_weights_view(*wp), reduce_range, relu);
}

at::Tensor linear_dynamic_cpu(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w, bool reduce_range) {
  return linear_dynamic(x, w, reduce_range, false);
}
at::Tensor linear_relu_dynamic_cpu(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w,
                                   bool reduce_range) {
  return linear_dynamic(x, w, reduce_range, true);
}

// Float tensors reaching the quantized-input ops.
[[noreturn]] void float_x(const char* op, const at::Tensor& x) {
  TORCH_CHECK(false, "qplugin::", op,
              ": X should be a quantized torch.quint8 tensor, got a non-quantized tensor of dtype ", x.scalar_type(),
              " (quantize it first, or use linear_dynamic for float input)");
}
at::Tensor linear_cpu_error(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>&, double, int64_t) {
  float_x("linear", x);
}
at::Tensor linear_relu_cpu_error(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>&, double, int64_t) {
  float_x("linear_relu", x);
}
c10::intrusive_ptr<LinearPackedParams> linear_prepack_cpu_error(const at::Tensor& w, const c10::optional<at::Tensor>&) {
  TORCH_CHECK(false,
              "qplugin::linear_prepack: W should be a quantized torch.qint8 tensor, got a non-quantized "
              "tensor of dtype ",
              w.scalar_type(), " (quantize it first, e.g. with quantize_per_channel)");
}

c10::intrusive_ptr<LinearPackedParams> linear_prepack_fp16_cpu(const at::Tensor& w,
                                                               const c10::optional<at::Tensor>& b) {
  return LinearPackedParams::prepack_fp16("linear_prepack_fp16", w, b);
}

at::Tensor linear_fp16(const char* op, const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w,
                       bool relu) {
  w->check_fp16(op);
  return cpu::linear_fp16_view(op, x, cpu::linear_weights_view(*w), relu);
}
at::Tensor linear_dynamic_fp16_cpu(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w) {
  return linear_fp16("linear_dynamic_fp16", x, w, false);
}
at::Tensor linear_relu_dynamic_fp16_cpu(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w) {
  return linear_fp16("linear_relu_dynamic_fp16", x, w, true);
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  register_linear_classes();
  m.impl("linear_dynamic", with_class_check<LinearPackedParams, 1>(TORCH_FN(linear_dynamic_cpu)));
  m.impl("linear_relu_dynamic", with_class_check<LinearPackedParams, 1>(TORCH_FN(linear_relu_dynamic_cpu)));
  m.impl("linear", TORCH_FN(linear_cpu_error));
  m.impl("linear_relu", TORCH_FN(linear_relu_cpu_error));
  m.impl("linear_prepack", TORCH_FN(linear_prepack_cpu_error));
  m.impl("linear_prepack_fp16", TORCH_FN(linear_prepack_fp16_cpu));
  m.impl("linear_dynamic_fp16", with_class_check<LinearPackedParams, 1>(TORCH_FN(linear_dynamic_fp16_cpu)));
  m.impl("linear_relu_dynamic_fp16", with_class_check<LinearPackedParams, 1>(TORCH_FN(linear_relu_dynamic_fp16_cpu)));
}

}  // namespace qplugin
