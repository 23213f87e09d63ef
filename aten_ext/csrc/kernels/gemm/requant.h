// The one requantize step of the int8 engine (issue 12): a real value v, already in units of
// the output scale, becomes an integer in [lo, hi]:
//
//   requantize(v, zp, lo, hi) = round_half_even(clamp(v, lo - zp, hi - zp)) + zp
//                             = clamp(round_half_even(v) + zp, lo, hi)        (lo, hi integers)
//
// NaN goes to hi (the clamp is MINPS(v, hi - zp) then MAXPS(., lo - zp): x86 returns the
// second operand of MINPS when the first is NaN), +-inf to hi / lo. Clamping before rounding
// keeps the float -> int conversion in range.
//
// Users (all compute their v in their own documented order, then call this):
//  - the GEMM epilogue (kernels/gemm/qgemm_kernel.cpp, kU8: v = float(C) * multiplier + bias,
//    plus the residual of conv2d_add), for linear and every conv GEMM
//  - conv's depthwise kernels (kernels/conv_kernel.cpp, finish_one / finish_vec: the same v)
//  - the element-wise add / mul (kernels/add_kernel.cpp: v with the output zero point already
//    added in float, so zp = 0 there, as torch computes it)
//  - the activation tables (kernels/activation_math.h: v in float64, NaN sent to 0 first, as
//    test/reference.py's requantize_ref)
// Scalar forms for float and double below; the vector forms (namespace
// qplugin::kernels::<isa>::requant, on kernels/simd.h) follow when included from a kernels/ TU.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// Round half to even without libm for double (std::nearbyint is a library call in translation
// units built for baseline x86-64, and a slow one at times). For |v| < 2^51, v + 1.5 * 2^52
// lies in [2^52, 2^53) where the spacing is 1, so adding and removing it rounds in the current
// (default: nearest-even) mode. Larger |v|, inf and NaN are returned unchanged.
inline double round_half_even(double v) {
  constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  if (!(std::fabs(v) < 2251799813685248.0)) return v;  // |v| >= 2^51, inf, NaN
  volatile double t = v + kMagic;  // volatile: no algebraic shortcut
  return t - kMagic;
}
// float: the SSE4.1 / AVX round instruction in vector builds (default rounding mode: ties to
// even), the same result as the vector paths' cvtps2dq.
inline float round_half_even(float v) { return std::nearbyint(v); }

// round_half_even(clamp(v, lo - zp, hi - zp)) + zp (see the top of this file); F is float or
// double, lo <= zp <= hi is not required (lo <= hi is).
template <typename F>
inline int32_t requantize(F v, int32_t zp, int32_t lo, int32_t hi) {
  const F h = static_cast<F>(static_cast<int64_t>(hi) - zp);
  const F l = static_cast<F>(static_cast<int64_t>(lo) - zp);
  v = v < h ? v : h;  // as MINPS(v, h): NaN -> h
  v = v > l ? v : l;
  return static_cast<int32_t>(static_cast<int64_t>(round_half_even(v)) + zp);
}

} // namespace kernels
} // namespace qplugin

#if defined(QPLUGIN_ISA_NS)
#include "kernels/simd.h"
#if QPLUGIN_SIMD
namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace requant {

// The vector form of requantize: lane by lane the scalar steps (MINPS / MAXPS, cvtps2dq rounds
// ties to even). Bounds prepared once per call by make_bounds.
struct Bounds {
  simd::VF lo, hi;  // lo - zp, hi - zp
  simd::VI zp;
};
inline Bounds make_bounds(int32_t zp, int32_t lo, int32_t hi) {
  return {simd::set1_f(static_cast<float>(static_cast<int64_t>(lo) - zp)),
          simd::set1_f(static_cast<float>(static_cast<int64_t>(hi) - zp)), simd::set1_i(zp)};
}
inline simd::VI requantize(simd::VF v, const Bounds& b) {
  return simd::add_i(simd::to_i32_round(simd::max_f(simd::min_f(v, b.hi), b.lo)), b.zp);
}
// zp = 0 (the add / mul kernels, whose v already holds the output zero point).
inline simd::VI clamp_round(simd::VF v, simd::VF lo, simd::VF hi) {
  return simd::to_i32_round(simd::max_f(simd::min_f(v, hi), lo));
}

} // namespace requant
} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
#endif
#endif
