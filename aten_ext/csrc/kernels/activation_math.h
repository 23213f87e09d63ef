// Scalar definitions of the requantizing activations, shared by every ISA path
// and by the lookup-table builder (cpu/activation.cpp). No ATen.
//
// An activation maps an input integer q to an output integer:
//   x = dequantize_val(q, in_scale, in_zp)                 (float32, as torch dequantizes)
//   y = f(double(x))                                        (the float64 definition below)
//   out = clamp(round_half_even(y / out_scale) + out_zp)    (float64, test/reference.py requantize_ref)
// For 8-bit inputs the 256 possible outputs are tabulated once per call, so
// every path (scalar / AVX2 / AVX-512) gives exactly these numbers.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/gemm/requant.h"
#include "kernels/quantize_math.h"

namespace qplugin {
namespace kernels {

enum class ActKind : int32_t { kLeakyRelu = 0, kHardswish, kHardsigmoid, kSigmoid, kElu, kCelu, kThreshold };

struct ActSpec {
  ActKind kind;
  double p0;  // leaky_relu: negative_slope; elu, celu: alpha; threshold: threshold
  double p1;  // elu: scale; threshold: value
  double p2;  // elu: input_scale
  float in_scale;
  int32_t in_zp;
  double out_scale;
  int32_t out_zp;
};

inline double act_eval(const ActSpec& s, double x) {
  switch (s.kind) {
    case ActKind::kLeakyRelu: return x > 0 ? x : x * s.p0;
    case ActKind::kHardswish: {
      const double r = x + 3.0 < 0.0 ? 0.0 : (x + 3.0 > 6.0 ? 6.0 : x + 3.0);
      return x * r / 6.0;
    }
    case ActKind::kHardsigmoid: {
      const double r = x + 3.0 < 0.0 ? 0.0 : (x + 3.0 > 6.0 ? 6.0 : x + 3.0);
      return r / 6.0;
    }
    case ActKind::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case ActKind::kElu: return x > 0 ? x * s.p1 : std::expm1(x * s.p2) * s.p0 * s.p1;
    case ActKind::kCelu: return x > 0 ? x : std::expm1(x / s.p0) * s.p0;
    case ActKind::kThreshold: return x > s.p0 ? x : s.p1;
  }
  return 0.0;
}

// clamp(round_half_even(y / scale) + zp) in float64; NaN -> zp. The requantize step is the
// engine's one definition (kernels/gemm/requant.h), in its float64 variant with NaN sent to 0 (requantize_nan_zero).
template <typename T>
inline T requantize_double(double y, double scale, int32_t zp) {
  return static_cast<T>(requantize_nan_zero(y / scale, zp, QRange<T>::min, QRange<T>::max));
}

template <typename T>
inline T act_apply(const ActSpec& s, T q) {
  const float x = dequantize_val<T>(q, s.in_scale, s.in_zp);
  return requantize_double<T>(act_eval(s, static_cast<double>(x)), s.out_scale, s.out_zp);
}

}  // namespace kernels
}  // namespace qplugin
