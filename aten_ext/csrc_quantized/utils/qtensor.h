// Helpers between quantized tensors and the plain-integer layer: the quantized tier's header
// (with quantized/cpu/, the only C++ that names the quantized dtypes or reads a quantized tensor).
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "utils/checks.h"
#include "utils/layout.h"

namespace qplugin {

// ---- the quantized dtypes (this header and quantized/cpu/ are the only C++ naming them) ----

inline bool is_qint_dtype(at::ScalarType t) { return t == at::kQUInt8 || t == at::kQInt8 || t == at::kQInt32; }

// The plain integer dtype holding a quantized dtype's values: the glue's range tag (checks.h qrange).
inline at::ScalarType underlying_dtype(at::ScalarType qt) {
  switch (qt) {
    case at::kQUInt8: return at::kByte;
    case at::kQInt8: return at::kChar;
    case at::kQInt32: return at::kInt;
    default: TORCH_INTERNAL_ASSERT(false, "qplugin: not a quantized dtype: ", qt);
  }
}

// The quantized dtype holding a plain integer dtype's values.
inline at::ScalarType quantized_dtype(at::ScalarType t) {
  switch (t) {
    case at::kByte: return at::kQUInt8;
    case at::kChar: return at::kQInt8;
    case at::kInt: return at::kQInt32;
    default: TORCH_INTERNAL_ASSERT(false, "qplugin: not a plain integer dtype: ", t);
  }
}

// A Scalar argument of a QuantizedCPU op as the double the plain ops take (a bool as 0 or 1, an
// integer as the nearest double); a complex number is refused, naming the op and the argument.
inline double real_scalar(const char* op, const char* arg, const c10::Scalar& s) {
  TORCH_CHECK(!s.isComplex(), "qplugin::", op, ": ", arg, " should be a real number, got a complex number");
  return s.toDouble();
}
inline c10::optional<double> real_scalar(const char* op, const char* arg, const c10::optional<at::Scalar>& s) {
  if (!s.has_value()) return c10::nullopt;
  return real_scalar(op, arg, *s);
}

inline void check_qdtype(const char* op, const char* arg, at::ScalarType dtype) {
  TORCH_CHECK(is_qint_dtype(dtype), "qplugin::", op, ": ", arg,
              " should be torch.quint8, torch.qint8 or torch.qint32, got ", dtype);
}

inline void check_quantized_input(const char* op, const char* arg, const at::Tensor& t) {
  TORCH_CHECK(t.is_quantized(), "qplugin::", op, ": ", arg,
              " should be a quantized tensor (quint8, qint8 or qint32), got a non-quantized tensor "
              "of dtype ",
              t.scalar_type());
}

inline void check_per_tensor_input(const char* op, const char* arg, const at::Tensor& t) {
  check_quantized_input(op, arg, t);
  const auto qs = t.qscheme();
  TORCH_CHECK(qs == at::kPerTensorAffine || qs == at::kPerTensorSymmetric, "qplugin::", op, ": ", arg,
              " should be a per-tensor quantized tensor, got qscheme ", toString(qs));
}

// THE input-qparams check of every op that takes a quantized tensor: torch's
// _make_per_tensor_quantized_tensor / _make_per_channel_quantized_tensor build tensors with any
// scale and zero point (NaN, inf, 0, negative, out of range), so each adapter calls this on each
// quantized input (after its own dtype / qscheme checks) before reading data. Same rules as
// quantize_per_tensor / quantize_per_channel (check_scale / check_zero_point).
inline void check_qparams(const char* op, const char* arg, const at::Tensor& t) {
  TORCH_INTERNAL_ASSERT(t.is_quantized());
  const auto qs = t.qscheme();
  if (qs == at::kPerTensorAffine || qs == at::kPerTensorSymmetric) {
    check_scale(op, arg, t.q_scale(), " scale");
    check_zero_point(op, arg, t.q_zero_point(), underlying_dtype(t.scalar_type()), " zero_point");
    return;
  }
  TORCH_CHECK(qs == at::kPerChannelAffine || qs == at::kPerChannelSymmetric, "qplugin::", op, ": ", arg,
              " should be per-tensor or per-channel affine quantized, got qscheme ", toString(qs));
  const at::Tensor s = t.q_per_channel_scales().to(at::kDouble).contiguous();
  const at::Tensor z = t.q_per_channel_zero_points().to(at::kLong).contiguous();
  const double* sp = s.const_data_ptr<double>();
  const int64_t* zp = z.const_data_ptr<int64_t>();
  for (int64_t c = 0; c < s.numel(); ++c) check_scale(op, arg, sp[c], " per-channel scale");
  for (int64_t c = 0; c < z.numel(); ++c)
    check_zero_point(op, arg, zp[c], underlying_dtype(t.scalar_type()), " per-channel zero_point");
}

// A plain integer tensor (uint8 / int8 / int32) aliasing the data of a
// quantized tensor, same sizes and strides, no copy. Keeps the storage alive.
inline at::Tensor int_view(const at::Tensor& q) {
  TORCH_INTERNAL_ASSERT(q.is_quantized());
  const at::ScalarType dt = underlying_dtype(q.scalar_type());
  c10::Storage storage = q.storage();
  return at::from_blob(
      q.data_ptr(), q.sizes(), q.strides(),
      [storage](void*) mutable {
        storage = c10::Storage();
      },
      q.options().dtype(dt));
}

}  // namespace qplugin
