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
  cpu::linear_u8(op, static_cast<const uint8_t*>(xc.const_data_ptr()), M, x.q_scale(), x.q_zero_point(), *w,
                 y_scale, y_zero_point, relu, static_cast<uint8_t*>(out.data_ptr()));
  return out;
}

at::Tensor linear_quantized(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w, double s,
                            int64_t z) {
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
  TORCH_CHECK(false, "qplugin::linear_prepack_fp16: W should be a float32 or float16 tensor, got a quantized tensor "
              "of dtype ", w.scalar_type(), " (pass the float weight; use linear_prepack for qint8 weights)");
}

} // namespace

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

} // namespace qplugin
