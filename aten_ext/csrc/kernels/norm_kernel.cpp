// Compiled once per ISA (see kernels/isa.h). The scalar loops are the reference
// and the tails of the vector loops.
#include "kernels/norm_kernel.h"

#include <cmath>

#include "kernels/quantize_math.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

template <typename T>
inline T clamp_round(double v, int32_t zp) {
  double r = std::nearbyint(v);
  if (std::isnan(r)) r = 0;
  r += zp;
  const double lo = QRange<T>::min, hi = QRange<T>::max;
  r = r < lo ? lo : (r > hi ? hi : r);
  return static_cast<T>(r);
}

template <typename T>
void layer_norm_impl(const T* x, T* y, int64_t rows, int64_t m, const LayerNormSpec* spec) {
  const LayerNormSpec s = *spec;
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * m;
    T* yr = y + r * m;
    double mean_q, var_q;
    if constexpr (sizeof(T) == 1) {
      int64_t sum = 0, sumsq = 0;
      for (int64_t j = 0; j < m; ++j) {
        const int32_t v = xr[j];
        sum += v;
        sumsq += v * v;
      }
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
    const double rstd = 1.0 / std::sqrt(var_q * s.in_scale * s.in_scale + s.eps);
    const double a = s.in_scale * rstd;
    if constexpr (sizeof(T) == 1) {
      const float mf = static_cast<float>(mean_q), af = static_cast<float>(a);
      const float zf = static_cast<float>(s.out_zp);
      const float hi = static_cast<float>(QRange<T>::max), lo = static_cast<float>(QRange<T>::min);
      int64_t j = 0;
#if QPLUGIN_SIMD
      using namespace simd;
      const VF vm = set1_f(mf), va = set1_f(af), vz = set1_f(zf), vhi = set1_f(hi), vlo = set1_f(lo);
      for (; j + kLanes <= m; j += kLanes) {
        VF v = mul_f(mul_f(sub_f(to_f(load_q(xr + j)), vm), va), loadu_f(s.wqf + j));
        v = add_f(add_f(v, loadu_f(s.bqf + j)), vz);
        store_q(yr + j, to_i32_round(max_f(min_f(v, vhi), vlo)));
      }
#endif
      for (; j < m; ++j) {
        float v = (static_cast<float>(xr[j]) - mf) * af * s.wqf[j];
        v = v + s.bqf[j] + zf;
        v = v < hi ? v : hi;  // NaN -> hi, as the vector min
        v = v > lo ? v : lo;
        yr[j] = static_cast<T>(std::nearbyint(v));
      }
    } else {
      for (int64_t j = 0; j < m; ++j) {
        const double v = (static_cast<double>(xr[j]) - mean_q) * a * s.wq[j] + s.bq[j];
        yr[j] = clamp_round<T>(v, s.out_zp);
      }
    }
  }
}

template <typename T>
inline T affine_one(T q, float a, float b) {
  float v = static_cast<float>(q) * a + b;
  const float hi = static_cast<float>(QRange<T>::max);
  const float lo = static_cast<float>(QRange<T>::min);
  v = v < hi ? v : hi;  // NaN -> hi, as the vector min
  v = v > lo ? v : lo;
  return static_cast<T>(std::nearbyint(v));
}

#if QPLUGIN_SIMD
template <typename T>
inline simd::VI affine_vec(simd::VI q, simd::VF a, simd::VF b) {
  using namespace simd;
  const VF hi = set1_f(static_cast<float>(QRange<T>::max));
  const VF lo = set1_f(static_cast<float>(QRange<T>::min));
  return to_i32_round(max_f(min_f(add_f(mul_f(to_f(q), a), b), hi), lo));
}
#endif

template <typename T>
void channel_affine8(const T* x, T* y, int64_t outer, int64_t channels, int64_t inner, const float* a,
                     const float* b) {
  if (inner == 1) {
    // Channel varies fastest (channels_last): per-lane parameters.
    for (int64_t o = 0; o < outer; ++o) {
      const T* xo = x + o * channels;
      T* yo = y + o * channels;
      int64_t j = 0;
#if QPLUGIN_SIMD
      using namespace simd;
      for (; j + kLanes <= channels; j += kLanes) {
        store_q(yo + j, affine_vec<T>(load_q(xo + j), loadu_f(a + j), loadu_f(b + j)));
      }
#endif
      for (; j < channels; ++j) yo[j] = affine_one<T>(xo[j], a[j], b[j]);
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
      const VF va = set1_f(a[c]), vb = set1_f(b[c]);
      for (; i + 4 * kLanes <= inner; i += 4 * kLanes) {
        store4_q(yr + i, affine_vec<T>(load_q(xr + i), va, vb), affine_vec<T>(load_q(xr + i + kLanes), va, vb),
                 affine_vec<T>(load_q(xr + i + 2 * kLanes), va, vb),
                 affine_vec<T>(load_q(xr + i + 3 * kLanes), va, vb));
      }
      for (; i + kLanes <= inner; i += kLanes) store_q(yr + i, affine_vec<T>(load_q(xr + i), va, vb));
#endif
      for (; i < inner; ++i) yr[i] = affine_one<T>(xr[i], a[c], b[c]);
    }
  }
}

} // namespace

void layer_norm_u8(const uint8_t* x, uint8_t* y, int64_t rows, int64_t m, const LayerNormSpec* spec) {
  layer_norm_impl(x, y, rows, m, spec);
}
void layer_norm_s8(const int8_t* x, int8_t* y, int64_t rows, int64_t m, const LayerNormSpec* spec) {
  layer_norm_impl(x, y, rows, m, spec);
}
void layer_norm_s32(const int32_t* x, int32_t* y, int64_t rows, int64_t m, const LayerNormSpec* spec) {
  layer_norm_impl(x, y, rows, m, spec);
}
void channel_affine_u8(const uint8_t* x, uint8_t* y, int64_t outer, int64_t channels, int64_t inner,
                       const float* a, const float* b) {
  channel_affine8(x, y, outer, channels, inner, a, b);
}
void channel_affine_s8(const int8_t* x, int8_t* y, int64_t outer, int64_t channels, int64_t inner,
                       const float* a, const float* b) {
  channel_affine8(x, y, outer, channels, inner, a, b);
}
void channel_affine_s32(const int32_t* x, int32_t* y, int64_t outer, int64_t channels, int64_t inner,
                        const double* a, const double* b) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        y[base + i] = clamp_round<int32_t>(static_cast<double>(x[base + i]) * a[c] + b[c], 0);
      }
    }
  }
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
