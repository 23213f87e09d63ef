// 2-D pooling kernels; see pool_kernel.h for the contract. Compiled once per
// ISA (scalar, AVX2, AVX-512). The scalar loops are the reference and the
// tails of the vector loops, so every path computes the same numbers.
//
// NCHW: pooling is separable. For each output row, a vertical pass reduces
// the window's input rows into one row buffer (vectorized along the width);
// a horizontal pass then reduces along the row (max: vector loads at the tap
// offsets, then a stride gather; sums: a prefix sum and one subtraction per
// output). NHWC: channels are contiguous, so each output pixel reduces its
// window taps with full vectors across channels.
#include "kernels/pool_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

// ---------------------------------------------------------------------------
// Byte-wide max vectors (whole-register max of 8-bit or 32-bit lanes).
// ---------------------------------------------------------------------------
#if defined(QPLUGIN_ISA_AVX512)
using VB = __m512i;
constexpr int64_t kVecBytes = 64;
inline VB ldb(const void* p) { return _mm512_loadu_si512(p); }
inline void stb(void* p, VB v) { _mm512_storeu_si512(p, v); }
inline VB vmax(VB a, VB b, uint8_t) { return _mm512_max_epu8(a, b); }
inline VB vmax(VB a, VB b, int8_t) { return _mm512_max_epi8(a, b); }
inline VB vmax(VB a, VB b, int32_t) { return _mm512_max_epi32(a, b); }
#elif defined(QPLUGIN_ISA_AVX2)
using VB = __m256i;
constexpr int64_t kVecBytes = 32;
inline VB ldb(const void* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void stb(void* p, VB v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
inline VB vmax(VB a, VB b, uint8_t) { return _mm256_max_epu8(a, b); }
inline VB vmax(VB a, VB b, int8_t) { return _mm256_max_epi8(a, b); }
inline VB vmax(VB a, VB b, int32_t) { return _mm256_max_epi32(a, b); }
#endif

// dst[i] = max(dst[i], src[i]) for i < n.
template <typename T>
inline void max_into(T* dst, const T* src, int64_t n) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  constexpr int64_t kV = kVecBytes / sizeof(T);
  for (; i + kV <= n; i += kV) stb(dst + i, vmax(ldb(dst + i), ldb(src + i), T()));
#endif
  for (; i < n; ++i) dst[i] = std::max(dst[i], src[i]);
}

// dst[x] = max_k src[x + k * step] for x < n, k < taps.
template <typename T>
inline void max_taps(T* dst, const T* src, int64_t n, int64_t taps, int64_t step) {
  int64_t x = 0;
#if QPLUGIN_SIMD
  constexpr int64_t kV = kVecBytes / sizeof(T);
  for (; x + kV <= n; x += kV) {
    VB v = ldb(src + x);
    for (int64_t k = 1; k < taps; ++k) v = vmax(v, ldb(src + x + k * step), T());
    stb(dst + x, v);
  }
#endif
  for (; x < n; ++x) {
    T v = src[x];
    for (int64_t k = 1; k < taps; ++k) v = std::max(v, src[x + k * step]);
    dst[x] = v;
  }
}

template <typename T>
void max_pool_nchw(const T* in, T* out, int64_t planes, const MaxPool2dGeom& g) {
  const T lowest = std::numeric_limits<T>::lowest();
  // Padded row: entry x holds input column x - pW; the padding stays `lowest`.
  const int64_t span = (g.OW - 1) * g.sW + 1;  // window starts the outputs need
  const int64_t len = std::max(g.pW + g.W, span + (g.kW - 1) * g.dW);
  std::vector<T> row(len, lowest);
  std::vector<T> tmp(g.sW == 1 ? 0 : span);
  T* r = row.data() + g.pW;
  for (int64_t p = 0; p < planes; ++p) {
    const T* ip = in + p * g.H * g.W;
    T* op = out + p * g.OH * g.OW;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      bool any = false;
      for (int64_t kh = 0; kh < g.kH; ++kh) {
        const int64_t h = oh * g.sH - g.pH + kh * g.dH;
        if (h < 0 || h >= g.H) continue;
        if (!any) {
          std::memcpy(r, ip + h * g.W, g.W * sizeof(T));
          any = true;
        } else {
          max_into(r, ip + h * g.W, g.W);
        }
      }
      if (!any) std::fill(r, r + g.W, lowest);
      T* o = op + oh * g.OW;
      if (g.sW == 1) {
        max_taps(o, row.data(), g.OW, g.kW, g.dW);
      } else {
        max_taps(tmp.data(), row.data(), span, g.kW, g.dW);
        for (int64_t ow = 0; ow < g.OW; ++ow) o[ow] = tmp[ow * g.sW];
      }
    }
  }
}

template <typename T>
void max_pool_nhwc(const T* in, T* out, int64_t C, int64_t cb, int64_t ce, int64_t ob, int64_t oe,
                   const MaxPool2dGeom& g) {
  const T lowest = std::numeric_limits<T>::lowest();
  const int64_t n = ce - cb;
  for (int64_t oh = ob; oh < oe; ++oh) {
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      T* o = out + (oh * g.OW + ow) * C + cb;
      bool any = false;
      for (int64_t kh = 0; kh < g.kH; ++kh) {
        const int64_t h = oh * g.sH - g.pH + kh * g.dH;
        if (h < 0 || h >= g.H) continue;
        for (int64_t kw = 0; kw < g.kW; ++kw) {
          const int64_t w = ow * g.sW - g.pW + kw * g.dW;
          if (w < 0 || w >= g.W) continue;
          const T* s = in + (h * g.W + w) * C + cb;
          if (!any) {
            std::memcpy(o, s, n * sizeof(T));
            any = true;
          } else {
            max_into(o, s, n);
          }
        }
      }
      if (!any) std::fill(o, o + n, lowest);
    }
  }
}

// ---------------------------------------------------------------------------
// Average pooling
// ---------------------------------------------------------------------------

// The scalar requantization every path reproduces (pool_kernel.h).
template <typename T, typename Acc>
inline T requant(Acc d, float mult, const AvgPool2dGeom& g) {
  const float v = static_cast<float>(d) * mult + g.zadd;
  float r = std::nearbyint(v);
  r = r < g.qmax ? r : g.qmax;
  r = r > g.qmin ? r : g.qmin;
  if (sizeof(T) == 4) {
    // qmax is 2^31 as a float: clamp in 64 bits.
    const int64_t i = static_cast<int64_t>(r);
    return static_cast<T>(std::min<int64_t>(std::max<int64_t>(i, std::numeric_limits<T>::min()),
                                            std::numeric_limits<T>::max()));
  }
  return static_cast<T>(r);
}

#if QPLUGIN_SIMD
// Vector form of requant for 8-bit outputs: clamping in float before the
// round equals rounding then clamping, because the bounds are integers.
inline simd::VI requant_v(simd::VI d, simd::VF mult, simd::VF zadd, simd::VF lo, simd::VF hi) {
  simd::VF v = simd::add_f(simd::mul_f(simd::to_f(d), mult), zadd);
  v = simd::min_f(simd::max_f(v, lo), hi);
  return simd::to_i32_round(v);
}
#endif

template <typename T, typename Acc>
void avg_pool_nchw(const T* in, T* out, int64_t planes, const AvgPool2dGeom& g) {
  std::vector<Acc> vs(g.W);
  std::vector<Acc> pre(g.W + 1);
  std::vector<int32_t> d32(std::is_same<Acc, int32_t>::value ? g.OW : 0);
  for (int64_t p = 0; p < planes; ++p) {
    const T* ip = in + p * g.H * g.W;
    T* op = out + p * g.OH * g.OW;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      std::fill(vs.begin(), vs.end(), Acc(0));
      for (int64_t h = g.hs[oh]; h < g.he[oh]; ++h) {
        const T* src = ip + h * g.W;
        int64_t w = 0;
#if QPLUGIN_SIMD
        if constexpr (sizeof(T) == 1 && std::is_same<Acc, int32_t>::value) {
          for (; w + simd::kLanes <= g.W; w += simd::kLanes) {
            simd::storeu_i(vs.data() + w, simd::add_i(simd::loadu_i(vs.data() + w), simd::load_q(src + w)));
          }
        }
#endif
        for (; w < g.W; ++w) vs[w] += src[w];
      }
      pre[0] = 0;
      for (int64_t w = 0; w < g.W; ++w) pre[w + 1] = pre[w] + vs[w];
      const int64_t* off = g.off + oh * g.OW;
      const float* mult = g.mult + oh * g.OW;
      T* o = op + oh * g.OW;
      if constexpr (std::is_same<Acc, int32_t>::value) {
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          d32[ow] = pre[g.we[ow]] - pre[g.ws[ow]] - static_cast<int32_t>(off[ow]);
        }
        int64_t ow = 0;
#if QPLUGIN_SIMD
        if constexpr (sizeof(T) == 1) {
          const simd::VF zadd = simd::set1_f(g.zadd), lo = simd::set1_f(g.qmin), hi = simd::set1_f(g.qmax);
          for (; ow + simd::kLanes <= g.OW; ow += simd::kLanes) {
            simd::store_q(o + ow, requant_v(simd::loadu_i(d32.data() + ow), simd::loadu_f(mult + ow), zadd, lo, hi));
          }
        }
#endif
        for (; ow < g.OW; ++ow) o[ow] = requant<T, int32_t>(d32[ow], mult[ow], g);
      } else {
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          o[ow] = requant<T, Acc>(pre[g.we[ow]] - pre[g.ws[ow]] - off[ow], mult[ow], g);
        }
      }
    }
  }
}

template <typename T, typename Acc>
void avg_pool_nhwc(const T* in, T* out, int64_t C, int64_t cb, int64_t ce, int64_t ob, int64_t oe,
                   const AvgPool2dGeom& g) {
  for (int64_t oh = ob; oh < oe; ++oh) {
    const int64_t h0 = g.hs[oh], h1 = g.he[oh];
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const int64_t w0 = g.ws[ow], w1 = g.we[ow];
      const int64_t pidx = oh * g.OW + ow;
      const float m = g.mult[pidx];
      const int64_t off = g.off[pidx];
      T* o = out + pidx * C;
      int64_t c = cb;
#if QPLUGIN_SIMD
      if constexpr (sizeof(T) == 1 && std::is_same<Acc, int32_t>::value) {
        using namespace simd;
        const VF mv = set1_f(m), zadd = set1_f(g.zadd), lo = set1_f(g.qmin), hi = set1_f(g.qmax);
        const VI offv = set1_i(static_cast<int32_t>(off));
        for (; c + 4 * kLanes <= ce; c += 4 * kLanes) {
          VI a0 = set1_i(0), a1 = a0, a2 = a0, a3 = a0;
          for (int64_t h = h0; h < h1; ++h) {
            const T* s = in + (h * g.W + w0) * C + c;
            for (int64_t w = w0; w < w1; ++w, s += C) {
              a0 = add_i(a0, load_q(s));
              a1 = add_i(a1, load_q(s + kLanes));
              a2 = add_i(a2, load_q(s + 2 * kLanes));
              a3 = add_i(a3, load_q(s + 3 * kLanes));
            }
          }
          store4_q(o + c, requant_v(sub_i(a0, offv), mv, zadd, lo, hi),
                   requant_v(sub_i(a1, offv), mv, zadd, lo, hi),
                   requant_v(sub_i(a2, offv), mv, zadd, lo, hi),
                   requant_v(sub_i(a3, offv), mv, zadd, lo, hi));
        }
        for (; c + kLanes <= ce; c += kLanes) {
          VI a0 = set1_i(0);
          for (int64_t h = h0; h < h1; ++h) {
            const T* s = in + (h * g.W + w0) * C + c;
            for (int64_t w = w0; w < w1; ++w, s += C) a0 = add_i(a0, load_q(s));
          }
          store_q(o + c, requant_v(sub_i(a0, offv), mv, zadd, lo, hi));
        }
      }
#endif
      for (; c < ce; ++c) {
        Acc a = 0;
        for (int64_t h = h0; h < h1; ++h) {
          const T* s = in + (h * g.W + w0) * C + c;
          for (int64_t w = w0; w < w1; ++w, s += C) a += *s;
        }
        o[c] = requant<T, Acc>(a - static_cast<Acc>(off), m, g);
      }
    }
  }
}

} // namespace

void max_pool2d_nchw_u8(const uint8_t* in, uint8_t* out, int64_t planes, const MaxPool2dGeom& g) {
  max_pool_nchw(in, out, planes, g);
}
void max_pool2d_nchw_s8(const int8_t* in, int8_t* out, int64_t planes, const MaxPool2dGeom& g) {
  max_pool_nchw(in, out, planes, g);
}
void max_pool2d_nchw_s32(const int32_t* in, int32_t* out, int64_t planes, const MaxPool2dGeom& g) {
  max_pool_nchw(in, out, planes, g);
}
void max_pool2d_nhwc_u8(const uint8_t* in, uint8_t* out, int64_t C, int64_t c_begin, int64_t c_end,
                        int64_t oh_begin, int64_t oh_end, const MaxPool2dGeom& g) {
  max_pool_nhwc(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void max_pool2d_nhwc_s8(const int8_t* in, int8_t* out, int64_t C, int64_t c_begin, int64_t c_end,
                        int64_t oh_begin, int64_t oh_end, const MaxPool2dGeom& g) {
  max_pool_nhwc(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void max_pool2d_nhwc_s32(const int32_t* in, int32_t* out, int64_t C, int64_t c_begin, int64_t c_end,
                         int64_t oh_begin, int64_t oh_end, const MaxPool2dGeom& g) {
  max_pool_nhwc(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}

void avg_pool2d_nchw_u8(const uint8_t* in, uint8_t* out, int64_t planes, const AvgPool2dGeom& g) {
  avg_pool_nchw<uint8_t, int32_t>(in, out, planes, g);
}
void avg_pool2d_nchw_s8(const int8_t* in, int8_t* out, int64_t planes, const AvgPool2dGeom& g) {
  avg_pool_nchw<int8_t, int32_t>(in, out, planes, g);
}
void avg_pool2d_nchw_wide_u8(const uint8_t* in, uint8_t* out, int64_t planes, const AvgPool2dGeom& g) {
  avg_pool_nchw<uint8_t, int64_t>(in, out, planes, g);
}
void avg_pool2d_nchw_wide_s8(const int8_t* in, int8_t* out, int64_t planes, const AvgPool2dGeom& g) {
  avg_pool_nchw<int8_t, int64_t>(in, out, planes, g);
}
void avg_pool2d_nchw_s32(const int32_t* in, int32_t* out, int64_t planes, const AvgPool2dGeom& g) {
  avg_pool_nchw<int32_t, int64_t>(in, out, planes, g);
}
void avg_pool2d_nhwc_u8(const uint8_t* in, uint8_t* out, int64_t C, int64_t c_begin, int64_t c_end,
                        int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<uint8_t, int32_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void avg_pool2d_nhwc_s8(const int8_t* in, int8_t* out, int64_t C, int64_t c_begin, int64_t c_end,
                        int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<int8_t, int32_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void avg_pool2d_nhwc_wide_u8(const uint8_t* in, uint8_t* out, int64_t C, int64_t c_begin, int64_t c_end,
                             int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<uint8_t, int64_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void avg_pool2d_nhwc_wide_s8(const int8_t* in, int8_t* out, int64_t C, int64_t c_begin, int64_t c_end,
                             int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<int8_t, int64_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void avg_pool2d_nhwc_s32(const int32_t* in, int32_t* out, int64_t C, int64_t c_begin, int64_t c_end,
                         int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<int32_t, int64_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
