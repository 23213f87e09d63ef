// QuantizedCPU adapters for the quantize family: unwrap the quantized tensor
// into plain-integer data + qparams, call the CPU glue, wrap the result.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/quantize.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

at::Tensor dequantize_quantized(const at::Tensor& self) {
  check_qparams("dequantize", "self", self);
  const at::Tensor data = int_view(self);
  switch (self.qscheme()) {
    case at::kPerTensorAffine:
      return cpu::dequantize_per_tensor_int(data, self.q_scale(), self.q_zero_point());
    case at::kPerChannelAffine:
      return cpu::dequantize_per_channel_int(data, self.q_per_channel_scales(),
                                             self.q_per_channel_zero_points(),
                                             self.q_per_channel_axis());
    default:
      TORCH_CHECK(false, "qplugin::dequantize: self should be per_tensor_affine or "
                  "per_channel_affine, got qscheme ", toString(self.qscheme()));
  }
}

at::Tensor int_repr_quantized(const at::Tensor& self) {
  check_qparams("int_repr", "self", self);
  return cpu::dense_copy(int_view(self));
}

// Wrong tensor kind: these take float / integer tensors.
[[noreturn]] void not_for_quantized(const char* op, const at::Tensor& self, const char* expected) {
  TORCH_CHECK(false, "qplugin::", op, ": self should be ", expected,
              ", got a quantized tensor of dtype ", self.scalar_type(),
              " (use dequantize or int_repr first)");
}

at::Tensor quantize_per_tensor_q(const at::Tensor& self, double, int64_t, at::ScalarType) {
  not_for_quantized("quantize_per_tensor", self, "a float32 tensor");
}
at::Tensor quantize_per_tensor_dynamic_q(const at::Tensor& self, at::ScalarType, bool) {
  not_for_quantized("quantize_per_tensor_dynamic", self, "a float32 tensor");
}
at::Tensor quantize_per_channel_q(const at::Tensor& self, const at::Tensor&, const at::Tensor&,
                                  int64_t, at::ScalarType) {
  not_for_quantized("quantize_per_channel", self, "a float32 tensor");
}
at::Tensor make_per_tensor_q(const at::Tensor& self, double, int64_t) {
  not_for_quantized("make_per_tensor_quantized_tensor", self, "a uint8, int8 or int32 tensor");
}
at::Tensor make_per_channel_q(const at::Tensor& self, const at::Tensor&, const at::Tensor&, int64_t) {
  not_for_quantized("make_per_channel_quantized_tensor", self, "a uint8, int8 or int32 tensor");
}

} // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("dequantize", TORCH_FN(dequantize_quantized));
  m.impl("int_repr", TORCH_FN(int_repr_quantized));
  m.impl("quantize_per_tensor", TORCH_FN(quantize_per_tensor_q));
  m.impl("quantize_per_tensor_dynamic", TORCH_FN(quantize_per_tensor_dynamic_q));
  m.impl("quantize_per_channel", TORCH_FN(quantize_per_channel_q));
  m.impl("make_per_tensor_quantized_tensor", TORCH_FN(make_per_tensor_q));
  m.impl("make_per_channel_quantized_tensor", TORCH_FN(make_per_channel_q));
}

} // namespace qplugin
