// Scalar definitions of quantize / dequantize, bit-identical to aten's CPU
// kernels (fbgemm::Quantize / at::native::quantize_val / dequantize_val as
// shipped in torch 2.13). Every ISA path of every kernel family computes
// exactly this; the vector loops mirror these steps lane by lane.
//
//   quantize, 8-bit per-tensor (fbgemm's vector path, used for every element):
//               q = clamp(round_half_even(fma(x, 1.0f / scale, zero_point)), qmin, qmax)
//               (one rounding of x * inv_scale + zero_point)
//   quantize, per-channel and qint32 (aten's scalar quantize_val):
//               q = clamp(round_half_even(float(float(x * inv_scale) + zero_point)))
//               (product and sum each rounded to float, then rounded to an integer)
//   dequantize: x = float(q - zero_point) * float(scale)               (per tensor)
//               x = float(double(float(q) - float(zero_point)) * double(scale))  (per channel)
//   (qint32 per-tensor: q - zero_point is exact here; torch wraps it around in
//   int32 when it overflows, which we do not copy -- see docs/design.md.)
//
// So ties are broken on t + zero_point, not on t (round(2.5 + 1) = 4, not 3),
// exactly as torch does; docs/design.md has the details.
//
// Non-finite inputs (equal to torch):
//   +inf -> qmax, -inf -> qmin;
//   NaN  -> qmax for 8-bit per-tensor, raw 0 for 8-bit per-channel, INT32_MIN for qint32.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace qplugin {
namespace kernels {

template <typename T>
struct QRange {
  static constexpr int32_t min = std::numeric_limits<T>::min();
  static constexpr int32_t max = std::numeric_limits<T>::max();
};

// 8-bit per-tensor quantize.
template <typename T>
inline T quantize_val8(float x, float inv_scale, int32_t zero_point) {
  static_assert(sizeof(T) == 1, "8-bit only");
  float v = std::fma(x, inv_scale, static_cast<float>(zero_point));
  const float hi = static_cast<float>(QRange<T>::max);
  const float lo = static_cast<float>(QRange<T>::min);
  v = v < hi ? v : hi;  // NaN -> hi, as x86 MINPS
  v = v > lo ? v : lo;
  return static_cast<T>(std::nearbyint(v));
}

// Per-channel (8-bit) and qint32 quantize: aten's scalar rule. 8-bit NaN -> raw 0.
// zero_point_f is static_cast<float>(zero_point) (the periodic kernels keep them as floats).
template <typename T>
inline T quantize_val_scalar_rule_f(float x, float inv_scale, float zero_point_f) {
  const float p = x * inv_scale;
  const float v = std::nearbyint(p + zero_point_f);
  if (std::isnan(v)) return sizeof(T) == 1 ? T(0) : std::numeric_limits<T>::min();
  if (v >= static_cast<float>(QRange<T>::max)) return static_cast<T>(QRange<T>::max);  // >= 2^31 for int32
  if (v <= static_cast<float>(QRange<T>::min)) return static_cast<T>(QRange<T>::min);
  return static_cast<T>(v);
}
template <typename T>
inline T quantize_val_scalar_rule(float x, float inv_scale, int32_t zero_point) {
  return quantize_val_scalar_rule_f<T>(x, inv_scale, static_cast<float>(zero_point));
}

template <typename T>
inline float dequantize_val(T q, float scale, int32_t zero_point) {
  return static_cast<float>(static_cast<int64_t>(q) - zero_point) * scale;
}

template <typename T>
inline float dequantize_val_channel(T q, double scale, int32_t zero_point) {
  const float d = static_cast<float>(q) - static_cast<float>(zero_point);
  return static_cast<float>(static_cast<double>(d) * scale);
}

} // namespace kernels
} // namespace qplugin
