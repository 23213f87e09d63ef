// The quantize family's quantized side: QuantizedCPU adapters (unwrap the quantized tensor into
// plain-integer data + qparams, call the CPU glue) and the CPU-key ops that make quantized tensors
// (quantize_per_tensor / _channel / _dynamic, make_per_*_quantized_tensor: allocate, then the glue
// fills the data).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>

#include "cpu/quantize.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

at::Tensor dequantize_quantized(const at::Tensor& self) {
  check_qparams("dequantize", "self", self);
  const at::Tensor data = int_view(self);
  switch (self.qscheme()) {
    case at::kPerTensorAffine: return cpu::dequantize_per_tensor_int(data, self.q_scale(), self.q_zero_point());
    case at::kPerChannelAffine:
      return cpu::dequantize_per_channel_int(data, self.q_per_channel_scales(), self.q_per_channel_zero_points(),
                                             self.q_per_channel_axis());
    default:
      TORCH_CHECK(false,
                  "qplugin::dequantize: self should be per_tensor_affine or "
                  "per_channel_affine, got qscheme ",
                  toString(self.qscheme()));
  }
}

at::Tensor int_repr_quantized(const at::Tensor& self) {
  check_qparams("int_repr", "self", self);
  return cpu::dense_copy(int_view(self));
}

// Wrong tensor kind: these take float / integer tensors.
[[noreturn]] void not_for_quantized(const char* op, const at::Tensor& self, const char* expected) {
  TORCH_CHECK(false, "qplugin::", op, ": self should be ", expected, ", got a quantized tensor of dtype ",
              self.scalar_type(), " (use dequantize or int_repr first)");
}

at::Tensor quantize_per_tensor_q(const at::Tensor& self, double, int64_t, at::ScalarType) {
  not_for_quantized("quantize_per_tensor", self, "a float32 tensor");
}
at::Tensor quantize_per_tensor_dynamic_q(const at::Tensor& self, at::ScalarType, bool) {
  not_for_quantized("quantize_per_tensor_dynamic", self, "a float32 tensor");
}
at::Tensor quantize_per_channel_q(const at::Tensor& self, const at::Tensor&, const at::Tensor&, int64_t,
                                  at::ScalarType) {
  not_for_quantized("quantize_per_channel", self, "a float32 tensor");
}
at::Tensor make_per_tensor_q(const at::Tensor& self, double, int64_t) {
  not_for_quantized("make_per_tensor_quantized_tensor", self, "a uint8, int8 or int32 tensor");
}
at::Tensor make_per_channel_q(const at::Tensor& self, const at::Tensor&, const at::Tensor&, int64_t) {
  not_for_quantized("make_per_channel_quantized_tensor", self, "a uint8, int8 or int32 tensor");
}

// ---- float / integer in, quantized out (CPU key): the quantized output is allocated here and
// filled by the plain glue (cpu/quantize.cpp) ----

at::Tensor quantize_per_tensor_cpu(const at::Tensor& self, double scale, int64_t zero_point, at::ScalarType dtype) {
  constexpr const char* op = "quantize_per_tensor";
  check_qdtype(op, "dtype", dtype);
  check_scale(op, "scale", scale);
  check_zero_point(op, "zero_point", zero_point, underlying_dtype(dtype));
  const at::Tensor x = cpu::as_float_input(op, self);
  at::Tensor out =
      at::_empty_affine_quantized(x.sizes(), x.options().dtype(dtype), scale, zero_point, kept_format(self));
  cpu::quantize_tensor_into(x, scale, zero_point, underlying_dtype(dtype), out.data_ptr());
  return out;
}

at::Tensor quantize_per_tensor_dynamic_cpu(const at::Tensor& self, at::ScalarType dtype, bool reduce_range) {
  constexpr const char* op = "quantize_per_tensor_dynamic";
  TORCH_CHECK(dtype == at::kQUInt8 || dtype == at::kQInt8, "qplugin::", op,
              ": dtype should be torch.quint8 or torch.qint8, got ", dtype);
  const at::Tensor x = cpu::as_float_input(op, self);
  float lo = 0.0f, hi = 0.0f;
  if (x.numel() > 0) {
    auto mm = at::aminmax(x);
    lo = std::get<0>(mm).item<float>();
    hi = std::get<1>(mm).item<float>();
    TORCH_CHECK_VALUE(std::isfinite(lo) && std::isfinite(hi), "qplugin::", op,
                      ": self should hold finite values to choose qparams from, got min ", lo, " and max ", hi);
  }
  const auto r = qrange(underlying_dtype(dtype));
  const cpu::QParams qp =
      cpu::choose_qparams(lo, hi, static_cast<int32_t>(r.first), static_cast<int32_t>(r.second), reduce_range);
  return quantize_per_tensor_cpu(x, qp.scale, qp.zero_point, dtype);
}

at::Tensor quantize_per_channel_cpu(const at::Tensor& self, const at::Tensor& scales, const at::Tensor& zero_points,
                                    int64_t axis, at::ScalarType dtype) {
  constexpr const char* op = "quantize_per_channel";
  check_qdtype(op, "dtype", dtype);
  return cpu::quantize_per_channel_with(
      op, self, scales, zero_points, axis, underlying_dtype(dtype),
      [dtype](const at::Tensor& x, const at::Tensor& s, const at::Tensor& z, int64_t ax, at::MemoryFormat fmt) {
        return at::_empty_per_channel_affine_quantized(x.sizes(), s, z, ax, x.options().dtype(dtype), fmt);
      });
}

at::ScalarType qdtype_for_int(const char* op, const at::Tensor& self) {
  TORCH_CHECK(is_plain_int_dtype(self.scalar_type()), "qplugin::", op,
              ": self should be a uint8, int8 or int32 tensor, got dtype ", self.scalar_type());
  return quantized_dtype(self.scalar_type());
}

at::Tensor make_per_tensor_cpu(const at::Tensor& self, double scale, int64_t zero_point) {
  constexpr const char* op = "make_per_tensor_quantized_tensor";
  const at::ScalarType qt = qdtype_for_int(op, self);
  check_scale(op, "scale", scale);
  check_zero_point(op, "zero_point", zero_point, self.scalar_type());
  const at::MemoryFormat fmt = kept_format(self);
  const at::Tensor src = self.contiguous(fmt);
  at::Tensor out = at::_empty_affine_quantized(src.sizes(), src.options().dtype(qt), scale, zero_point, fmt);
  cpu::parallel_copy(out.data_ptr(), src.const_data_ptr(), src.nbytes());
  return out;
}

at::Tensor make_per_channel_cpu(const at::Tensor& self, const at::Tensor& scales, const at::Tensor& zero_points,
                                int64_t axis) {
  constexpr const char* op = "make_per_channel_quantized_tensor";
  const at::ScalarType qt = qdtype_for_int(op, self);
  TORCH_CHECK_VALUE(self.dim() > 0, "qplugin::", op,
                    ": self should have at least one dim for per-channel quantization, got a 0-dim tensor");
  int64_t ax = axis;
  cpu::check_per_channel_qparams(op, self, scales, zero_points, &ax);
  const at::MemoryFormat fmt = kept_format(self);
  const at::Tensor src = self.contiguous(fmt);
  at::Tensor out =
      at::_empty_per_channel_affine_quantized(src.sizes(), scales.to(at::kDouble).contiguous(),
                                              zero_points.to(at::kLong).contiguous(), ax, src.options().dtype(qt), fmt);
  cpu::parallel_copy(out.data_ptr(), src.const_data_ptr(), src.nbytes());
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("quantize_per_tensor", TORCH_FN(quantize_per_tensor_cpu));
  m.impl("quantize_per_tensor_dynamic", TORCH_FN(quantize_per_tensor_dynamic_cpu));
  m.impl("quantize_per_channel", TORCH_FN(quantize_per_channel_cpu));
  m.impl("make_per_tensor_quantized_tensor", TORCH_FN(make_per_tensor_cpu));
  m.impl("make_per_channel_quantized_tensor", TORCH_FN(make_per_channel_cpu));
}

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("dequantize", TORCH_FN(dequantize_quantized));
  m.impl("int_repr", TORCH_FN(int_repr_quantized));
  m.impl("quantize_per_tensor", TORCH_FN(quantize_per_tensor_q));
  m.impl("quantize_per_tensor_dynamic", TORCH_FN(quantize_per_tensor_dynamic_q));
  m.impl("quantize_per_channel", TORCH_FN(quantize_per_channel_q));
  m.impl("make_per_tensor_quantized_tensor", TORCH_FN(make_per_tensor_q));
  m.impl("make_per_channel_quantized_tensor", TORCH_FN(make_per_channel_q));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

// Wrong tensor kind: the CPU key sees float / integer tensors.
at::Tensor dequantize_cpu_error(const at::Tensor& self) {
  refuse_non_quantized("dequantize", "self", self);
  return self;
}
at::Tensor int_repr_cpu_error(const at::Tensor& self) {
  refuse_non_quantized("int_repr", "self", self);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("dequantize", TORCH_FN(dequantize_cpu_error));
  m.impl("int_repr", TORCH_FN(int_repr_cpu_error));
}

}  // namespace qplugin
