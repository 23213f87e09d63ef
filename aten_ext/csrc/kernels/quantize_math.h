// Scalar definitions of quantize / dequantize (the numerics contract, docs/design.md "Numerics").
// Every ISA path of every kernel family that turns floats into quantized integers computes
// exactly this; the vector loops mirror these steps lane by lane.
//
//   quantize, 8-bit (quint8 / qint8), per-tensor and per-channel:
//               q = clamp(nearbyint(float(x * inv_scale)) + zero_point, qmin, qmax)
//               inv_scale = 1.0f / float(scale) (inv_scale_of): the product is rounded to
//               float, then to an integer (half to even), and the zero point is added to that
//               integer. This is torch's FakeQuantize (fake_quantize_per_{tensor,channel}_affine),
//               so a model trained with it converts without a step of drift.
//   quantize, qint32: q = clamp(nearbyint(double(x) / double(scale)) + zero_point) in float64:
//               exact where float32 would lose steps (|x / scale| >= 2^24).
//   Both are requantize() of kernels/gemm/requant.h (round, then add the zero point, clamped),
//   on float(x * inv_scale) and on double(x) / scale. The vector form of the 8-bit value before
//   its clamp, quantize8_value, follows when included from a kernels/ TU.
//   dequantize: x = float(q - zero_point) * float(scale)               (per tensor)
//               x = float(double(float(q) - float(zero_point)) * double(scale))  (per channel)
//   (qint32 per-tensor: q - zero_point is exact here; torch wraps it around in
//   int32 when it overflows, which we do not copy -- see docs/design.md.)
//
// Non-finite inputs:
//   +inf -> qmax, -inf -> qmin;
//   NaN  -> qmax for 8-bit per-tensor, raw 0 for 8-bit per-channel, INT32_MIN for qint32.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/gemm/requant.h"

namespace qplugin {
namespace kernels {

template <typename T>
struct QRange {
  static constexpr int32_t min = std::numeric_limits<T>::min();
  static constexpr int32_t max = std::numeric_limits<T>::max();
};

// The reciprocal 8-bit quantize multiplies by. torch's FakeQuantize and quantize kernels take it
// in float from the float scale; for a scale that is a float value (every observer's) it equals
// the double reciprocal rounded once to float.
inline float inv_scale_of(double scale) { return 1.0f / static_cast<float>(scale); }

// 8-bit per-tensor quantize: NaN -> qmax (requantize's clamp sends it to the top).
template <typename T>
inline T quantize_val8(float x, float inv_scale, int32_t zero_point) {
  static_assert(sizeof(T) == 1, "8-bit only");
  return static_cast<T>(requantize(x * inv_scale, zero_point, QRange<T>::min, QRange<T>::max));
}

// 8-bit per-channel quantize: the same, except NaN -> raw 0.
template <typename T>
inline T quantize_val8_channel(float x, float inv_scale, int32_t zero_point) {
  return std::isnan(x) ? T(0) : quantize_val8<T>(x, inv_scale, zero_point);
}

// qint32 quantize (per-tensor and per-channel): NaN -> INT32_MIN.
inline int32_t quantize_val32(float x, double scale, int32_t zero_point) {
  if (std::isnan(x)) return std::numeric_limits<int32_t>::min();
  return requantize(static_cast<double>(x) / scale, zero_point, QRange<int32_t>::min, QRange<int32_t>::max);
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

}  // namespace kernels
}  // namespace qplugin

#if defined(QPLUGIN_ISA_NS)
#include "kernels/simd.h"
#if QPLUGIN_SIMD
namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {

// The 8-bit rule before its clamp, lane by lane: nearbyint(float(x * inv_scale)) + zero_point,
// as a float. Exact while |x * inv_scale| < 2^24; beyond that the sum may round, but stays far
// outside every 8-bit range, where only the clamp matters. NaN stays NaN, +-inf stay +-inf.
inline simd::VF quantize8_value(simd::VF x, simd::VF inv_scale, simd::VF zero_point) {
  return simd::add_f(simd::round_f(simd::mul_f(x, inv_scale)), zero_point);
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
#endif
#endif
