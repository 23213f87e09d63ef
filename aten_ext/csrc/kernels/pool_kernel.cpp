// 2-D pooling kernels (and 3-D average pooling); see pool_kernel.h for the contract. Compiled once per
// ISA (scalar, AVX2, AVX-512). The scalar loops are the reference and the
// tails of the vector loops, so every path computes the same numbers.
//
// NCHW: pooling is separable. For each output row, a vertical pass reduces
// the window's input rows into one row buffer (vectorized along the width);
// a horizontal pass then reduces along the row (max: vector loads at the tap
// offsets, then a stride gather, or for 3 wide / stride 2 / pad 1 one fused pass
// from the input rows (Stem2); sums: each window's columns added directly).
// NHWC: channels are contiguous, so each output pixel reduces its
// window taps with full vectors across channels.
#include "kernels/pool_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/bytes_simd.h"
#include "kernels/gemm/requant.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

using namespace bytes;  // VB, ldb / stb / vmax (+ ldb_n / stb_n tails on AVX-512), W16 / load16 / fold16:
                        // kernels/bytes_simd.h

// A scratch buffer of n elements on a 64-byte boundary (buf owns it): vector stores read back
// by other loads forward only within a cache line, and a heap address made the same pooling
// call vary up to ~1.8x between processes.
template <typename E>
E* aligned64(std::vector<E>& buf, int64_t n) {
  buf.resize(static_cast<size_t>(n + 64 / sizeof(E)));
  return reinterpret_cast<E*>((reinterpret_cast<uintptr_t>(buf.data()) + 63) & ~uintptr_t{63});
}

// dst[i] = max_k src[k][i] for i < n, k < ns (ns >= 1): the rows' maximum in registers, stored
// once (a copy and a load-max-store per further row cost more than the max).
template <typename T>
inline void max_rows(T* dst, const T* const* src, int64_t ns, int64_t n) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  constexpr int64_t kV = kVecBytes / sizeof(T);
  auto at = [&](int64_t x) {
    VB v = ldb(src[0] + x);
    for (int64_t k = 1; k < ns; ++k) v = vmax(v, ldb(src[k] + x), T());
    stb(dst + x, v);
  };
  for (; i + kV <= n; i += kV) at(i);
#if defined(QPLUGIN_ISA_AVX512)
  if (i < n) {
    const int64_t r = n - i;
    VB v = ldb_n(src[0] + i, r);
    for (int64_t k = 1; k < ns; ++k) v = vmax(v, ldb_n(src[k] + i, r), T());
    stb_n(dst + i, v, r);
    return;
  }
#else
  if (i < n && n >= kV) {  // the last vector again, ending at n (max is idempotent)
    at(n - kV);
    return;
  }
#endif
#endif
  for (; i < n; ++i) {
    T v = src[0][i];
    for (int64_t k = 1; k < ns; ++k) v = std::max(v, src[k][i]);
    dst[i] = v;
  }
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
#if defined(QPLUGIN_ISA_AVX512)
  if (x < n) {
    const int64_t r = n - x;
    VB v = ldb_n(src + x, r);
    for (int64_t k = 1; k < taps; ++k) v = vmax(v, ldb_n(src + x + k * step, r), T());
    stb_n(dst + x, v, r);
    return;
  }
#else
  if (x < n && n >= kV) {  // the last vector again, ending at n (dst does not overlap src)
    x = n - kV;
    VB v = ldb(src + x);
    for (int64_t k = 1; k < taps; ++k) v = vmax(v, ldb(src + x + k * step), T());
    stb(dst + x, v);
    return;
  }
#endif
#endif
  for (; x < n; ++x) {
    T v = src[x];
    for (int64_t k = 1; k < taps; ++k) v = std::max(v, src[x + k * step]);
    dst[x] = v;
  }
}

// o[i] = src[2 * i] for i < n (src holds 2 * n bytes): the stride-2 pick of max_pool_nchw, whose
// scalar loop was a third of a 3x3 / 2 pool's time. 8-bit: the even bytes of two vectors as 16-bit
// lanes, one unsigned pack (no lane exceeds 255), one 64-bit permute to restore the order.
template <typename T>
inline void every_other(T* o, const T* src, int64_t n) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  if constexpr (sizeof(T) == 1) {
#if defined(QPLUGIN_ISA_AVX512)
    const __m512i m = _mm512_set1_epi16(0x00FF);
    const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    for (; i + 64 <= n; i += 64) {
      const __m512i a = _mm512_and_si512(ldb(src + 2 * i), m), b = _mm512_and_si512(ldb(src + 2 * i + 64), m);
      stb(o + i, _mm512_permutexvar_epi64(order, _mm512_packus_epi16(a, b)));
    }
#elif defined(QPLUGIN_ISA_NEON)
    // LD2 splits 32 bytes into the even and the odd ones: 16 picks a load, the last 16 ending at n.
    auto pick16 = [&](int64_t at) {
      vst1q_u8(reinterpret_cast<uint8_t*>(o + at), vld2q_u8(reinterpret_cast<const uint8_t*>(src + 2 * at)).val[0]);
    };
#else
    const __m256i m = _mm256_set1_epi16(0x00FF);
    for (; i + 32 <= n; i += 32) {
      const __m256i a = _mm256_and_si256(ldb(src + 2 * i), m), b = _mm256_and_si256(ldb(src + 2 * i + 32), m);
      stb(o + i, _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8));
    }
#endif
#if defined(QPLUGIN_SIMD_X86)
    // The rest 16 at a time (no permute within 128 bits), the last 16 ending at n (rewriting
    // done ones): 28- and 56-wide output rows had a scalar tail of 12-28 picks.
    const __m128i m16 = _mm_set1_epi16(0x00FF);
    auto pick16 = [&](int64_t at) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * at));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * at + 16));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + at),
                       _mm_packus_epi16(_mm_and_si128(a, m16), _mm_and_si128(b, m16)));
    };
#endif
    for (; i + 16 <= n; i += 16) pick16(i);
    if (i < n && n >= 16) {
      pick16(n - 16);
      i = n;
    }
  }
#endif
  for (; i < n; ++i) o[i] = src[2 * i];
}

#if QPLUGIN_SIMD
// The ResNet stem's horizontal step without scratch rows: 3 taps, stride 2, pad 1, even W, so
// output j = max of columns 2j - 1, 2j, 2j + 1 of the rows' maximum. The rows' maxima at columns
// 2j0 - 1 .. and 2j0 .. (loads straight from the input rows) give outputs j0 .. in one step
// (bytes::Y32 / X16 max3s2): one pass, no row buffer read back at offsets +1 / +2 right after its
// stores (those loads missed store forwarding). 256-bit steps (16 outputs) on both ISAs, 128-bit
// (8) for rows of 18-32 columns; output 0 (column -1 is padding) by the scalar rule, the row's end
// as one step ending at OW (rewriting done outputs). 8-bit only.
template <typename T>
struct Stem2 {
  static bool fits(const MaxPool2dGeom& g) {
    return g.kW == 3 && g.sW == 2 && g.pW == 1 && g.dW == 1 && g.W % 2 == 0 && g.OW == g.W / 2 && g.W >= 18;
  }
  // Outputs [j0, j0 + W::kOut) from kNr rows unrolled (2 and 3, the windows of a 3-row pool: a
  // loop over a row count cost its own overhead per load), or nr of them (kNr = 0).
  template <typename W, int kNr>
  static void step(const T* const* rp, int64_t nr, T* o, int64_t j0) {
    const int64_t n = kNr > 0 ? kNr : nr;
    auto rows = [&](int64_t c) {
      typename W::V v = W::ld(rp[0] + c);
      for (int64_t k = 1; k < n; ++k) v = W::vmax(v, W::ld(rp[k] + c), T());
      return v;
    };
    W::template max3s2<T>(o + j0, rows(2 * j0 - 1), rows(2 * j0));
  }
  template <typename W, int kNr>
  static void steps(const T* const* rp, int64_t nr, T* o, int64_t OW) {
    int64_t j = 1;
    for (; j + W::kOut <= OW; j += W::kOut) step<W, kNr>(rp, nr, o, j);
    if (j < OW) step<W, kNr>(rp, nr, o, OW - W::kOut);
  }
  template <int kNr>
  static void steps_any(const T* const* rp, int64_t nr, T* o, int64_t OW) {
    if (OW - 1 >= bytes::Y32::kOut) {
      steps<bytes::Y32, kNr>(rp, nr, o, OW);
    } else {
      steps<bytes::X16, kNr>(rp, nr, o, OW);
    }
  }
  // One output row from its nr >= 1 input rows.
  static void row(const T* const* rp, int64_t nr, T* o, int64_t OW) {
    if (nr == 3) {
      steps_any<3>(rp, nr, o, OW);
    } else if (nr == 2) {
      steps_any<2>(rp, nr, o, OW);
    } else {
      steps_any<0>(rp, nr, o, OW);
    }
    // Output 0 last: its scalar loads, first on a row, waited for the row's first cache line.
    T m0 = rp[0][0];
    for (int64_t k = 0; k < nr; ++k) m0 = std::max(m0, std::max(rp[k][0], rp[k][1]));
    o[0] = m0;
  }
};
#endif

template <typename T>
void max_pool_nchw(const T* in, T* out, int64_t planes, const MaxPool2dGeom& g) {
  const T lowest = std::numeric_limits<T>::lowest();
  // Padded row: entry x holds input column x - pW; the padding stays `lowest`.
  const int64_t span = (g.OW - 1) * g.sW + 1;  // window starts the outputs need
  const int64_t len = std::max(g.pW + g.W, span + (g.kW - 1) * g.dW);
  std::vector<T> row_buf, tmp_buf;
  T* const row = aligned64(row_buf, len);
  std::fill(row, row + len, lowest);
  T* const tmp = aligned64(tmp_buf, g.sW == 1 ? 0 : span + 1);  // + 1: every_other reads 2 * OW entries
  T* r = row + g.pW;
  std::vector<const T*> rows(static_cast<size_t>(g.kH));
#if QPLUGIN_SIMD
  const bool stem2 = sizeof(T) == 1 && Stem2<uint8_t>::fits(g);
#endif
  for (int64_t p = 0; p < planes; ++p) {
    const T* ip = in + p * g.H * g.W;
    T* op = out + p * g.OH * g.OW;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      int64_t nr = 0;
      for (int64_t kh = 0; kh < g.kH; ++kh) {
        const int64_t h = oh * g.sH - g.pH + kh * g.dH;
        if (h >= 0 && h < g.H) rows[nr++] = ip + h * g.W;
      }
#if QPLUGIN_SIMD
      if constexpr (sizeof(T) == 1) {
        if (stem2 && nr > 0) {
          Stem2<T>::row(rows.data(), nr, op + oh * g.OW, g.OW);
          continue;
        }
      }
#endif
      if (nr == 0) {
        std::fill(r, r + g.W, lowest);
      } else {
        max_rows(r, rows.data(), nr, g.W);
      }
      T* o = op + oh * g.OW;
      if (g.sW == 1) {
        max_taps(o, row, g.OW, g.kW, g.dW);
      } else {
        max_taps(tmp, row, span, g.kW, g.dW);
        if (g.sW == 2) {
          every_other(o, tmp, g.OW);
        } else {
          for (int64_t ow = 0; ow < g.OW; ++ow) o[ow] = tmp[ow * g.sW];
        }
      }
    }
  }
}

// Taps k in [lo, hi) of a dilated window starting at `start` that fall inside [0, n).
inline void valid_taps(int64_t start, int64_t k, int64_t dil, int64_t n, int64_t* lo, int64_t* hi) {
  if (dil == 1) {  // no divisions on the common path
    *lo = start >= 0 ? 0 : -start;
    *hi = std::min(k, n - start);
    return;
  }
  *lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
  *hi = start > n - 1 ? 0 : std::min(k, (n - 1 - start) / dil + 1);
}

template <typename T>
void max_pool_nhwc(const T* in, T* out, int64_t C, int64_t cb, int64_t ce, int64_t ob, int64_t oe,
                   const MaxPool2dGeom& g) {
  const T lowest = std::numeric_limits<T>::lowest();
  const int64_t rstep = g.dH * g.W * C, cstep = g.dW * C;
  for (int64_t oh = ob; oh < oe; ++oh) {
    const int64_t h0 = oh * g.sH - g.pH;
    int64_t khl, khh;
    valid_taps(h0, g.kH, g.dH, g.H, &khl, &khh);
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const int64_t w0 = ow * g.sW - g.pW;
      int64_t kwl, kwh;
      valid_taps(w0, g.kW, g.dW, g.W, &kwl, &kwh);
      T* o = out + (oh * g.OW + ow) * C;
      if (khl >= khh || kwl >= kwh) {
        std::fill(o + cb, o + ce, lowest);
        continue;
      }
      const T* base = in + ((h0 + khl * g.dH) * g.W + (w0 + kwl * g.dW)) * C;
      const int64_t nh = khh - khl, nw = kwh - kwl;
      int64_t c = cb;
#if QPLUGIN_SIMD
      constexpr int64_t kV = kVecBytes / sizeof(T);
      for (; c + 4 * kV <= ce; c += 4 * kV) {
        const T* b = base + c;
        VB a0 = ldb(b), a1 = ldb(b + kV), a2 = ldb(b + 2 * kV), a3 = ldb(b + 3 * kV);
        for (int64_t i = 0; i < nh; ++i) {
          for (int64_t j = 0; j < nw; ++j) {
            const T* s = b + i * rstep + j * cstep;
            a0 = vmax(a0, ldb(s), T());
            a1 = vmax(a1, ldb(s + kV), T());
            a2 = vmax(a2, ldb(s + 2 * kV), T());
            a3 = vmax(a3, ldb(s + 3 * kV), T());
          }
        }
        stb(o + c, a0);
        stb(o + c + kV, a1);
        stb(o + c + 2 * kV, a2);
        stb(o + c + 3 * kV, a3);
      }
      for (; c + 2 * kV <= ce; c += 2 * kV) {  // e.g. 64 channels of 8 bits on AVX2: two chains
        const T* b = base + c;
        VB a0 = ldb(b), a1 = ldb(b + kV);
        for (int64_t i = 0; i < nh; ++i) {
          for (int64_t j = 0; j < nw; ++j) {
            const T* s = b + i * rstep + j * cstep;
            a0 = vmax(a0, ldb(s), T());
            a1 = vmax(a1, ldb(s + kV), T());
          }
        }
        stb(o + c, a0);
        stb(o + c + kV, a1);
      }
      for (; c + kV <= ce; c += kV) {
        const T* b = base + c;
        VB a0 = ldb(b);
        for (int64_t i = 0; i < nh; ++i) {
          for (int64_t j = 0; j < nw; ++j) a0 = vmax(a0, ldb(b + i * rstep + j * cstep), T());
        }
        stb(o + c, a0);
      }
#endif
      for (; c < ce; ++c) {
        const T* b = base + c;
        T v = *b;
        for (int64_t i = 0; i < nh; ++i) {
          for (int64_t j = 0; j < nw; ++j) v = std::max(v, b[i * rstep + j * cstep]);
        }
        o[c] = v;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Average pooling
// ---------------------------------------------------------------------------

// The scalar requantization every path reproduces (pool_kernel.h): the requantize step of
// kernels/gemm/requant.h, v holding the zero point (zadd) for 8-bit data.
template <typename T, typename Acc>
inline T requant(Acc d, float mult, int64_t k, const AvgPool2dGeom& g) {
  if constexpr (sizeof(T) == 4) {
    // int32 data: the exact quotient in float64 (float32 would drift ~150 steps on sums of large
    // values)
    return static_cast<T>(requantize<double>(static_cast<double>(d) / static_cast<double>(g.div[k]),
                                             static_cast<int32_t>(g.zadd_d), std::numeric_limits<T>::min(),
                                             std::numeric_limits<T>::max()));
  }
  return static_cast<T>(clamp_round(static_cast<float>(d) * mult + g.zadd, g.qmin, g.qmax));
}

#if QPLUGIN_SIMD
// Vector form of requant for 8-bit outputs (v is never NaN: a finite multiple of an int32 sum).
inline simd::VI requant_v(simd::VI d, simd::VF mult, simd::VF zadd, simd::VF lo, simd::VF hi) {
  return requant::clamp_round(simd::add_f(simd::mul_f(simd::to_f(d), mult), zadd), lo, hi);
}

// The window sums of 2 * kW * kLanes channels minus off, requantized and stored at o (channels_last
// average pooling): halves(u, &lo, &hi) gives 16-bit block u's two halves as int32 lanes, asked a
// pair of blocks at a time as they are stored (all 2 * kW first spill AVX2's registers where they
// come from 16-bit sums).
template <int kW, typename T, typename Halves>
inline void store_sums(T* o, Halves halves, simd::VI off, simd::VF mult, simd::VF zadd, simd::VF lo, simd::VF hi) {
  using namespace simd;
  auto rq = [&](VI d) {
    return requant_v(sub_i(d, off), mult, zadd, lo, hi);
  };
  VI a0, a1;
  if constexpr (kW == 1) {
    halves(0, &a0, &a1);
    store_q(o, rq(a0));
    store_q(o + kLanes, rq(a1));
  } else {
    for (int u = 0; u < kW; u += 2) {
      VI a2, a3;
      halves(u, &a0, &a1);
      halves(u + 1, &a2, &a3);
      store4_q(o + 4 * kLanes * (u / 2), rq(a0), rq(a1), rq(a2), rq(a3));
    }
  }
}
// store_sums's halves of 16-bit sums: sum(u) gives block u.
template <typename T, typename Sum>
inline auto widened(Sum sum) {
  return [sum](int u, simd::VI* lo, simd::VI* hi) {
    const bytes::W16 t = sum(u);
    *lo = bytes::widen_lo16<T>(t);
    *hi = bytes::widen_hi16<T>(t);
  };
}
#endif

// Sum of n contiguous values (8-bit: bytes::sum_bytes, exact in int64; the caller's Acc holds it).
template <typename T, typename Acc>
inline Acc sum_run(const T* p, int64_t n) {
  if constexpr (sizeof(T) == 1) {
    constexpr uint8_t kFlip = std::is_signed<T>::value ? 0x80 : 0;  // int8 as x + 128
    const int64_t s = bytes::sum_bytes(reinterpret_cast<const uint8_t*>(p), n, kFlip) - int64_t{kFlip} * n;
    return static_cast<Acc>(s);
  } else {
    Acc total = 0;
    for (int64_t i = 0; i < n; ++i) total += p[i];
    return total;
  }
}

// Depth window of output slice od and the first class index of its depth class
// (pool_kernel.h: 2-D pooling has one slice and no depth tables).
struct DepthWin {
  int64_t d0, d1, rbase;
};
inline DepthWin depth_win(const AvgPool2dGeom& g, int64_t od) {
  if (g.ds == nullptr) return {0, 1, 0};
  return {g.ds[od], g.de[od], static_cast<int64_t>(g.dcls[od]) * g.nrc};
}

// Rows [hs, he) of slices [d0, d1) of one plane: the input rows of one output row's windows.
// The per-row steps below that take them (the vector passes and the functions calling them, the
// stride 1 / 2 outputs, the requantization) are inlined by force into avg_pool_nchw: past a size
// GCC calls them out of line, reaching every value through memory, about twice as slow.
template <typename T>
struct WinRows {
  const T* ip;    // the plane
  int64_t slice;  // H * W
  int64_t W;
  int64_t d0, d1, hs, he;
  const T* row(int64_t d, int64_t h) const { return ip + d * slice + h * W; }
};

// Calls pass(pb, nv) over npos vectors of a row, four vectors a call and the last 1-3 in one more:
// each call walks the window's rows once.
template <typename Pass>
__attribute__((always_inline)) inline void by_fours(int64_t npos, Pass pass) {
  int64_t pb = 0;
  for (; pb + 4 <= npos; pb += 4) pass(pb, std::integral_constant<int, 4>());
  switch (npos - pb) {
    case 3: pass(pb, std::integral_constant<int, 3>()); break;
    case 2: pass(pb, std::integral_constant<int, 2>()); break;
    case 1: pass(pb, std::integral_constant<int, 1>()); break;
    default: break;
  }
}

// Whole-width windows of a single output column (OW == 1): each window a contiguous run per slice.
template <typename T, typename Acc>
void whole_width_rows(const T* ip, T* op, const DepthWin& dw, const AvgPool2dGeom& g) {
  const int64_t slice = g.H * g.W;
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    Acc s = 0;
    if (g.hs[oh] == 0 && g.he[oh] == g.H) {  // whole slices: one run over the volume
      s = sum_run<T, Acc>(ip + dw.d0 * slice, (dw.d1 - dw.d0) * slice);
    } else {
      for (int64_t d = dw.d0; d < dw.d1; ++d) {
        s += sum_run<T, Acc>(ip + d * slice + g.hs[oh] * g.W, (g.he[oh] - g.hs[oh]) * g.W);
      }
    }
    const int64_t k = (dw.rbase + g.rcls[oh]) * g.ncc + g.ccls[0];
    op[oh] = requant<T, Acc>(s - static_cast<Acc>(g.off[k]), g.mult[k], k, g);
  }
}

// Output columns [a, b) whose windows are whole and evenly spaced, ws = s * ow - p and we = ws + kw
// with a stride s of 1 or 2 (avg_pool 2x2 s2, 3x3 s2 p1, 3x3 s1 p1): their sums come a vector of
// outputs at a time from the column sums (even_run_row). Other columns (edges, other strides) add
// their column sums one by one. s = 0: no such range of at least min_len outputs.
struct EvenRun {
  int64_t s = 0, p = 0, kw = 0, a = 0, b = 0;
};
inline EvenRun even_run(const AvgPool2dGeom& g, int64_t min_len) {
  EvenRun run;
  if (g.OW < min_len) return run;
  const int64_t mid = g.OW / 2;  // mid + 1 < OW
  const int64_t st = g.ws[mid + 1] - g.ws[mid], kw = g.we[mid] - g.ws[mid];
  const int64_t pd = st * mid - g.ws[mid];
  auto whole = [&](int64_t ow) {
    return g.ws[ow] == st * ow - pd && g.we[ow] == g.ws[ow] + kw;
  };
  if ((st == 1 || st == 2) && kw >= 1) {
    int64_t a = mid, b = mid + 1;
    while (a > 0 && whole(a - 1)) --a;
    while (b < g.OW && whole(b)) ++b;
    if (b - a >= min_len) run = {st, pd, kw, a, b};
  }
  return run;
}

// Scalar column sums vs[w] (w in [w0, W)) of a window's rows: the reference, and the tail of rows
// narrower than a vector.
template <typename T, typename Acc>
inline void scalar_col_sums(Acc* vs, const WinRows<T>& r, int64_t w0) {
  std::fill(vs + w0, vs + r.W, Acc(0));
  for (int64_t d = r.d0; d < r.d1; ++d) {
    for (int64_t h = r.hs; h < r.he; ++h) {
      const T* src = r.row(d, h);
      for (int64_t w = w0; w < r.W; ++w) vs[w] += src[w];
    }
  }
}

#if QPLUGIN_SIMD
// 8-bit windows on whole 8-byte groups of a row: gs[j] = sum of group j (columns 8j .. 8j + 7) over
// the window's rows, PSADBW summing a group of a row in one op, the group sums added down the rows
// in 64-bit lanes. kB vectors of G::kBytes from vector pb, the last clamped to end at W (it overlaps
// groups done already: their sums are stored again).
template <typename G, int kB, typename T>
__attribute__((always_inline)) inline void group_pass(int64_t* gs, const WinRows<T>& r, int64_t pb) {
  constexpr uint8_t kFlip = std::is_signed<T>::value ? 0x80 : 0;  // int8 as x + 128
  const typename G::V flip = G::set1(kFlip);
  int64_t at[kB];
  typename G::V acc[kB];
  for (int b = 0; b < kB; ++b) {
    at[b] = std::min((pb + b) * G::kBytes, r.W - G::kBytes);
    acc[b] = G::zero();
  }
  for (int64_t d = r.d0; d < r.d1; ++d) {
    for (int64_t h = r.hs; h < r.he; ++h) {
      const T* src = r.row(d, h);
      for (int b = 0; b < kB; ++b) {
        typename G::V v = G::ld(src + at[b]);
        if (kFlip) v = G::xorb(v, flip);
        acc[b] = G::add64(acc[b], G::sad8(v));
      }
    }
  }
  for (int b = 0; b < kB; ++b) G::st(gs + at[b] / 8, acc[b]);
}
template <typename G, typename T>
__attribute__((always_inline)) inline void group_sums_as(int64_t* gs, const WinRows<T>& r) {
  by_fours((r.W + G::kBytes - 1) / G::kBytes, [&](int64_t pb, auto nb) __attribute__((always_inline)) {
    group_pass<G, decltype(nb)::value>(gs, r, pb);
  });
}
// The widest vector the row (>= 32 bytes) holds: a masked last load cost AVX-512 a fifth of
// adaptive 56 -> 7.
template <typename T>
__attribute__((always_inline)) inline void group_sums(int64_t* gs, const WinRows<T>& r) {
#if defined(QPLUGIN_ISA_AVX512)
  if (r.W >= 64) {
    group_sums_as<bytes::G64>(gs, r);
    return;
  }
#endif
  group_sums_as<bytes::G32>(gs, r);
}

// Column sums over the window's rows kept in registers, kV vectors of columns at a time from vector
// pb (the row's last one clamped to end at W: it overlaps done columns, which it stores again), and
// written once: a load-add-store of vs per input row ran at the mercy of vs's alignment (a heap
// address; split-line stores and failed forwarding made the same call's time vary by 1.75x from one
// process to the next).
template <int kV, typename T>
__attribute__((always_inline)) inline void col_sums_pass(int32_t* vs, const WinRows<T>& r, int64_t pb) {
  using namespace simd;
  int64_t w[kV];
  VI a[kV];
  for (int v = 0; v < kV; ++v) {
    w[v] = std::min((pb + v) * kLanes, r.W - kLanes);
    a[v] = set1_i(0);
  }
  for (int64_t d = r.d0; d < r.d1; ++d) {
    for (int64_t h = r.hs; h < r.he; ++h) {
      const T* src = r.row(d, h);
      for (int v = 0; v < kV; ++v) a[v] = add_i(a[v], load_q(src + w[v]));
    }
  }
  for (int v = 0; v < kV; ++v) storeu_i(vs + w[v], a[v]);
}
// 16-bit column sums (2 * kLanes columns a register, folded into int32 every 256 rows): half the
// widening loads and adds of int32 lanes.
template <int kV, typename T>
__attribute__((always_inline)) inline void col_sums16_pass(int32_t* vs, const WinRows<T>& r, int64_t pb) {
  using namespace simd;
  int64_t w[kV];
  bytes::W16 a[kV];
  VI lo[kV], hi[kV];
  for (int v = 0; v < kV; ++v) {
    w[v] = std::min((pb + v) * (2 * kLanes), r.W - 2 * kLanes);
    a[v] = bytes::zero16();
    lo[v] = hi[v] = set1_i(0);
  }
  int rows = 0;
  for (int64_t d = r.d0; d < r.d1; ++d) {
    for (int64_t h = r.hs; h < r.he; ++h) {
      const T* src = r.row(d, h);
      for (int v = 0; v < kV; ++v) a[v] = bytes::add16(a[v], bytes::load16(src + w[v]));
      if (++rows == 256) {
        for (int v = 0; v < kV; ++v) bytes::fold16<T>(&lo[v], &hi[v], &a[v]);
        rows = 0;
      }
    }
  }
  for (int v = 0; v < kV; ++v) {
    bytes::fold16<T>(&lo[v], &hi[v], &a[v]);
    storeu_i(vs + w[v], lo[v]);
    storeu_i(vs + w[v] + kLanes, hi[v]);
  }
}
// Stride 2, windows of <= 128 rows: the 16-bit column sums stored as they are (vs16). Its own loop,
// not col_sums16_pass with a flag: the fold's int32 registers (12 of AVX2's 16 with a[4]) would stay
// live through the row loop there, and the spills more than double AVX2's time.
template <int kV, typename T>
__attribute__((always_inline)) inline void col_sums16_keep(int16_t* vs16, const WinRows<T>& r, int64_t pb) {
  using namespace simd;
  int64_t w[kV];
  bytes::W16 a[kV];
  for (int v = 0; v < kV; ++v) {
    w[v] = std::min((pb + v) * (2 * kLanes), r.W - 2 * kLanes);
    a[v] = bytes::zero16();
  }
  for (int64_t d = r.d0; d < r.d1; ++d) {
    for (int64_t h = r.hs; h < r.he; ++h) {
      const T* src = r.row(d, h);
      for (int v = 0; v < kV; ++v) a[v] = bytes::add16(a[v], bytes::load16(src + w[v]));
    }
  }
  for (int v = 0; v < kV; ++v) bytes::storew(vs16 + w[v], a[v]);
}

// The vector column sums of an 8-bit row: into vs16 (16-bit, *row16 set) where vs16 is given, the
// window has <= 128 rows and the row holds a 16-bit vector, else into vs. Returns the first column
// they leave to scalar_col_sums (W: none; 0: a row narrower than a vector). (Other short windows,
// e.g. avg_pool2d 3x3 s1, keep int32 lanes: the fold's widening costs more than the adds it saves.)
template <typename T>
__attribute__((always_inline)) inline int64_t vector_col_sums(int32_t* vs, int16_t* vs16, const WinRows<T>& r,
                                                              int64_t win_rows, bool* row16) {
  using simd::kLanes;
  if (vs16 != nullptr && win_rows <= 128 && r.W >= 2 * kLanes) {
    by_fours((r.W + 2 * kLanes - 1) / (2 * kLanes), [&](int64_t pb, auto nv) __attribute__((always_inline)) {
      col_sums16_keep<decltype(nv)::value>(vs16, r, pb);
    });
    *row16 = true;
    return r.W;
  }
  if (win_rows >= 8 && r.W >= 2 * kLanes) {
    by_fours((r.W + 2 * kLanes - 1) / (2 * kLanes), [&](int64_t pb, auto nv) __attribute__((always_inline)) {
      col_sums16_pass<decltype(nv)::value>(vs, r, pb);
    });
    return r.W;
  }
  if (r.W >= kLanes) {
    by_fours((r.W + kLanes - 1) / kLanes, [&](int64_t pb, auto nv) __attribute__((always_inline)) {
      col_sums_pass<decltype(nv)::value>(vs, r, pb);
    });
    return r.W;
  }
  return 0;
}

// Outputs [run.a, run.b) of an 8-bit row from its column sums, a vector of outputs at a time: at
// stride 1 kw shifted loads; at stride 2 from vs16 (non-null: the row's sums are 16-bit) a pair of
// taps (columns 2 * ow + 2m, 2m + 1) per PMADDWD against (1, 1), a lone first odd or last even tap
// against (0, 1) / (1, 0), else from the int32 sums split even / odd (simd::deinterleave_i) per
// pair of taps. off32 / mult: the row's offsets and multipliers per output column.
template <typename T>
__attribute__((always_inline)) inline void even_run_row(T* o, const EvenRun& run, const int32_t* vs,
                                                        const int16_t* vs16, const int32_t* off32, const float* mult,
                                                        const AvgPool2dGeom& g) {
  using namespace simd;
  const VF zadd = set1_f(g.zadd), lo = set1_f(g.qmin), hi = set1_f(g.qmax);
  // the run's bounds and form as locals: the byte stores to o may alias run, which would then be
  // read again for every vector
  const int64_t a = run.a, b = run.b;
  const bool pairs16 = vs16 != nullptr, s1 = run.s == 1;
  const int64_t r0 = -run.p, r1 = run.kw - 1 - run.p;     // tap offsets from s * ow
  const int64_t m0 = r0 >= 0 ? r0 / 2 : -((1 - r0) / 2);  // floor(r0 / 2)
  auto sums = [&](int64_t ow0) {                          // the window sums of outputs ow0 .. ow0 + kLanes - 1
    VI t = set1_i(0);
    if (pairs16) {
      // lane k: the pair at columns 2 * (ow0 + k) + 2m, + 1 (a stored lane reads at most one column
      // past W, a zero of vs16's padding, weighted 0)
      for (int64_t m = m0; 2 * m <= r1; ++m) {
        const int32_t w_even = 2 * m >= r0 ? 1 : 0, w_odd = 2 * m + 1 <= r1 ? 1 : 0;
        t = add_i(t, madd16(bytes::loadw(vs16 + 2 * ow0 + 2 * m), set1_i(w_even | (w_odd << 16))));
      }
      return t;
    }
    if (s1) {
      for (int64_t r = r0; r <= r1; ++r) t = add_i(t, loadu_i(vs + ow0 + r));
    } else {
      // outputs ow0.. take column 2 * ow + r: the even (r = 2m) or odd (2m + 1) lanes of the
      // 2 * kLanes column sums from 2 * ow0 + 2m
      for (int64_t m = m0; 2 * m <= r1; ++m) {
        const int32_t* q = vs + 2 * ow0 + 2 * m;
        VI ev, od;
        deinterleave_i(loadu_i(q), loadu_i(q + kLanes), &ev, &od);
        if (2 * m >= r0) t = add_i(t, ev);
        if (2 * m + 1 <= r1) t = add_i(t, od);
      }
    }
    return t;
  };
  auto put = [&](int64_t ow0) {
    const VI d = sub_i(sums(ow0), loadu_i(off32 + ow0));
    store_q(o + ow0, requant_v(d, loadu_f(mult + ow0), zadd, lo, hi));
  };
  int64_t ow = a;
  for (; ow + kLanes <= b; ow += kLanes) put(ow);
  if (ow < b && b - a >= kLanes) {
    put(b - kLanes);    // the last outputs as one vector ending at b
  } else if (ow < b) {  // AVX-512, a run of 8-15 outputs: one masked vector
    const int n = static_cast<int>(b - ow);
    const VI d = sub_i(sums(ow), loadu_i_n(off32 + ow, n));
    store_u8_n(reinterpret_cast<uint8_t*>(o + ow), requant_v(d, loadu_f_n(mult + ow, n), zadd, lo, hi), n);
  }
}

// o[i] = the requantized d[i] (multiplier m[i]) for 8-bit outputs, a vector at a time, the last vector
// ending at n (it rewrites done ones). Returns the outputs done: n, or 0 when n < kLanes.
template <typename T>
__attribute__((always_inline)) inline int64_t requant_vectors(T* o, const int32_t* d, const float* m, int64_t n,
                                                              const AvgPool2dGeom& g) {
  using namespace simd;
  if (n < kLanes) return 0;
  const VF zadd = set1_f(g.zadd), lo = set1_f(g.qmin), hi = set1_f(g.qmax);
  auto put = [&](int64_t at) {
    store_q(o + at, requant_v(loadu_i(d + at), loadu_f(m + at), zadd, lo, hi));
  };
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) put(i);
  if (i < n) put(n - kLanes);
  return n;
}
#endif

// NCHW average pooling: per output row, the column sums of its window's rows (vector passes, 8-byte
// group sums, or scalar), then each window's sum from them, requantized with its window class's
// offset and multiplier.
template <typename T, typename Acc>
void avg_pool_nchw(const T* in, T* out, int64_t planes, const AvgPool2dGeom& g) {
  constexpr bool kAcc32 = std::is_same<Acc, int32_t>::value;
  std::vector<Acc> vs_buf;
  std::vector<int32_t> d32_buf;
  // (+32: the vector window sums load past a row's last column sum, by one at stride 2 and by fewer
  // than 32 for AVX-512's masked run of 8-15 outputs; the padding stays 0, no output uses it)
  Acc* const vs = aligned64(vs_buf, g.W + 32);
  std::vector<float> m32_buf;
  std::vector<int64_t> offr(g.OW);
  std::vector<int32_t> off32r(kAcc32 ? g.OW : 0);  // offr as int32 (int32 sums)
  std::vector<float> multr(g.OW);
  std::vector<int64_t> kr(g.OW);  // window class of each output column (requant's exact path)
  std::vector<int16_t> vs16_buf;
  int64_t built = -1;  // row class (depth class included) offr / multr hold
  // Whole-width windows of a single output column are contiguous runs (one per slice).
  const bool runs = g.OW == 1 && g.ws[0] == 0 && g.we[0] == g.W;
  const int64_t slice = g.H * g.W;
  // 8-bit windows on whole 8-byte groups of a row (adaptive pooling 56 -> 7, 112 -> 7 or 14): a
  // window's sum is its groups' (group_sums; no per-column sums).
  bool groups8 = false;
  std::vector<int64_t> gs_buf;
  int64_t* gs = nullptr;
  std::vector<int64_t> g8;      // window ow's groups: [g8[2 * ow], g8[2 * ow + 1])
  [[maybe_unused]] EvenRun hv;  // (hv.s = 0: none)
#if QPLUGIN_SIMD
  if constexpr (sizeof(T) == 1) {
    // Rows of >= 32 bytes: 32- or 64-byte vectors, the last one ending at W.
    groups8 = !runs && g.W % 8 == 0 && g.W >= 32;
    for (int64_t ow = 0; ow < g.OW && groups8; ++ow) groups8 = g.ws[ow] % 8 == 0 && g.we[ow] % 8 == 0;
    if (groups8) {
      gs = aligned64(gs_buf, g.W / 8);
      g8.resize(2 * g.OW);
      for (int64_t ow = 0; ow < g.OW; ++ow) g8[2 * ow] = g.ws[ow] / 8, g8[2 * ow + 1] = g.we[ow] / 8;
    }
    // (AVX-512: a run of 8-15 as one masked vector)
    if (kAcc32 && !runs && !groups8) hv = even_run(g, std::min(simd::kLanes, 8));
  }
  // Stride 2: the column sums stay 16-bit (vs16) and even_run_row takes its windows' sums straight
  // from them by PMADDWD: no widening of the column sums and no even / odd split. Windows of <= 128
  // rows (a sum of <= 128 * 255 is a positive int16 for PMADDWD); taller ones widen. Against widened
  // sums split even / odd this takes 0.56-0.86 of the time (avg_pool2d 2x2 / 3x3 s2, avg_pool3d
  // 2x2x2 / 3x3x3 s2, AVX2 and AVX-512).
  // AVX-512 keeps the int32 sums for 2-wide windows on rows under 4 * kLanes columns (its two
  // 32-column vectors overlap on a 56-column row): 2x2 s2 [8,64,56,56] is 7% slower with vs16.
  int16_t* vs16 = nullptr;
#if defined(QPLUGIN_ISA_AVX512)
  const bool use16 = hv.s == 2 && (hv.kw >= 3 || g.W >= 4 * simd::kLanes);
#else
  const bool use16 = hv.s == 2;
#endif
  if (use16) vs16 = aligned64(vs16_buf, g.W + 64);  // (zeros past W: the last outputs' loads read past it)
  // Rows of fewer outputs than a vector (adaptive pooling to 7x7: 7 a row) requantize a slice at a
  // time: their window sums minus offsets (d32) and multipliers (m32) wait in slice-sized rows, and
  // the slice's outputs, contiguous in the output, take vectors. Row by row they took the scalar
  // requantization, a third of adaptive_avg_pool2d 7x7 NCHW [8,64,56,56]'s time.
  const bool defer =
      sizeof(T) == 1 && kAcc32 && !runs && hv.s == 0 && g.OW < simd::kLanes && g.OH * g.OW >= simd::kLanes;
#else
  constexpr bool defer = false;
#endif
  [[maybe_unused]] float* const m32 = defer ? aligned64(m32_buf, g.OH * g.OW) : nullptr;  // the slice's multipliers
  // a row's window sums minus their offsets (defer: the slice's)
  int32_t* const d32 = aligned64(d32_buf, kAcc32 ? (defer ? g.OH * g.OW : g.OW) : 0);
  for (int64_t p = 0; p < planes; ++p) {
    const T* ip = in + p * g.D * slice;
    for (int64_t od = 0; od < g.OD; ++od) {
      const DepthWin dw = depth_win(g, od);
      T* op = out + (p * g.OD + od) * g.OH * g.OW;
      if (runs) {
        whole_width_rows<T, Acc>(ip, op, dw, g);
        continue;
      }
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        const WinRows<T> rows{ip, slice, g.W, dw.d0, dw.d1, g.hs[oh], g.he[oh]};
        const int64_t win_rows = (dw.d1 - dw.d0) * (g.he[oh] - g.hs[oh]);
        [[maybe_unused]] bool row16 = false;  // this row's column sums are vs16's
        int64_t w0 = 0;                       // columns [0, w0) summed by the vector loops
#if QPLUGIN_SIMD
        if constexpr (sizeof(T) == 1) {
          if (groups8) {
            group_sums(gs, rows);  // the row's sums are its 8-column groups': no column sums
            w0 = g.W;
          } else if constexpr (kAcc32) {
            w0 = vector_col_sums(vs, vs16, rows, win_rows, &row16);
          }
        }
#endif
        if (w0 < g.W) scalar_col_sums(vs, rows, w0);
        // Each window's sum straight from the column sums: independent short chains (a prefix
        // sum over the row was one serial chain of W adds).
        auto win = [&](int64_t ow) {
          if (groups8) {
            int64_t t = 0;
            for (int64_t j = g8[2 * ow]; j < g8[2 * ow + 1]; ++j) t += gs[j];
            if (std::is_signed<T>::value) t -= 128 * win_rows * (g.we[ow] - g.ws[ow]);
            return static_cast<Acc>(t);
          }
          Acc t = 0;
#if QPLUGIN_SIMD
          if (row16) {
            for (int64_t w = g.ws[ow]; w < g.we[ow]; ++w) t += vs16[w];
            return t;
          }
#endif
          for (int64_t w = g.ws[ow]; w < g.we[ow]; ++w) t += vs[w];
          return t;
        };
        const int64_t rc = dw.rbase + g.rcls[oh];
        if (rc != built) {
          built = rc;
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t k = built * g.ncc + g.ccls[ow];
            offr[ow] = g.off[k];
            multr[ow] = g.mult[k];
            kr[ow] = k;
            if constexpr (kAcc32) off32r[ow] = static_cast<int32_t>(g.off[k]);
          }
        }
        const float* mult = multr.data();
        T* o = op + oh * g.OW;
        if constexpr (kAcc32) {
#if QPLUGIN_SIMD
          if constexpr (sizeof(T) == 1) {
            if (hv.s != 0) {
              even_run_row(o, hv, vs, row16 ? vs16 : nullptr, off32r.data(), mult, g);
              for (int64_t ow = 0; ow < hv.a; ++ow) o[ow] = requant<T, Acc>(win(ow) - off32r[ow], mult[ow], kr[ow], g);
              for (int64_t ow = hv.b; ow < g.OW; ++ow) {
                o[ow] = requant<T, Acc>(win(ow) - off32r[ow], mult[ow], kr[ow], g);
              }
              continue;  // the row is done
            }
            if (defer) {
              for (int64_t ow = 0; ow < g.OW; ++ow) {
                d32[oh * g.OW + ow] = win(ow) - off32r[ow];
                m32[oh * g.OW + ow] = mult[ow];
              }
              continue;  // requantized with the slice's other rows
            }
          }
#endif
          for (int64_t ow = 0; ow < g.OW; ++ow) d32[ow] = win(ow) - off32r[ow];
          int64_t ow = 0;
#if QPLUGIN_SIMD
          if constexpr (sizeof(T) == 1) ow = requant_vectors(o, d32, mult, g.OW, g);
#endif
          for (; ow < g.OW; ++ow) o[ow] = requant<T, Acc>(d32[ow], mult[ow], kr[ow], g);
        } else {
          for (int64_t ow = 0; ow < g.OW; ++ow) o[ow] = requant<T, Acc>(win(ow) - offr[ow], mult[ow], kr[ow], g);
        }
      }
#if QPLUGIN_SIMD
      if constexpr (sizeof(T) == 1 && kAcc32) {
        if (defer) requant_vectors(op, d32, m32, g.OH * g.OW, g);  // the slice's outputs
      }
#endif
    }
  }
}

// Output rows [ob, oe) count rows of all OD slices: row r is slice r / OH, row r % OH.
template <typename T, typename Acc>
void avg_pool_nhwc(const T* in, T* out, int64_t C, int64_t cb, int64_t ce, int64_t ob, int64_t oe,
                   const AvgPool2dGeom& g) {
#if QPLUGIN_SIMD
  // Windows of >= 8 rows that overlap along W (3x3x3 s2; tall 2-d or overlapping adaptive windows)
  // share input columns: a row's windows then add up column sums, each input column's
  // taps of the window rows summed once per output row (16-bit, kW W16s a column, the last 8
  // columns in registers / on the stack) instead of once per window holding it: 3x3x3 s2 reads two
  // thirds of its taps, in 0.78-0.85 of the tap loop's time (avg_pool3d 3x3x3 s2 p1 NDHWC
  // [1,64,16,56,56] and [4,32,8,28,28], AVX2 and AVX-512). Windows of fewer rows keep the tap loop:
  // with 2-3 rows the shared taps save less than the column bookkeeping costs (avg_pool2d 3x3 s2
  // NHWC).
  // Windows of more than 8 columns, or of over 256 taps (16-bit sums exact up to 256), too.
  // (Window bounds non-decreasing, as pooling's are: the 8 newest columns hold every window's.)
  bool overlap = false, ordered = true;
  int64_t max_kw = 0;
  for (int64_t ow = 0; ow < g.OW; ++ow) {
    max_kw = std::max(max_kw, g.we[ow] - g.ws[ow]);
    if (ow + 1 < g.OW) {
      overlap = overlap || g.ws[ow + 1] < g.we[ow];
      ordered = ordered && g.ws[ow + 1] >= g.ws[ow] && g.we[ow + 1] >= g.we[ow];
    }
  }
#endif
  for (int64_t r = ob; r < oe; ++r) {
    const int64_t oh = r % g.OH;
    const DepthWin dw = depth_win(g, r / g.OH);
    const int64_t h0 = g.hs[oh], h1 = g.he[oh];
    int64_t c_px = cb;  // the channels from here on go through the per-window loops below
#if QPLUGIN_SIMD
    if constexpr (sizeof(T) == 1 && std::is_same<Acc, int32_t>::value) {
      const int64_t win_rows = (dw.d1 - dw.d0) * (h1 - h0);
      if (overlap && ordered && max_kw <= 8 && win_rows >= 8 && win_rows * max_kw <= 256) {
        using namespace simd;
        const VF zadd = set1_f(g.zadd), lo = set1_f(g.qmin), hi = set1_f(g.qmax);
        // (g's fields and the column sums as the lambda's own values: stores of vector types may
        // alias anything, so the sums in a heap buffer made every g field reload after each store)
        const int64_t H = g.H, W = g.W, OW = g.OW, d0 = dw.d0, d1 = dw.d1;
        const int64_t* const ws = g.ws;
        const int64_t* const we = g.we;
        auto cols = [&, H, W, OW, d0, d1, ws, we](int64_t c, auto width) {
          constexpr int kW = decltype(width)::value;
          bytes::W16 ring[8][kW];  // column w's sums at ring[w % 8] (windows of at most 8 columns)
          int64_t next = 0;        // columns below it are summed
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t w0 = ws[ow], w1 = we[ow];
            for (int64_t w = std::max(next, w0); w < w1; ++w) {
              bytes::W16 sw[kW];
              for (int u = 0; u < kW; ++u) sw[u] = bytes::zero16();
              for (int64_t d = d0; d < d1; ++d) {
                for (int64_t h = h0; h < h1; ++h) {
                  const T* p = in + ((d * H + h) * W + w) * C + c;
                  for (int u = 0; u < kW; ++u) sw[u] = bytes::add16(sw[u], bytes::load16(p + 2 * kLanes * u));
                }
              }
              for (int u = 0; u < kW; ++u) ring[w & 7][u] = sw[u];
            }
            next = std::max(next, w1);
            const int64_t k = (dw.rbase + g.rcls[oh]) * g.ncc + g.ccls[ow];
            // the window's columns' sums, added as store_sums asks for them
            const bytes::W16* col[8];
            const int64_t n = w1 - w0;
            for (int64_t j = 0; j < n; ++j) col[j] = ring[(w0 + j) & 7];
            store_sums<kW>(out + (r * OW + ow) * C + c, widened<T>([&](int u) {
                             bytes::W16 t = col[0][u];
                             for (int64_t j = 1; j < n; ++j) t = bytes::add16(t, col[j][u]);
                             return t;
                           }),
                           set1_i(static_cast<int32_t>(g.off[k])), set1_f(g.mult[k]), zadd, lo, hi);
          }
        };
        for (; c_px + 8 * kLanes <= ce; c_px += 8 * kLanes) cols(c_px, std::integral_constant<int, 4>());
        for (; c_px + 4 * kLanes <= ce; c_px += 4 * kLanes) cols(c_px, std::integral_constant<int, 2>());
        for (; c_px + 2 * kLanes <= ce; c_px += 2 * kLanes) cols(c_px, std::integral_constant<int, 1>());
      }
    }
#endif
    if (c_px == ce) continue;  // (every channel done above: no per-window set-up)
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const int64_t w0 = g.ws[ow], w1 = g.we[ow];
      const int64_t pidx = r * g.OW + ow;
      const int64_t k = (dw.rbase + g.rcls[oh]) * g.ncc + g.ccls[ow];
      const float m = g.mult[k];
      const int64_t off = g.off[k];
      T* o = out + pidx * C;
      int64_t c = c_px;
#if QPLUGIN_SIMD
      if constexpr (sizeof(T) == 1 && std::is_same<Acc, int32_t>::value) {
        using namespace simd;
        const VF mv = set1_f(m), zadd = set1_f(g.zadd), lo = set1_f(g.qmin), hi = set1_f(g.qmax);
        const VI offv = set1_i(static_cast<int32_t>(off));
        // Taps summed in 16-bit lanes (one widening load and one add per 2 * kLanes channels),
        // folded into the int32 sums every 256 taps: 256 * 255 < 2^16 (unsigned), 256 * -128 >=
        // -2^15 and 256 * 127 < 2^15 (signed), so the 16-bit sums never wrap. kW blocks of
        // 2 * kLanes channels a pass over the window: with 8 (up to 128 channels on AVX2, 256 on
        // AVX-512) a global pool reads its input once, not once per 4 * kLanes channels.
        // Windows of long rows (adaptive pooling: 8-16 taps a row, each row a run of 0.5-1 KB and the
        // next one a whole input row away) prefetch each tap's block of the window's next row as
        // they read this one (adaptive_avg_pool3d 2x7x7 NDHWC gains on AVX2 and AVX-512). Short
        // rows (avg_pool 2x2, 3x3) do not (it slows 3x3x3 down), nor whole rows, one contiguous run
        // the hardware streams (a global pool slows down with it).
        auto block = [&](auto width, auto prefetch) {
          constexpr int kW = decltype(width)::value;
          VI a[2 * kW];
          W16 sw[kW];
          for (int u = 0; u < kW; ++u) sw[u] = zero16(), a[2 * u] = a[2 * u + 1] = set1_i(0);
          int64_t taps = 0;
          for (int64_t d = dw.d0; d < dw.d1; ++d) {
            for (int64_t h = h0; h < h1; ++h) {
              const T* s = in + ((d * g.H + h) * g.W + w0) * C + c;
              // from a tap to the same tap of the window's next row (the next slice's first at the last)
              const int64_t ahead = h + 1 < h1 ? g.W * C : (d + 1 < dw.d1 ? (g.H - (h1 - 1 - h0)) * g.W * C : 0);
              for (int64_t w = w0; w < w1;) {
                const int64_t run = std::min<int64_t>(w1 - w, 256 - taps);
                for (int64_t j = 0; j < run; ++j, s += C) {
                  if constexpr (decltype(prefetch)::value) {
                    __builtin_prefetch(s + ahead, 0, 3);  // PREFETCHT0 / PRFM PLDL1KEEP
                  }
                  for (int u = 0; u < kW; ++u) sw[u] = add16(sw[u], load16(s + 2 * kLanes * u));
                }
                w += run;
                taps += run;
                if (taps == 256) {
                  for (int u = 0; u < kW; ++u) fold16<T>(&a[2 * u], &a[2 * u + 1], &sw[u]);
                  taps = 0;
                }
              }
            }
          }
          for (int u = 0; u < kW; ++u) fold16<T>(&a[2 * u], &a[2 * u + 1], &sw[u]);
          store_sums<kW>(
              o + c,
              [&](int u, VI* l, VI* h) {
                *l = a[2 * u], *h = a[2 * u + 1];
              },
              offv, mv, zadd, lo, hi);
        };
        // Windows of <= 256 taps in rows of < 8 (avg_pool 2x2 / 3x3 / 2x2x2 / 3x3x3): no fold and
        // no count of taps inside the tap loop, no int32 sums live through it: 0.77-0.86 of
        // block's time (avg_pool3d 2x2x2 NDHWC [1,64,16,56,56], avg_pool2d 2x2 s2 and 3x3 s2 p1
        // NHWC [8,64,56,56], AVX2 and AVX-512). Rows of >= 8 keep block's prefetch (adaptive 7x7
        // NHWC [1,64,112,112] 2-4% slower without it).
        auto block_short = [&](auto width) {
          constexpr int kW = decltype(width)::value;
          W16 sw[kW];
          for (int u = 0; u < kW; ++u) sw[u] = zero16();
          for (int64_t d = dw.d0; d < dw.d1; ++d) {
            for (int64_t h = h0; h < h1; ++h) {
              const T* s = in + ((d * g.H + h) * g.W + w0) * C + c;
              for (int64_t w = w0; w < w1; ++w, s += C) {
                for (int u = 0; u < kW; ++u) sw[u] = add16(sw[u], load16(s + 2 * kLanes * u));
              }
            }
          }
          store_sums<kW>(o + c, widened<T>([&](int u) {
                           return sw[u];
                         }),
                         offv, mv, zadd, lo, hi);
        };
        // Blocks of 8, 4, then 2 vectors of channels through one of the block loops above.
        auto blocks = [&](auto f) {
          for (; c + 8 * kLanes <= ce; c += 8 * kLanes) f(std::integral_constant<int, 4>());
          for (; c + 4 * kLanes <= ce; c += 4 * kLanes) f(std::integral_constant<int, 2>());
          // (32 channels on AVX-512, 16 on AVX2: one 16-bit register; two int32 passes over the
          // window cost AVX-512 twice AVX2's time on a 32-channel global pool)
          for (; c + 2 * kLanes <= ce; c += 2 * kLanes) f(std::integral_constant<int, 1>());
        };
        if (w1 - w0 < 8 && (dw.d1 - dw.d0) * (h1 - h0) * (w1 - w0) <= 256) {
          blocks([&](auto width) {
            block_short(width);
          });
        } else if (w1 - w0 >= 8 && w1 - w0 < g.W) {  // (whole rows: the window is one run, streamed already)
          blocks([&](auto width) {
            block(width, std::true_type());
          });
        } else {
          blocks([&](auto width) {
            block(width, std::false_type());
          });
        }
        for (; c + kLanes <= ce; c += kLanes) {
          VI a0 = set1_i(0);
          for (int64_t d = dw.d0; d < dw.d1; ++d) {
            for (int64_t h = h0; h < h1; ++h) {
              const T* s = in + ((d * g.H + h) * g.W + w0) * C + c;
              for (int64_t w = w0; w < w1; ++w, s += C) a0 = add_i(a0, load_q(s));
            }
          }
          store_q(o + c, requant_v(sub_i(a0, offv), mv, zadd, lo, hi));
        }
      }
#endif
      for (; c < ce; ++c) {
        Acc a = 0;
        for (int64_t d = dw.d0; d < dw.d1; ++d) {
          for (int64_t h = h0; h < h1; ++h) {
            const T* s = in + ((d * g.H + h) * g.W + w0) * C + c;
            for (int64_t w = w0; w < w1; ++w, s += C) a += *s;
          }
        }
        o[c] = requant<T, Acc>(a - static_cast<Acc>(off), m, k, g);
      }
    }
  }
}

}  // namespace

void max_pool2d_nchw_u8(const uint8_t* in, uint8_t* out, int64_t planes, const MaxPool2dGeom& g) {
  max_pool_nchw(in, out, planes, g);
}
void max_pool2d_nchw_s8(const int8_t* in, int8_t* out, int64_t planes, const MaxPool2dGeom& g) {
  max_pool_nchw(in, out, planes, g);
}
void max_pool2d_nchw_s32(const int32_t* in, int32_t* out, int64_t planes, const MaxPool2dGeom& g) {
  max_pool_nchw(in, out, planes, g);
}
void max_pool2d_nhwc_u8(const uint8_t* in, uint8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin,
                        int64_t oh_end, const MaxPool2dGeom& g) {
  max_pool_nhwc(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void max_pool2d_nhwc_s8(const int8_t* in, int8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin,
                        int64_t oh_end, const MaxPool2dGeom& g) {
  max_pool_nhwc(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void max_pool2d_nhwc_s32(const int32_t* in, int32_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin,
                         int64_t oh_end, const MaxPool2dGeom& g) {
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
void avg_pool2d_nhwc_u8(const uint8_t* in, uint8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin,
                        int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<uint8_t, int32_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void avg_pool2d_nhwc_s8(const int8_t* in, int8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin,
                        int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<int8_t, int32_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void avg_pool2d_nhwc_wide_u8(const uint8_t* in, uint8_t* out, int64_t C, int64_t c_begin, int64_t c_end,
                             int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<uint8_t, int64_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void avg_pool2d_nhwc_wide_s8(const int8_t* in, int8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin,
                             int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<int8_t, int64_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}
void avg_pool2d_nhwc_s32(const int32_t* in, int32_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin,
                         int64_t oh_end, const AvgPool2dGeom& g) {
  avg_pool_nhwc<int32_t, int64_t>(in, out, C, c_begin, c_end, oh_begin, oh_end, g);
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
