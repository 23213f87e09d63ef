// Compiled once per ISA (see kernels/isa.h). The scalar loops are the reference
// and the tails of the vector loops; both follow kernels/quantize_math.h.
#include "kernels/quantize_kernel.h"

#include "kernels/quantize_math.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

// Runs span(x + base, y + base, len) over the consecutive periods of [0, n) (the last may be
// short): the periodic kernels' parameter arrays (element j of a period takes entry j) restart
// each period.
template <typename X, typename Y, typename Span>
inline void for_each_period(const X* x, Y* y, int64_t n, int64_t period, Span span) {
  for (int64_t base = 0; base < n; base += period) span(x + base, y + base, period < n - base ? period : n - base);
}

#if QPLUGIN_SIMD
// The per-channel 8-bit rule on one vector of quantize8_value values: clamped to the integer
// bounds, NaN -> 0 (the one-vector loops, and the redo of quantize8_x4).
template <typename T>
inline simd::VI channel8_vec(simd::VF v) {
  using namespace simd;
  static_assert(sizeof(T) == 1, "8-bit outputs only");
  if constexpr (std::is_same<T, uint8_t>::value) {
    // max_f(v, 0) gives 0 for NaN (MAXPS returns its second operand), the rule's NaN -> 0.
    return to_i32_round(min_f(max_f(v, set1_f(0.f)), set1_f(255.f)));
  } else {
    const VF c =
        max_f(min_f(v, set1_f(static_cast<float>(QRange<T>::max))), set1_f(static_cast<float>(QRange<T>::min)));
    return nan_to_zero(v, to_i32_round(c));
  }
}

// The 8-bit rule four vectors a store, with as few operations a vector as the rule allows
// (AVX2 is compute-bound here: three float operations a vector). Each vector of
// products p = float(x * inv_scale) becomes t = to_i32_round(min(p, 32767)) (round half to
// even; everything below -2^31 converts to INT32_MIN), and store4_add adds the zero points in
// saturating 16-bit lanes between its two saturating packs. That is clamp(round(p) + zp) exactly:
// a value saturated to 16 bits stays outside the 8-bit range after adding |zp| <= 255. Adding
// the zero point in float after rounding (quantize8_value) costs AVX2 a third more time.
// NaN: with kNanTop (per tensor) min_f(p, 32767) returns 32767, so NaN -> qmax. Otherwise
// (per channel, NaN -> 0) min_f(32767, p) keeps NaN, which converts to INT32_MIN and saturates
// to qmin: the rule for quint8. For qint8 the clamped vectors go pairwise into two NaN-sticky FMA
// accumulators (half an FMA a vector, on the multiply pipes the rule leaves idle; a separate add
// a vector cost AVX2 ~15%), and when the accumulators end NaN the span is redone with
// channel8_vec. A NaN always shows; infinities and values near the float limit can also make one
// (0 * -inf, inf - inf), which only costs the redo.
// p_at(k): the products of elements k ..; z_at(k): pack_zp16 of the zero points of elements k ..
// k + 2 * kLanes; v_at(k): quantize8_value of elements k .. (the redo). Returns the elements done
// (a multiple of 4 * kLanes).
template <typename T, bool kNanTop, bool kStream, typename PAt, typename ZAt, typename VAt>
int64_t quantize8_x4(T* y, int64_t n, PAt p_at, ZAt z_at, VAt v_at) {
  using namespace simd;
  static_assert(sizeof(T) == 1, "8-bit outputs only");
  constexpr bool kRedo = !kNanTop && std::is_same<T, int8_t>::value;
  const VF top = set1_f(32767.0f);
  auto clamp = [&](VF p) {
    return kNanTop ? min_f(p, top) : min_f(top, p);
  };
  VF seen0 = set1_f(0.f), seen1 = seen0;
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    const VF c0 = clamp(p_at(i)), c1 = clamp(p_at(i + kLanes));
    const VF c2 = clamp(p_at(i + 2 * kLanes)), c3 = clamp(p_at(i + 3 * kLanes));
    if constexpr (kRedo) {
      seen0 = fmadd_f(c0, c1, seen0);
      seen1 = fmadd_f(c2, c3, seen1);
    }
    const VI t0 = to_i32_round(c0), t1 = to_i32_round(c1), t2 = to_i32_round(c2), t3 = to_i32_round(c3);
    if (kStream) {
      stream4_add(y + i, t0, t1, t2, t3, z_at(i), z_at(i + 2 * kLanes));
    } else {
      store4_add(y + i, t0, t1, t2, t3, z_at(i), z_at(i + 2 * kLanes));
    }
  }
  if (kStream) stream_fence();
  if (kRedo && any_nan(add_f(seen0, seen1))) {
    for (int64_t j = 0; j < i; j += kLanes) store_q(y + j, channel8_vec<T>(v_at(j)));
  }
  return i;
}
#endif

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
  const VI z = pack_zp16(set1_i(zp), set1_i(zp));
  const VF hi = set1_f(static_cast<float>(QRange<T>::max));
  const VF lo = set1_f(static_cast<float>(QRange<T>::min));
  auto v_at = [&](const float* p) {
    return quantize8_value(loadu_f(p), vinv, vzp);
  };
  const float* const xa = x + i;  // past the peel
  i += quantize8_x4<T, true, kStream>(
      y + i, n - i,
      [&](int64_t k) {
        return mul_f(loadu_f(xa + k), vinv);
      },
      [&](int64_t) {
        return z;
      },
      [&](int64_t k) {
        return v_at(xa + k);
      });
  // min_f(v, hi) sends NaN to the top of the range (the per-tensor rule).
  for (; i + kLanes <= n; i += kLanes) store_q(y + i, to_i32_round(max_f(min_f(v_at(x + i), hi), lo)));
#endif
  for (; i < n; ++i) y[i] = quantize_val8<T>(x[i], inv_scale, zp);
}

// One channel's run of 8-bit values (NaN -> 0).
template <typename T>
void quantize8_channel(const float* x, T* y, int64_t n, float inv_scale, int32_t zp) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  using namespace simd;
  const VF vinv = set1_f(inv_scale);
  const VF vzp = set1_f(static_cast<float>(zp));
  const VI z = pack_zp16(set1_i(zp), set1_i(zp));
  auto v_at = [&](int64_t k) {
    return quantize8_value(loadu_f(x + k), vinv, vzp);
  };
  i = quantize8_x4<T, false, false>(
      y, n,
      [&](int64_t k) {
        return mul_f(loadu_f(x + k), vinv);
      },
      [&](int64_t) {
        return z;
      },
      v_at);
  for (; i + kLanes <= n; i += kLanes) store_q(y + i, channel8_vec<T>(v_at(i)));
#endif
  for (; i < n; ++i) y[i] = quantize_val8_channel<T>(x[i], inv_scale, zp);
}

// 8-bit, element i with channel i % period's parameters (NaN -> 0).
template <typename T>
void quantize8_periodic(const float* x, T* y, int64_t n, int64_t period, const float* inv_scales, const int32_t* zps) {
  for_each_period(x, y, n, period, [&](const float* xb, T* yb, int64_t len) {
    int64_t j = 0;
#if QPLUGIN_SIMD
    using namespace simd;
    auto p_at = [&](int64_t k) {
      return mul_f(loadu_f(xb + k), loadu_f(inv_scales + k));
    };
    auto z_at = [&](int64_t k) {
      return pack_zp16(loadu_i(zps + k), loadu_i(zps + k + kLanes));
    };
    auto v_at = [&](int64_t k) {
      return quantize8_value(loadu_f(xb + k), loadu_f(inv_scales + k), to_f(loadu_i(zps + k)));
    };
    j = quantize8_x4<T, false, false>(yb, len, p_at, z_at, v_at);
    for (; j + kLanes <= len; j += kLanes) store_q(yb + j, channel8_vec<T>(v_at(j)));
#endif
    for (; j < len; ++j) yb[j] = quantize_val8_channel<T>(xb[j], inv_scales[j], zps[j]);
  });
}

#if QPLUGIN_SIMD
// qint32 in float64: kLanes floats, their scales and zero points as two halves of doubles (lo:
// the first kLanes / 2). round(x / scale) + zero_point is exact below 2^53; min_d(hi, t) keeps
// NaN, and the conversion sends NaN and everything below -2^31 to INT32_MIN, the rule's values.
inline simd::VI quantize32_vec(simd::VF x, simd::VD s_lo, simd::VD s_hi, simd::VD z_lo, simd::VD z_hi) {
  using namespace simd;
  const VD hi = set1_d(static_cast<double>(QRange<int32_t>::max));
  auto half = [&](VD xd, VD s, VD z) {
    return to_i32_d(min_d(hi, add_d(round_d(div_d(xd, s)), z)));
  };
  return join_i(half(lo_to_d(x), s_lo, z_lo), half(hi_to_d(x), s_hi, z_hi));
}
#endif

void quantize32(const float* x, int32_t* y, int64_t n, double scale, int32_t zp) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  using namespace simd;
  const VD vs = set1_d(scale), vz = set1_d(zp);
  for (; i + kLanes <= n; i += kLanes) storeu_i(y + i, quantize32_vec(loadu_f(x + i), vs, vs, vz, vz));
#endif
  for (; i < n; ++i) y[i] = quantize_val32(x[i], scale, zp);
}

void quantize32_periodic(const float* x, int32_t* y, int64_t n, int64_t period, const double* scales,
                         const int32_t* zps) {
  for_each_period(x, y, n, period, [&](const float* xb, int32_t* yb, int64_t len) {
    int64_t j = 0;
#if QPLUGIN_SIMD
    using namespace simd;
    constexpr int kHalf = kLanes / 2;
    for (; j + kLanes <= len; j += kLanes) {
      const VI z = loadu_i(zps + j);
      storeu_i(yb + j, quantize32_vec(loadu_f(xb + j), loadu_d(scales + j), loadu_d(scales + j + kHalf),
                                      to_d(lo_half(z)), to_d(hi_half(z))));
    }
#endif
    for (; j < len; ++j) yb[j] = quantize_val32(xb[j], scales[j], zps[j]);
  });
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
    auto one = [&](int64_t at) {
      put(y + at, mul_f(to_f(sub_i(load_q(q + at), vzp)), vs));
    };
    // Four vectors an iteration: the one-vector loop's speed depended on where its few
    // instructions fell in the code (the identical quint8 and qint8 loops ran 15% apart).
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
void dequantize_periodic(const T* q, float* y, int64_t n, int64_t period, const double* scales, const int32_t* zps) {
  for_each_period(q, y, n, period, [&](const T* qb, float* yb, int64_t len) {
    int64_t j = 0;
#if QPLUGIN_SIMD
    using namespace simd;
    constexpr int kHalf = kLanes / 2;
    for (; j + kLanes <= len; j += kLanes) {
      const VF d = sub_f(to_f(load_q(qb + j)), to_f(loadu_i(zps + j)));
      storeu_f(yb + j,
               join_to_f(mul_d(lo_to_d(d), loadu_d(scales + j)), mul_d(hi_to_d(d), loadu_d(scales + j + kHalf))));
    }
#endif
    for (; j < len; ++j) yb[j] = dequantize_val_channel<T>(qb[j], scales[j], zps[j]);
  });
}

}  // namespace

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
  quantize8_channel(x, y, n, inv_scale, zero_point);
}
void quantize_ch_s8(const float* x, int8_t* y, int64_t n, float inv_scale, int32_t zero_point) {
  quantize8_channel(x, y, n, inv_scale, zero_point);
}
void quantize_s32(const float* x, int32_t* y, int64_t n, double scale, int32_t zero_point) {
  quantize32(x, y, n, scale, zero_point);
}
void quantize_periodic_u8(const float* x, uint8_t* y, int64_t n, int64_t period, const float* inv_scales,
                          const int32_t* zero_points) {
  quantize8_periodic(x, y, n, period, inv_scales, zero_points);
}
void quantize_periodic_s8(const float* x, int8_t* y, int64_t n, int64_t period, const float* inv_scales,
                          const int32_t* zero_points) {
  quantize8_periodic(x, y, n, period, inv_scales, zero_points);
}
void quantize_periodic_s32(const float* x, int32_t* y, int64_t n, int64_t period, const double* scales,
                           const int32_t* zero_points) {
  quantize32_periodic(x, y, n, period, scales, zero_points);
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

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
