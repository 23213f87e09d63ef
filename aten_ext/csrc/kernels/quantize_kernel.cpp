// Compiled once per ISA (see kernels/isa.h). The scalar loops are the reference
// and the tails of the vector loops; both follow kernels/quantize_math.h.
#include "kernels/quantize_kernel.h"

#include "kernels/quantize_math.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

template <typename T, bool kStream = false>
void quantize8(const float* x, T* y, int64_t n, float inv_scale, int32_t zp) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  using namespace simd;
  if (kStream) {  // peel to an aligned destination for the streaming stores
    for (; i < n && (reinterpret_cast<uintptr_t>(y + i) % (4 * kLanes)) != 0; ++i) {
      y[i] = quantize_val8<T>(x[i], inv_scale, zp);
    }
  }
  const VF vinv = set1_f(inv_scale);
  const VF vzp = set1_f(static_cast<float>(zp));
  const VF hi = set1_f(static_cast<float>(QRange<T>::max));
  const VF lo = set1_f(static_cast<float>(QRange<T>::min));
  // min_f sends NaN to the top of the range (torch's rule); below the range, store4_q's pack
  // saturation does the clamp (-inf and < -2^31 convert to INT32_MIN, which saturates too).
  auto one_hi = [&](const float* p) { return to_i32_round(min_f(fmadd_f(loadu_f(p), vinv, vzp), hi)); };
  auto one = [&](const float* p) {
    return to_i32_round(max_f(min_f(fmadd_f(loadu_f(p), vinv, vzp), hi), lo));
  };
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    if (kStream) {
      stream4_q(y + i, one_hi(x + i), one_hi(x + i + kLanes), one_hi(x + i + 2 * kLanes), one_hi(x + i + 3 * kLanes));
    } else {
      store4_q(y + i, one_hi(x + i), one_hi(x + i + kLanes), one_hi(x + i + 2 * kLanes), one_hi(x + i + 3 * kLanes));
    }
  }
  if (kStream) stream_fence();
  for (; i + kLanes <= n; i += kLanes) store_q(y + i, one(x + i));
#endif
  for (; i < n; ++i) y[i] = quantize_val8<T>(x[i], inv_scale, zp);
}

#if QPLUGIN_SIMD
// The rule's float steps: a product, then a sum (two roundings, as the scalar rule; an FMA
// would round once).
inline simd::VF rule_sum(simd::VF xv, simd::VF vinv, simd::VF vzp) {
  return simd::add_f(simd::mul_f(xv, vinv), vzp);
}

// aten's scalar rule on one vector of rule_sum values; the tails, and the loops below redo.
template <typename T>
inline simd::VI quantize_rule_vec(simd::VF v) {
  using namespace simd;
  if constexpr (std::is_same<T, uint8_t>::value) {
    // Clamped to the integer bounds before the conversion rounds (half to even, as nearbyint);
    // max_f(v, 0) gives 0 for NaN (MAXPS returns its second operand), the rule's NaN -> 0.
    return to_i32_round(min_f(max_f(v, set1_f(0.f)), set1_f(255.f)));
  } else if constexpr (sizeof(T) == 1) {
    const VF c = max_f(min_f(v, set1_f(static_cast<float>(QRange<T>::max))),
                       set1_f(static_cast<float>(QRange<T>::min)));
    return nan_to_zero(v, to_i32_round(c));
  } else {
    return ge_to(v, 2147483648.0f, to_i32_round(v), 2147483647);  // NaN / < -2^31 -> INT32_MIN
  }
}

// The 8-bit rule four vectors a store, with as few operations a vector as the rule allows
// (AVX2 is compute-bound here). The top clamp is min_f(hi, v), which keeps NaN (MINPS returns
// its second operand when one is NaN); the conversion sends NaN and everything below -2^31 to
// INT32_MIN; the saturating pack does the bottom clamp. For quint8 that is the whole rule (NaN
// saturates to 0). For qint8 a NaN would saturate to -128 instead of 0: the clamped vectors go
// pairwise into two NaN-sticky FMA accumulators (half an FMA a vector, on the multiply pipes
// the rule leaves idle; a separate add a vector cost AVX2 ~15%), and when the accumulators end
// NaN the span is redone with quantize_rule_vec. A NaN always shows; infinities and values
// near the float limit can also make one (0 * -inf, inf - inf), which only costs the redo.
// v_at(k) gives rule_sum at element k. Returns the elements done (a multiple of 4 * kLanes).
template <typename T, typename VAt>
int64_t quantize_rule4(T* y, int64_t n, VAt v_at) {
  using namespace simd;
  static_assert(sizeof(T) == 1, "8-bit outputs only");
  const VF hi = set1_f(static_cast<float>(QRange<T>::max));
  VF seen0 = set1_f(0.f), seen1 = seen0;
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    const VF c0 = min_f(hi, v_at(i)), c1 = min_f(hi, v_at(i + kLanes));
    const VF c2 = min_f(hi, v_at(i + 2 * kLanes)), c3 = min_f(hi, v_at(i + 3 * kLanes));
    if constexpr (std::is_same<T, int8_t>::value) {
      seen0 = fmadd_f(c0, c1, seen0);
      seen1 = fmadd_f(c2, c3, seen1);
    }
    store4_q(y + i, to_i32_round(c0), to_i32_round(c1), to_i32_round(c2), to_i32_round(c3));
  }
  if (std::is_same<T, int8_t>::value && any_nan(add_f(seen0, seen1))) {
    for (int64_t j = 0; j < i; j += kLanes) store_q(y + j, quantize_rule_vec<T>(v_at(j)));
  }
  return i;
}
#endif

template <typename T>
void quantize_rule(const float* x, T* y, int64_t n, float inv_scale, int32_t zp) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  using namespace simd;
  const VF vinv = set1_f(inv_scale);
  const VF vzp = set1_f(static_cast<float>(zp));
  auto v_at = [&](int64_t k) { return rule_sum(loadu_f(x + k), vinv, vzp); };
  if constexpr (sizeof(T) == 1) i = quantize_rule4(y, n, v_at);
  for (; i + kLanes <= n; i += kLanes) store_q(y + i, quantize_rule_vec<T>(v_at(i)));
#endif
  for (; i < n; ++i) y[i] = quantize_val_scalar_rule<T>(x[i], inv_scale, zp);
}

// zero_points as floats: the rule adds static_cast<float>(zero_point).
template <typename T>
void quantize_periodic(const float* x, T* y, int64_t n, int64_t period, const float* inv_scales,
                       const float* zps) {
  for (int64_t base = 0; base < n; base += period) {
    const int64_t len = period < n - base ? period : n - base;
    const float* xb = x + base;
    T* yb = y + base;
    int64_t j = 0;
#if QPLUGIN_SIMD
    using namespace simd;
    auto v_at = [&](int64_t k) { return rule_sum(loadu_f(xb + k), loadu_f(inv_scales + k), loadu_f(zps + k)); };
    if constexpr (sizeof(T) == 1) j = quantize_rule4(yb, len, v_at);
    for (; j + kLanes <= len; j += kLanes) store_q(yb + j, quantize_rule_vec<T>(v_at(j)));
#endif
    for (; j < len; ++j) yb[j] = quantize_val_scalar_rule_f<T>(xb[j], inv_scales[j], zps[j]);
  }
}

template <typename T, bool kStream>
void dequantize_pt_impl(const T* q, float* y, int64_t n, float scale, int32_t zp) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  using namespace simd;
  if (kStream) {  // peel to an aligned destination for the streaming stores
    for (; i < n && (reinterpret_cast<uintptr_t>(y + i) % (kLanes * sizeof(float))) != 0; ++i) {
      y[i] = dequantize_val<T>(q[i], scale, zp);
    }
  }
  auto put = [&](float* p, VF v) {
    if (kStream) {
      stream_f(p, v);
    } else {
      storeu_f(p, v);
    }
  };
  const VF vs = set1_f(scale);
  if constexpr (sizeof(T) == 1) {
    const VI vzp = set1_i(zp);
    auto one = [&](int64_t at) { put(y + at, mul_f(to_f(sub_i(load_q(q + at), vzp)), vs)); };
    // Four vectors an iteration: the one-vector loop's speed depended on where its few instructions
    // fell (AVX2 quint8 1M 78-81 us, the identical qint8 loop 68 us; both 66-70 us now).
    for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
      one(i);
      one(i + kLanes);
      one(i + 2 * kLanes);
      one(i + 3 * kLanes);
    }
    for (; i + kLanes <= n; i += kLanes) one(i);
  } else {
    const VD vzp = set1_d(zp);  // q - zp exactly, then one rounding to float
    for (; i + kLanes <= n; i += kLanes) {
      const VI qi = load_q(q + i);
      const VF d = join_to_f(sub_d(to_d(lo_half(qi)), vzp), sub_d(to_d(hi_half(qi)), vzp));
      put(y + i, mul_f(d, vs));
    }
  }
  if (kStream) stream_fence();
#endif
  for (; i < n; ++i) y[i] = dequantize_val<T>(q[i], scale, zp);
}

template <typename T>
void dequantize_pt(const T* q, float* y, int64_t n, float scale, int32_t zp, bool stream) {
  if (stream) {
    dequantize_pt_impl<T, true>(q, y, n, scale, zp);
  } else {
    dequantize_pt_impl<T, false>(q, y, n, scale, zp);
  }
}

template <typename T>
void dequantize_ch(const T* q, float* y, int64_t n, double scale, int32_t zp) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  using namespace simd;
  const VD vs = set1_d(scale);
  const VF vzp = set1_f(static_cast<float>(zp));
  for (; i + kLanes <= n; i += kLanes) {
    const VF d = sub_f(to_f(load_q(q + i)), vzp);
    storeu_f(y + i, join_to_f(mul_d(lo_to_d(d), vs), mul_d(hi_to_d(d), vs)));
  }
#endif
  for (; i < n; ++i) y[i] = dequantize_val_channel<T>(q[i], scale, zp);
}

template <typename T>
void dequantize_periodic(const T* q, float* y, int64_t n, int64_t period, const double* scales,
                         const int32_t* zps) {
  for (int64_t base = 0; base < n; base += period) {
    const int64_t len = period < n - base ? period : n - base;
    const T* qb = q + base;
    float* yb = y + base;
    int64_t j = 0;
#if QPLUGIN_SIMD
    using namespace simd;
    constexpr int kHalf = kLanes / 2;
    for (; j + kLanes <= len; j += kLanes) {
      const VF d = sub_f(to_f(load_q(qb + j)), to_f(loadu_i(zps + j)));
      storeu_f(yb + j, join_to_f(mul_d(lo_to_d(d), loadu_d(scales + j)),
                                 mul_d(hi_to_d(d), loadu_d(scales + j + kHalf))));
    }
#endif
    for (; j < len; ++j) yb[j] = dequantize_val_channel<T>(qb[j], scales[j], zps[j]);
  }
}

} // namespace

void quantize_u8(const float* x, uint8_t* y, int64_t n, float inv_scale, int32_t zero_point) {
  quantize8(x, y, n, inv_scale, zero_point);
}
void quantize_s8(const float* x, int8_t* y, int64_t n, float inv_scale, int32_t zero_point) {
  quantize8(x, y, n, inv_scale, zero_point);
}
void quantize_u8_stream(const float* x, uint8_t* y, int64_t n, float inv_scale, int32_t zero_point) {
  quantize8<uint8_t, true>(x, y, n, inv_scale, zero_point);
}
void quantize_s8_stream(const float* x, int8_t* y, int64_t n, float inv_scale, int32_t zero_point) {
  quantize8<int8_t, true>(x, y, n, inv_scale, zero_point);
}
void quantize_ch_u8(const float* x, uint8_t* y, int64_t n, float inv_scale, int32_t zero_point) {
  quantize_rule(x, y, n, inv_scale, zero_point);
}
void quantize_ch_s8(const float* x, int8_t* y, int64_t n, float inv_scale, int32_t zero_point) {
  quantize_rule(x, y, n, inv_scale, zero_point);
}
void quantize_s32(const float* x, int32_t* y, int64_t n, float inv_scale, int32_t zero_point) {
  quantize_rule(x, y, n, inv_scale, zero_point);
}
void quantize_periodic_u8(const float* x, uint8_t* y, int64_t n, int64_t period, const float* inv_scales,
                          const float* zero_points) {
  quantize_periodic(x, y, n, period, inv_scales, zero_points);
}
void quantize_periodic_s8(const float* x, int8_t* y, int64_t n, int64_t period, const float* inv_scales,
                          const float* zero_points) {
  quantize_periodic(x, y, n, period, inv_scales, zero_points);
}
void quantize_periodic_s32(const float* x, int32_t* y, int64_t n, int64_t period, const float* inv_scales,
                           const float* zero_points) {
  quantize_periodic(x, y, n, period, inv_scales, zero_points);
}

void dequantize_u8(const uint8_t* q, float* y, int64_t n, float scale, int32_t zero_point, bool stream) {
  dequantize_pt(q, y, n, scale, zero_point, stream);
}
void dequantize_s8(const int8_t* q, float* y, int64_t n, float scale, int32_t zero_point, bool stream) {
  dequantize_pt(q, y, n, scale, zero_point, stream);
}
void dequantize_s32(const int32_t* q, float* y, int64_t n, float scale, int32_t zero_point, bool stream) {
  dequantize_pt(q, y, n, scale, zero_point, stream);
}
void dequantize_channel_u8(const uint8_t* q, float* y, int64_t n, double scale, int32_t zero_point) {
  dequantize_ch(q, y, n, scale, zero_point);
}
void dequantize_channel_s8(const int8_t* q, float* y, int64_t n, double scale, int32_t zero_point) {
  dequantize_ch(q, y, n, scale, zero_point);
}
void dequantize_channel_s32(const int32_t* q, float* y, int64_t n, double scale, int32_t zero_point) {
  dequantize_ch(q, y, n, scale, zero_point);
}
void dequantize_periodic_u8(const uint8_t* q, float* y, int64_t n, int64_t period, const double* scales,
                            const int32_t* zero_points) {
  dequantize_periodic(q, y, n, period, scales, zero_points);
}
void dequantize_periodic_s8(const int8_t* q, float* y, int64_t n, int64_t period, const double* scales,
                            const int32_t* zero_points) {
  dequantize_periodic(q, y, n, period, scales, zero_points);
}
void dequantize_periodic_s32(const int32_t* q, float* y, int64_t n, int64_t period, const double* scales,
                             const int32_t* zero_points) {
  dequantize_periodic(q, y, n, period, scales, zero_points);
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
