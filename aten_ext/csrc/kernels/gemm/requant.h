// The one requantize step of every int8 kernel family: a real value v, already in units of the
// output scale, becomes an integer in [lo, hi]:
//
//   requantize(v, zp, lo, hi) = round_half_even(clamp(v, lo - zp, hi - zp)) + zp
//                             = clamp(round_half_even(v) + zp, lo, hi)        (lo, hi integers)
//
// NaN goes to hi (the clamp is MINPS(v, hi - zp) then MAXPS(., lo - zp): x86 returns the
// second operand of MINPS when the first is NaN), +-inf to hi / lo. Clamping before rounding
// keeps the float -> int conversion in range; with integer bounds it gives the same integers as
// rounding first and clamping after (rounding is monotonic), so callers written either way
// share it.
//
// Forms: requantize<float> / requantize<double> (scalar; clamp_round: its zp = 0 form),
// requantize_nan_zero (the named float64 variant, below), and the vector forms of namespace
// qplugin::kernels::<isa>::requant on kernels/simd.h (lane by lane the scalar float steps),
// included from a kernels/ TU.
//
// Users (each computes its v in its own documented order, then calls this):
//  - the GEMM epilogues (kernels/gemm/qgemm_kernel.cpp, kU8: v = float(C) * multiplier + bias,
//    plus the residual of conv2d_add), for linear and every conv GEMM; conv_transpose's
//    requant_rows_s32 (kernels/conv_transpose_kernel.cpp)
//  - conv's depthwise kernels (kernels/conv_kernel.cpp: finish_one / finish_vec, the VNNI and
//    AVX2 3x3 kernels' packed epilogues, through clamp_round: the same v)
//  - the element-wise add / mul (kernels/add_kernel.cpp: v with the output zero point already
//    added in float, so zp = 0 there, as torch computes it); likewise average pooling, bilinear
//    upsampling, cat's requantize, the norms' float32 paths (zp = 0, v holding it)
//  - quantize (kernels/quantize_math.h: v = float(x * inv_scale); qint32: v = double(x) / scale)
//  - float64: softmax, cat of qint32, average pooling of qint32 (requantize<double>); the norms'
//    float64 paths and the activation tables (requantize_nan_zero)
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// Round half to even for double. Where SSE4.1 is enabled (the AVX2 / AVX-512 builds)
// std::nearbyint is one round instruction (vroundsd / vrndscalesd, which loops over doubles also
// vectorize); in translation units built for baseline x86-64 it is a library call, and a slow one
// at times, so there: for |v| < 2^51, v + 1.5 * 2^52 lies in [2^52, 2^53) where the spacing is 1,
// so adding and removing it rounds in the current (default: nearest-even) mode. Larger |v|, inf
// and NaN are returned unchanged. Both give the same value for every input.
inline double round_half_even(double v) {
#if defined(__SSE4_1__)
  return std::nearbyint(v);
#else
  constexpr double kMagic = 6755399441055744.0;        // 1.5 * 2^52
  if (!(std::fabs(v) < 2251799813685248.0)) return v;  // |v| >= 2^51, inf, NaN
  volatile double t = v + kMagic;                      // volatile: no algebraic shortcut
  return t - kMagic;
#endif
}
// float: the SSE4.1 / AVX round instruction in vector builds (default rounding mode: ties to
// even), the same result as the vector paths' cvtps2dq.
inline float round_half_even(float v) { return std::nearbyint(v); }

// round_half_even(clamp(v, lo, hi)) with lo <= hi integral values of F: the step with zp = 0,
// for callers whose v already holds the output zero point (or that add it after narrowing) and
// that keep their bounds as F. The result is an integral F in [lo, hi]: 8-bit callers convert
// it straight to their type (a float -> int32 conversion, which loops vectorize on AVX2 too).
template <typename F>
inline F clamp_round(F v, F lo, F hi) {
  v = v < hi ? v : hi;  // as MINPS(v, hi): NaN -> hi
  v = v > lo ? v : lo;
  return round_half_even(v);
}

// round_half_even(clamp(v, lo - zp, hi - zp)) + zp (see the top of this file); F is float or
// double, lo <= zp <= hi is not required (lo <= hi is).
template <typename F>
inline int32_t requantize(F v, int32_t zp, int32_t lo, int32_t hi) {
  const F h = static_cast<F>(static_cast<int64_t>(hi) - zp);
  const F l = static_cast<F>(static_cast<int64_t>(lo) - zp);
  if constexpr (std::is_same_v<F, double>) {
    // Exact in double (the sum lies in [lo, hi]), and a double -> int32 conversion, which loops
    // vectorize on AVX2 too (AVX2 has no packed double -> int64 one).
    return static_cast<int32_t>(clamp_round(v, l, h) + static_cast<double>(zp));
  } else {
    return static_cast<int32_t>(static_cast<int64_t>(clamp_round(v, l, h)) + zp);
  }
}

// The float64 variant with NaN sent to the zero point (v = 0) instead of hi: the rule of
// test/reference.py's requantize_ref, which the float64 kernels follow (the norms' float64
// paths, kernels/norm_kernel.cpp; the activation tables, kernels/activation_math.h), where a
// NaN comes from a parameter (a NaN weight, bias or activation argument) rather than the data.
inline int32_t requantize_nan_zero(double v, int32_t zp, int32_t lo, int32_t hi) {
  return requantize<double>(v != v ? 0.0 : v, zp, lo, hi);
}

}  // namespace kernels
}  // namespace qplugin

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
// zp = 0: v already holds the output zero point (add / mul, pooling, upsampling, cat, norms), or
// the caller adds it after narrowing (the depthwise kernels: + zp in 16 bits after packs_epi32).
inline simd::VI clamp_round(simd::VF v, simd::VF lo, simd::VF hi) {
  return simd::to_i32_round(simd::max_f(simd::min_f(v, hi), lo));
}
#if defined(QPLUGIN_ISA_AVX512) || defined(QPLUGIN_ISA_AVXVNNI)
// clamp_round at an explicit width of the AVX-512 / AVX-VNNI builds (simd::Zmm / simd::Ymm).
template <class V>
inline typename V::I clamp_round(typename V::F v, typename V::F lo, typename V::F hi) {
  return V::cvt_i(V::max(V::min(v, hi), lo));
}
#endif

}  // namespace requant
}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
#endif
#endif
