// Compiled once per ISA (see kernels/isa.h). The scalar loops are the reference
// and the tails of the vector loops.
#include "kernels/norm_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/bytes_simd.h"
#include "kernels/quantize_math.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

// The float64 paths' requantize step: NaN -> zp (kernels/gemm/requant.h, requantize_nan_zero).
template <typename T>
inline T requant_f64(double v, int32_t zp) {
  return static_cast<T>(requantize_nan_zero(v, zp, QRange<T>::min, QRange<T>::max));
}
// The float32 paths' (v holds the output zero point; lo an integral bound): NaN -> hi, as the
// vector loops' MINPS.
template <typename T>
inline T requant_f32(float v, float lo) {
  return static_cast<T>(clamp_round(v, lo, static_cast<float>(QRange<T>::max)));
}

// Exact sum and sum of squares of n 8-bit values: widened to int16, madd into
// int32 lanes (one block of at most kBlock vectors cannot overflow them:
// kBlock * 2 * 255^2 < 2^31), each block folded into int64.
template <typename T>
void byte_sums(const T* x, int64_t n, int64_t* sum_out, int64_t* sumsq_out) {
  int64_t sum = 0, sumsq = 0, j = 0;
#if QPLUGIN_SIMD
  using bytes::W16;
  using V = simd::VI;
  constexpr int64_t kBlock = 4096;
  constexpr int64_t kStep = 2 * simd::kLanes;  // bytes per W16
  const W16 ones = bytes::set16(1);
  while (j + kStep <= n) {
    const int64_t end = std::min(n - kStep, j + kStep * (kBlock - 1));
    V acc_s = simd::set1_i(0), acc_q = acc_s;
    for (; j <= end; j += kStep) {
      const W16 w = bytes::load16(x + j);
      acc_s = simd::add_i(acc_s, simd::madd16(w, ones));
      acc_q = simd::add_i(acc_q, simd::madd16(w, w));
    }
    alignas(64) int32_t ls[sizeof(V) / 4], lq[sizeof(V) / 4];
    std::memcpy(ls, &acc_s, sizeof(V));
    std::memcpy(lq, &acc_q, sizeof(V));
    for (size_t k = 0; k < sizeof(V) / 4; ++k) {
      sum += ls[k];
      sumsq += static_cast<uint32_t>(lq[k]);  // squares: non-negative, < 2^31 per lane
    }
  }
#endif
  for (; j < n; ++j) {
    const int32_t v = x[j];
    sum += v;
    sumsq += v * v;
  }
  *sum_out = sum;
  *sumsq_out = sumsq;
}

// Mean and variance of the quantized values of one row: exact integer sums for
// 8-bit data, two float64 passes for int32.
template <typename T>
void row_stats(const T* xr, int64_t m, double* mean_out, double* var_out) {
  double mean_q, var_q;
  if constexpr (sizeof(T) == 1) {
    int64_t sum = 0, sumsq = 0;
    byte_sums(xr, m, &sum, &sumsq);
    mean_q = static_cast<double>(sum) / m;
    // m * sumsq - sum^2 >= 0 exactly; in float64 keep it non-negative.
    var_q = static_cast<double>(sumsq) / m - mean_q * mean_q;
    var_q = var_q > 0 ? var_q : 0;
  } else {
    double sum = 0;
    for (int64_t j = 0; j < m; ++j) sum += xr[j];
    mean_q = sum / m;
    double sq = 0;
    for (int64_t j = 0; j < m; ++j) {
      const double d = xr[j] - mean_q;
      sq += d * d;
    }
    var_q = sq / m;
  }
  *mean_out = mean_q;
  *var_out = var_q;
}

// s * rstd: what (q - mean_q) is multiplied by.
inline double norm_factor(double var_q, double in_scale, double eps) {
  return in_scale * (1.0 / std::sqrt(var_q * in_scale * in_scale + eps));
}

// y[j] = clamp(round((q[j] - mean_q) * a * w[j] + b[j] + out_zp)) over n elements.
// 8-bit data in float32 (each step rounded, no FMA), int32 (or in_float64) in float64.
template <typename T>
void normalize_run(const T* xr, T* yr, int64_t n, double mean_q, double a, const float* wf, const float* bf,
                   const double* wd, const double* bd, int32_t out_zp, bool in_float64) {
  if constexpr (sizeof(T) == 1) {
    if (!in_float64) {
      const float mf = static_cast<float>(mean_q), af = static_cast<float>(a);
      const float zf = static_cast<float>(out_zp);
      const float lo = static_cast<float>(QRange<T>::min);
      int64_t j = 0;
#if QPLUGIN_SIMD
      using namespace simd;
      const VF vm = set1_f(mf), va = set1_f(af), vz = set1_f(zf);
      // On this path |a| * max|w|, max|b| <= kNormFloatBound (layer_norm_impl), so |v| < 2^21 and
      // finite: the rounded integers are exact, and clamping them (store4_q's saturating pack;
      // bytes::clamp_sat for single vectors) equals clamping the float to the integral bounds and
      // rounding.
      auto one = [&](int64_t k) {
        VF v = mul_f(mul_f(sub_f(to_f(load_q(xr + k)), vm), va), loadu_f(wf + k));
        v = add_f(add_f(v, loadu_f(bf + k)), vz);
        return to_i32_round(v);
      };
      for (; j + 4 * kLanes <= n; j += 4 * kLanes)
        store4_q(yr + j, one(j), one(j + kLanes), one(j + 2 * kLanes), one(j + 3 * kLanes));
      for (; j + kLanes <= n; j += kLanes) store_q(yr + j, bytes::clamp_sat<T>(one(j)));
#endif
      for (; j < n; ++j) {
        float v = (static_cast<float>(xr[j]) - mf) * af * wf[j];
        yr[j] = requant_f32<T>(v + bf[j] + zf, lo);
      }
      return;
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    const double v = (static_cast<double>(xr[j]) - mean_q) * a * wd[j] + bd[j];
    yr[j] = requant_f64<T>(v, out_zp);
  }
}

template <typename T>
void layer_norm_impl(const T* x, T* y, int64_t rows, int64_t m, const LayerNormSpec* spec) {
  const LayerNormSpec s = *spec;
  for (int64_t r = 0; r < rows; ++r) {
    double mean_q, var_q;
    row_stats(x + r * m, m, &mean_q, &var_q);
    const double a = norm_factor(var_q, s.in_scale, s.eps);
    normalize_run<T>(x + r * m, y + r * m, m, mean_q, a, s.wqf, s.bqf, s.wq, s.bq, s.out_zp,
                     !(std::fabs(a) * s.wq_max <= kNormFloatBound && s.wq_max <= kNormFloatBound));
  }
}

// The lowest output value: the dtype's, or lo (the fused relu's out_zp) when higher.
template <typename T>
inline float affine_floor(int32_t lo) {
  const float qmin = static_cast<float>(QRange<T>::min);
  return static_cast<float>(lo) > qmin ? static_cast<float>(lo) : qmin;
}

template <typename T>
inline T affine_one(T q, float a, float b, float lo) {
  return requant_f32<T>(static_cast<float>(q) * a + b, lo);
}

#if QPLUGIN_SIMD
// kBounded: every |q * a + b| < 2^30 (checked by the caller, false for inf / NaN parameters), so
// the conversion is exact and clamping the rounded integers equals clamping the float to the
// integral bounds and rounding: the result is left unclamped for the caller's saturating store
// (bytes::store4_sat) or int32 clamp (AffineOp::clamp).
template <typename T, bool kBounded>
inline simd::VI affine_vec(simd::VI q, simd::VF a, simd::VF b, simd::VF lo) {
  using namespace simd;
  if constexpr (kBounded) {
    (void)lo;
    return to_i32_round(add_f(mul_f(to_f(q), a), b));
  } else {
    const VF hi = set1_f(static_cast<float>(QRange<T>::max));
    return requant::clamp_round(add_f(mul_f(to_f(q), a), b), lo, hi);
  }
}
#endif

// Per-channel elementwise map over (outer, channels, inner) data: op.one(q, c) on scalars;
// op.lanes(v, c0) on a vector of channels c0.. (inner == 1) and op.row(c) -> a functor on vectors
// of one channel (its broadcast parameters set up once per row). An op with kSat leaves its
// vectors unclamped (values that fit int32): the 4-vector stores clamp them by saturating
// (bytes::store4_sat, above op.lo_bytes()), single vectors through op.clamp.
template <typename T, typename Op>
void channel_map8(const T* x, T* y, int64_t outer, int64_t channels, int64_t inner, const Op& op_ref) {
  const Op op = op_ref;  // a local copy: its fields stay in registers across the stores
#if QPLUGIN_SIMD
  bytes::VB lo_b{};
  if constexpr (Op::kSat) lo_b = op.lo_bytes();
  const auto put4 = [&](T* p, simd::VI a, simd::VI b, simd::VI c, simd::VI d) {
    if constexpr (Op::kSat) {
      bytes::store4_sat(p, a, b, c, d, lo_b);
    } else {
      simd::store4_q(p, a, b, c, d);
    }
  };
  const auto put1 = [&](T* p, simd::VI v) {
    if constexpr (Op::kSat) {
      simd::store_q(p, op.clamp(v));
    } else {
      simd::store_q(p, v);
    }
  };
#endif
  if (inner == 1) {
    // Channel varies fastest (channels_last): per-lane parameters.
    for (int64_t o = 0; o < outer; ++o) {
      const T* xo = x + o * channels;
      T* yo = y + o * channels;
      int64_t j = 0;
#if QPLUGIN_SIMD
      using namespace simd;
      auto one = [&](int64_t k) {
        return op.lanes(load_q(xo + k), k);
      };
      for (; j + 4 * kLanes <= channels; j += 4 * kLanes) {
        put4(yo + j, one(j), one(j + kLanes), one(j + 2 * kLanes), one(j + 3 * kLanes));
      }
      for (; j + kLanes <= channels; j += kLanes) put1(yo + j, one(j));
#endif
      for (; j < channels; ++j) yo[j] = op.one(xo[j], j);
    }
    return;
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const T* xr = x + (o * channels + c) * inner;
      T* yr = y + (o * channels + c) * inner;
      int64_t i = 0;
#if QPLUGIN_SIMD
      using namespace simd;
      const auto f = op.row(c);
      for (; i + 4 * kLanes <= inner; i += 4 * kLanes) {
        put4(yr + i, f(load_q(xr + i)), f(load_q(xr + i + kLanes)), f(load_q(xr + i + 2 * kLanes)),
             f(load_q(xr + i + 3 * kLanes)));
      }
      for (; i + kLanes <= inner; i += kLanes) put1(yr + i, f(load_q(xr + i)));
#endif
      for (; i < inner; ++i) yr[i] = op.one(xr[i], c);
    }
  }
}

template <typename T, bool kBounded>
struct AffineOp {
  static constexpr bool kSat = kBounded;
  const float* a;
  const float* b;
  float lo;  // an integral value >= T's minimum (affine_floor)
  T one(T q, int64_t c) const { return affine_one<T>(q, a[c], b[c], lo); }
#if QPLUGIN_SIMD
  bytes::VB lo_bytes() const { return bytes::vset(static_cast<int32_t>(lo), T()); }
  simd::VI clamp(simd::VI v) const { return bytes::clamp_sat<T>(v, static_cast<int32_t>(lo)); }
  simd::VI lanes(simd::VI q, int64_t c0) const {
    return affine_vec<T, kBounded>(q, simd::loadu_f(a + c0), simd::loadu_f(b + c0), simd::set1_f(lo));
  }
  auto row(int64_t c) const {
    const simd::VF va = simd::set1_f(a[c]), vb = simd::set1_f(b[c]), vlo = simd::set1_f(lo);
    return [=](simd::VI q) {
      return affine_vec<T, kBounded>(q, va, vb, vlo);
    };
  }
#endif
};

template <typename T>
void channel_affine8(const T* x, T* y, int64_t outer, int64_t channels, int64_t inner, const float* a, const float* b,
                     int32_t lo_q) {
  float bound = 0.0f;  // max |q * a + b| over 8-bit q, up to rounding; NaN for non-finite parameters
  for (int64_t c = 0; c < channels; ++c) {
    const float m = 256.0f * std::fabs(a[c]) + std::fabs(b[c]);
    bound = (m > bound || m != m) ? m : bound;
  }
  const float lo = affine_floor<T>(lo_q);
  if (bound < 1073741824.0f) {
    channel_map8(x, y, outer, channels, inner, AffineOp<T, true>{a, b, lo});
  } else {
    channel_map8(x, y, outer, channels, inner, AffineOp<T, false>{a, b, lo});
  }
}

template <typename T>
inline T prelu_one(T q, float zp, float ap, float an, float oz) {
  const float d = static_cast<float>(q) - zp;
  const float pos = d > 0.0f ? d : 0.0f, neg = d < 0.0f ? d : 0.0f;
  return requant_f32<T>(pos * ap + neg * an + oz, static_cast<float>(QRange<T>::min));
}

#if QPLUGIN_SIMD
template <typename T>
inline simd::VI prelu_vec(simd::VI q, simd::VF zp, simd::VF ap, simd::VF an, simd::VF oz) {
  using namespace simd;
  const VF zero = set1_f(0.0f);
  const VF d = sub_f(to_f(q), zp);
  const VF v = add_f(add_f(mul_f(max_f(d, zero), ap), mul_f(min_f(d, zero), an)), oz);
  const VF hi = set1_f(static_cast<float>(QRange<T>::max)), lo = set1_f(static_cast<float>(QRange<T>::min));
  return requant::clamp_round(v, lo, hi);
}
#endif

template <typename T>
struct PreluOp {
  static constexpr bool kSat = false;
  float zp, ap, oz;
  const float* an;
  T one(T q, int64_t c) const { return prelu_one<T>(q, zp, ap, an[c], oz); }
#if QPLUGIN_SIMD
  simd::VI lanes(simd::VI q, int64_t c0) const {
    using namespace simd;
    return prelu_vec<T>(q, set1_f(zp), set1_f(ap), loadu_f(an + c0), set1_f(oz));
  }
  auto row(int64_t c) const {
    using namespace simd;
    const VF vzp = set1_f(zp), vap = set1_f(ap), van = set1_f(an[c]), voz = set1_f(oz);
    return [=](VI q) {
      return prelu_vec<T>(q, vzp, vap, van, voz);
    };
  }
#endif
};

template <typename T>
void channel_prelu8(const T* x, T* y, int64_t outer, int64_t channels, int64_t inner, int32_t zp, float ap,
                    const float* an, int32_t out_zp) {
  channel_map8(x, y, outer, channels, inner, PreluOp<T>{static_cast<float>(zp), ap, static_cast<float>(out_zp), an});
}

void channel_affine32(const int32_t* x, int32_t* y, int64_t outer, int64_t channels, int64_t inner, const double* a,
                      const double* b, int32_t lo) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const int32_t v = requant_f64<int32_t>(static_cast<double>(x[base + i]) * a[c] + b[c], 0);
        y[base + i] = v > lo ? v : lo;
      }
    }
  }
}

// Per (n, group) row: the statistics of layer_norm, then per channel one affine
// map of the integers (channel_affine's loops), A_c = s * rstd * wq[c] and
// B_c = bq[c] - mean_q * A_c + out_zp computed in float64.
// One group_norm row as (q - mean) * a_c + b_c + out_zp in float64 (a_c can exceed float32's
// range): scalar, the same steps on every path.
template <typename T>
void group_norm_row_centered(const T* xr, T* yr, const GroupNormSpec& g, int64_t c0, double mean_q, const double* ad) {
  const LayerNormSpec& s = g.norm;
  for (int64_t k = 0; k < g.cpg; ++k) {
    const T* xc = xr + k * g.inner;
    T* yc = yr + k * g.inner;
    for (int64_t i = 0; i < g.inner; ++i) {
      yc[i] = requant_f64<T>((static_cast<double>(xc[i]) - mean_q) * ad[k] + s.bq[c0 + k], s.out_zp);
    }
  }
}

template <typename T>
void group_norm_impl(const T* x, T* y, int64_t row0, int64_t rows, const GroupNormSpec* spec) {
  const GroupNormSpec g = *spec;
  const LayerNormSpec& s = g.norm;
  const int64_t m = g.cpg * g.inner;
  constexpr bool k8 = sizeof(T) == 1;
  std::vector<double> ad(g.cpg), bd(g.cpg);
  std::vector<float> af(k8 ? g.cpg : 0), bf(k8 ? g.cpg : 0);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * m;
    T* yr = y + r * m;
    double mean_q, var_q;
    row_stats(xr, m, &mean_q, &var_q);
    const double a = norm_factor(var_q, s.in_scale, s.eps);
    const int64_t c0 = ((row0 + r) % g.groups) * g.cpg;
    double amax = 0;
    for (int64_t k = 0; k < g.cpg; ++k) {
      ad[k] = a * s.wq[c0 + k];
      bd[k] = s.bq[c0 + k] - mean_q * ad[k] + s.out_zp;
      amax = std::max(amax, std::fabs(ad[k]));
    }
    // A multiplier this large (a tiny output scale, or a constant row with a small eps) cancels
    // catastrophically in the folded q * a + (b - mean * a) (exact zeros would leave the zero
    // point): subtract the mean first, as layer_norm does (q == mean gives exactly b + zp).
    // Below the bound the fold's rounding stays under ~0.1 step (float32: 2^-24 * 2 * 255 * 2^12;
    // qint32 in float64: 2^-53 * 2^33 * 2^17); above it every nonzero q - mean saturates.
    if (!(amax <= (k8 ? kNormFloatBound : 131072.0))) {
      group_norm_row_centered(xr, yr, g, c0, mean_q, ad.data());
      continue;
    }
    if constexpr (k8) {
      for (int64_t k = 0; k < g.cpg; ++k) {
        af[k] = static_cast<float>(ad[k]);
        bf[k] = static_cast<float>(bd[k]);
      }
      channel_affine8(xr, yr, 1, g.cpg, g.inner, af.data(), bf.data(), std::numeric_limits<int32_t>::min());
    } else {
      channel_affine32(xr, yr, 1, g.cpg, g.inner, ad.data(), bd.data(), std::numeric_limits<int32_t>::min());
    }
  }
}

}  // namespace

void layer_norm_u8(const uint8_t* x, uint8_t* y, int64_t rows, int64_t m, const LayerNormSpec* spec) {
  layer_norm_impl(x, y, rows, m, spec);
}
void layer_norm_s8(const int8_t* x, int8_t* y, int64_t rows, int64_t m, const LayerNormSpec* spec) {
  layer_norm_impl(x, y, rows, m, spec);
}
void layer_norm_s32(const int32_t* x, int32_t* y, int64_t rows, int64_t m, const LayerNormSpec* spec) {
  layer_norm_impl(x, y, rows, m, spec);
}
void group_norm_u8(const uint8_t* x, uint8_t* y, int64_t row0, int64_t rows, const GroupNormSpec* spec) {
  group_norm_impl(x, y, row0, rows, spec);
}
void group_norm_s8(const int8_t* x, int8_t* y, int64_t row0, int64_t rows, const GroupNormSpec* spec) {
  group_norm_impl(x, y, row0, rows, spec);
}
void group_norm_s32(const int32_t* x, int32_t* y, int64_t row0, int64_t rows, const GroupNormSpec* spec) {
  group_norm_impl(x, y, row0, rows, spec);
}
void channel_affine_u8(const uint8_t* x, uint8_t* y, int64_t outer, int64_t channels, int64_t inner, const float* a,
                       const float* b, int32_t lo) {
  channel_affine8(x, y, outer, channels, inner, a, b, lo);
}
void channel_affine_s8(const int8_t* x, int8_t* y, int64_t outer, int64_t channels, int64_t inner, const float* a,
                       const float* b, int32_t lo) {
  channel_affine8(x, y, outer, channels, inner, a, b, lo);
}
void channel_prelu_u8(const uint8_t* x, uint8_t* y, int64_t outer, int64_t channels, int64_t inner, int32_t zp,
                      float ap, const float* an, int32_t out_zp) {
  channel_prelu8(x, y, outer, channels, inner, zp, ap, an, out_zp);
}
void channel_prelu_s8(const int8_t* x, int8_t* y, int64_t outer, int64_t channels, int64_t inner, int32_t zp, float ap,
                      const float* an, int32_t out_zp) {
  channel_prelu8(x, y, outer, channels, inner, zp, ap, an, out_zp);
}
void channel_affine_s32(const int32_t* x, int32_t* y, int64_t outer, int64_t channels, int64_t inner, const double* a,
                        const double* b, int32_t lo) {
  channel_affine32(x, y, outer, channels, inner, a, b, lo);
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
