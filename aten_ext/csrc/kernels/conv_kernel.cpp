// Convolution kernels, compiled once per ISA (kernels/isa.h). See conv_kernel.h
// for the contract and docs/design/conv.md for the design.
#include "kernels/conv_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/gemm/requant.h"
#include "kernels/simd.h"
#if defined(QPLUGIN_ISA_NEON)
#include <arm_neon.h>

#endif

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {

namespace {

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The depthwise kernels' interior output columns [*lo, *hi): all KW taps inside the image.
inline void dw_interior_cols(const ConvGeom& g, int64_t* lo, int64_t* hi) {
  const int64_t last = g.W - 1 - (g.KW - 1) * g.DW + g.PW;  // ow * SW <= last
  *hi = std::min(last < 0 ? 0 : last / g.SW + 1, g.OW);
  *lo = std::min((g.PW + g.SW - 1) / g.SW, *hi);
}

// The kernel rows (kd, kh) of output row (od, oh) that lie inside the image: row[j] = kd * KH + kh
// and off[j], the byte offset of its input row (column 0) in the image. Returns their count.
inline int64_t dw_valid_rows(const ConvGeom& g, int64_t od, int64_t oh, int64_t* row, int64_t* off) {
  int64_t n = 0;
  for (int64_t kd = 0; kd < g.KD; ++kd) {
    const int64_t id = od * g.SD - g.PD + kd * g.DD;
    if (id < 0 || id >= g.D) continue;
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const int64_t ih = oh * g.SH - g.PH + kh * g.DH;
      if (ih < 0 || ih >= g.H) continue;
      row[n] = kd * g.KH + kh;
      off[n] = (id * g.H + ih) * g.W * g.C;
      ++n;
    }
  }
  return n;
}

// ---- the depthwise epilogue (scalar definition; the vector one mirrors it lane by lane; the GEMM
// paths run the engine's, kernels/gemm/qgemm_kernel.cpp) ----
// v, then the engine's requantize step (kernels/gemm/requant.h). The same bytes as
// clamp(round(clamp(v, -1024, 1024)) + y_zp, qmin, qmax) of conv_kernel.h: the integer bounds
// qmin - y_zp, qmax - y_zp lie within [-255, 255] and rounding is monotonic.
inline uint8_t finish_one(int32_t t, float mult, float bias, const uint8_t* add, const ConvEpilogue& ep) {
  float v = static_cast<float>(t) * mult + bias;
  if (add != nullptr) {
    v = v + static_cast<float>(static_cast<int32_t>(*add) - ep.add_zp) * ep.add_mult;
  }
  return static_cast<uint8_t>(requantize<float>(v, ep.y_zp, ep.qmin, ep.qmax));
}

#if QPLUGIN_SIMD
using namespace simd;

// Epilogue for kLanes channels [n, n + cnt) of one output pixel; t already corrected.
inline void finish_vec(VI t, VF mult, VF bias, const uint8_t* add, int cnt, const ConvEpilogue& ep, uint8_t* y) {
  VF v = add_f(mul_f(to_f(t), mult), bias);
  if (add != nullptr) {
    VF a = to_f(sub_i(load_u8_n(add, cnt), set1_i(ep.add_zp)));
    v = add_f(v, mul_f(a, set1_f(ep.add_mult)));
  }
  store_u8_n(y, requant::requantize(v, requant::make_bounds(ep.y_zp, ep.qmin, ep.qmax)), cnt);
}
#endif  // QPLUGIN_SIMD

}  // namespace

// ---------------------------------------------------------------------------
int64_t conv_a_elem_size() {
#if defined(QPLUGIN_GEMM_I16)
  return 2;
#else
  return 1;
#endif
}

int64_t conv_a_row_elems(int64_t k) { return round_up(k, 4); }

namespace {
// dst[0, n) = src[0, n), widened to T. Fixed-size chunks so the compiler emits
// vector moves instead of a memcpy call (rows are short: icg or KW * C bytes).
template <typename T>
inline void copy_widen(T* dst, const uint8_t* src, int64_t n) {
  int64_t i = 0;
#if defined(QPLUGIN_GEMM_I16)
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_cvtepu8_epi16(v));
  }
  // a grouped conv's taps are icg bytes: 8 or 4 of them per copy
  if (i + 8 <= n) {
    const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_cvtepu8_epi16(v));
    i += 8;
  }
  if (i + 4 <= n) {
    int32_t four;
    std::memcpy(&four, src + i, 4);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + i), _mm_cvtepu8_epi16(_mm_cvtsi32_si128(four)));
    i += 4;
  }
#else
  if (sizeof(T) == 1) {
    for (; i + 32 <= n; i += 32) std::memcpy(dst + i, src + i, 32);
    for (; i + 8 <= n; i += 8) std::memcpy(dst + i, src + i, 8);
  }
#endif
  for (; i < n; ++i) dst[i] = static_cast<T>(src[i]);
}
template <typename T>
inline void fill_n(T* dst, T v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = v;
}
}  // namespace

void conv_im2col(const uint8_t* x, const ConvGeom& g, int64_t group, int64_t m0, int64_t mcount, void* a, int64_t kp,
                 int32_t x_zp) {
#if defined(QPLUGIN_GEMM_I16)
  using T = int16_t;
#else
  using T = uint8_t;
#endif
  T* out = static_cast<T*>(a);
  const int64_t icg = g.icg;
  const int64_t K = g.K();
  const T fill = static_cast<T>(x_zp);
  const int64_t c0 = group * icg;
  // One group spanning all channels with unit dilation along W: the KW taps of a
  // kernel row are KW * C contiguous input bytes.
  const bool span = icg == g.C && g.DW == 1;
  const uint8_t* x_end = x + g.D * g.H * g.W * g.C;
  (void)x_end;
  for (int64_t i = 0; i < mcount; ++i) {
    const int64_t m = m0 + i;
    const int64_t ow = m % g.OW;
    const int64_t oh = (m / g.OW) % g.OH;
    const int64_t od = m / (g.OW * g.OH);
    T* row = out + i * kp;
    T* p = row;
    const int64_t iw0 = ow * g.SW - g.PW;
    const bool w_inside = iw0 >= 0 && iw0 + (g.KW - 1) * g.DW < g.W;
    for (int64_t kd = 0; kd < g.KD; ++kd) {
      const int64_t id = od * g.SD - g.PD + kd * g.DD;
      const bool din = id >= 0 && id < g.D;
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        const int64_t ih = oh * g.SH - g.PH + kh * g.DH;
        const bool hin = din && ih >= 0 && ih < g.H;
        if (!hin) {
          fill_n(p, fill, g.KW * icg);
          p += g.KW * icg;
          continue;
        }
        const uint8_t* xrow = x + (id * g.H + ih) * g.W * g.C + c0;
        if (span && w_inside) {
          // Short rows (stem convs, C = 3): copy (AVX2: widen) whole 16-byte chunks; the
          // elements past the row land where later taps (or the zeroed K padding / buffer
          // slack of 64 bytes) are written.
          const int64_t len = g.KW * icg;
          const uint8_t* src = xrow + iw0 * g.C;
          if (len < 64 && src + ((len + 15) & ~int64_t(15)) <= x_end) {
#if defined(QPLUGIN_GEMM_I16)
            for (int64_t o = 0; o < len; o += 16) {
              const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + o));
              _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + o), _mm256_cvtepu8_epi16(v));
            }
#else
            for (int64_t o = 0; o < len; o += 16) std::memcpy(p + o, src + o, 16);
#endif
            p += len;
            continue;
          }
          copy_widen(p, xrow + iw0 * g.C, g.KW * icg);
          p += g.KW * icg;
          continue;
        }
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const int64_t iw = iw0 + kw * g.DW;
          if (iw >= 0 && iw < g.W) {
            copy_widen(p, xrow + iw * g.C, icg);
          } else {
            fill_n(p, fill, icg);
          }
          p += icg;
        }
      }
    }
    for (int64_t c = K; c < kp; ++c) row[c] = 0;
  }
}

namespace {
// One output pixel, channels [c_begin, C), any taps in or out of the image; the row's valid
// kernel rows: nrows input row offsets prow and first taps ptap (dw_valid_rows).
inline void dw_pixel(const uint8_t* x, const ConvGeom& g, const int64_t* prow, const int64_t* ptap, int64_t nrows,
                     int64_t ow, int64_t c_begin, const int32_t* w, int32_t x_zp, const ConvEpilogue& ep, uint8_t* yp,
                     const uint8_t* addp, int64_t* off, int64_t* tap) {
  const int64_t C = g.C;
  int64_t nv = 0;
  for (int64_t j = 0; j < nrows; ++j) {
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t iw = ow * g.SW - g.PW + kw * g.DW;
      if (iw < 0 || iw >= g.W) continue;
      off[nv] = prow[j] + iw * C;
      tap[nv] = ptap[j] + kw;
      ++nv;
    }
  }
  int64_t c = c_begin;
#if QPLUGIN_SIMD
  const VI vzp = set1_i(x_zp);
  for (; c < C; c += kLanes) {
    const int cnt = static_cast<int>(std::min<int64_t>(kLanes, C - c));
    VI acc = set1_i(0);
    for (int64_t t = 0; t < nv; ++t) {
      const VI xv = sub_i(load_u8_n(x + off[t] + c, cnt), vzp);
      acc = add_i(acc, madd16(xv, loadu_i_n(w + tap[t] * C + c, cnt)));
    }
    finish_vec(acc, loadu_f_n(ep.mult + c, cnt), loadu_f_n(ep.bias + c, cnt), addp != nullptr ? addp + c : nullptr, cnt,
               ep, yp + c);
  }
#endif
  for (; c < C; ++c) {
    int32_t s = 0;
    for (int64_t t = 0; t < nv; ++t) {
      const int32_t xv = static_cast<int32_t>(x[off[t] + c]) - x_zp;
      const int32_t wv = static_cast<int16_t>(static_cast<uint16_t>(w[tap[t] * C + c] & 0xFFFF));
      s += xv * wv;
    }
    yp[c] = finish_one(s, ep.mult[c], ep.bias[c], addp != nullptr ? addp + c : nullptr, ep);
  }
}
}  // namespace

#if defined(QPLUGIN_ISA_AVX512) || defined(QPLUGIN_ISA_AVXVNNI)
#define QPLUGIN_DW_VNNI 1
#endif

#if defined(QPLUGIN_DW_VNNI)
namespace {
// Depthwise on VNNI (AVX-512 and AVX-VNNI paths, KW <= 4, every (w - w_zp) in int8, no residual add): one
// vpdpbusd per kernel row and 16 channels. For a block of 64 channels, the input bytes of the
// KW (<= 4) taps of a kernel row are interleaved by two rounds of in-lane unpacks
// (unpack8(x[p], x[p+d]), unpack8(x[p+2d], x[p+3d]), then unpack16), giving 4 vectors whose
// int32 lane (L, i) holds channel 16 L + 4 q + i (q = vector 0..3) as 4 bytes; the weights are
// interleaved the same way once per packed conv (conv_depthwise_pack). Out-of-image columns read x_zp; the x_zp term is
// one per-row-set constant. The epilogue runs in that lane order; packs_epi32 / packus_epi16 undo the permutation
// exactly (per 128-bit lane: q0 q1 | q2 q3 -> channels 16 L + 0..15). The int32 sums are exact and the float steps are
// finish_one's, so the bytes equal the generic loop's. Returns false (nothing written) when not applicable. Vector
// widths: AVX-512 runs 64-channel blocks in zmm (simd::Zmm) and a tail of <= 32 channels in ymm (simd::Ymm; same
// in-lane unpacks, half the lanes); AVX-VNNI runs 32-channel ymm blocks only.

// acc[q] += the interleaved taps of pixel column p (first tap) of NR (or nr) kernel rows.
// INTERIOR: all KW taps inside the image (no checks).
template <class V, int NR, int KWT, bool INTERIOR>
inline void dw_vnni_pixel(const uint8_t* const* xr, const typename V::I (*wv)[4], const int32_t* const* wp, int64_t nr,
                          int64_t p, int64_t W, int64_t C, int64_t DW, int64_t kw_rt, typename V::M mask,
                          typename V::I vzp, typename V::I (&acc)[4]) {
  using I = typename V::I;
  constexpr int kL = V::kCh / 4;  // int32 lanes per vector
  const int64_t KW = KWT > 0 ? KWT : kw_rt;
  const int64_t rows = NR > 0 ? NR : nr;
  const int64_t off = p * C;
  const int64_t dc = DW * C;
  for (int64_t j = 0; j < rows; ++j) {
    const uint8_t* r = xr[j] + off;
    I x0, x1, x2, x3;
    if (INTERIOR) {
      x0 = V::maskz_load8(mask, r);
      x1 = KW > 1 ? V::maskz_load8(mask, r + dc) : vzp;
      x2 = KW > 2 ? V::maskz_load8(mask, r + 2 * dc) : vzp;
      x3 = KW > 3 ? V::maskz_load8(mask, r + 3 * dc) : vzp;
    } else {
      auto ld = [&](int64_t t) {
        const int64_t pos = p + t * DW;
        return (t < KW && pos >= 0 && pos < W) ? V::maskz_load8(mask, r + t * dc) : vzp;
      };
      x0 = ld(0);
      x1 = ld(1);
      x2 = ld(2);
      x3 = ld(3);
    }
    const I l01 = V::unlo8(x0, x1), h01 = V::unhi8(x0, x1);
    const I l23 = V::unlo8(x2, x3), h23 = V::unhi8(x2, x3);
    I w0, w1, w2, w3;
    if (NR > 0) {
      w0 = wv[j][0];
      w1 = wv[j][1];
      w2 = wv[j][2];
      w3 = wv[j][3];
    } else {
      w0 = V::loadu(wp[j]);
      w1 = V::loadu(wp[j] + kL);
      w2 = V::loadu(wp[j] + 2 * kL);
      w3 = V::loadu(wp[j] + 3 * kL);
    }
    acc[0] = V::dp(acc[0], V::unlo16(l01, l23), w0);
    acc[1] = V::dp(acc[1], V::unhi16(l01, l23), w1);
    acc[2] = V::dp(acc[2], V::unlo16(h01, h23), w2);
    acc[3] = V::dp(acc[3], V::unhi16(h01, h23), w3);
  }
}

template <class V, int NR, int KWT>
void dw_vnni_row(const uint8_t* const* xr, const int32_t* const* wp, int64_t nr, const ConvGeom& g, int64_t cb,
                 const typename V::I (&corr)[4], const float* mp, const float* bp, const ConvEpilogue& ep,
                 uint8_t* yrow, typename V::I vzp) {
  using I = typename V::I;
  using F = typename V::F;
  constexpr int kL = V::kCh / 4;
  const int64_t C = g.C;
  const int64_t KW = KWT > 0 ? KWT : g.KW;
  const int cnt = static_cast<int>(std::min<int64_t>(V::kCh, C - cb));
  const typename V::M mask = V::mask(cnt);
  I wv[NR > 0 ? NR : 1][4];
  if (NR > 0) {
    for (int j = 0; j < NR; ++j)
      for (int q = 0; q < 4; ++q) wv[j][q] = V::loadu(wp[j] + kL * q);
  }
  // finish_vec's requantize step: clamp_round to [qmin - y_zp, qmax - y_zp], then + y_zp in 16
  // bits after the first pack (the sum is already in 0..255).
  const F hi = V::set1_ps(static_cast<float>(ep.qmax - ep.y_zp));
  const F lo = V::set1_ps(static_cast<float>(ep.qmin - ep.y_zp));
  const I yzp = V::set1_16(ep.y_zp);
  const F mq[4] = {V::loadu_ps(mp), V::loadu_ps(mp + kL), V::loadu_ps(mp + 2 * kL), V::loadu_ps(mp + 3 * kL)};
  auto finish = [&](I(&acc)[4], uint8_t* out) {
    I r[4];
    for (int q = 0; q < 4; ++q) {
      const F v = V::add(V::mul(V::cvt_ps(acc[q]), mq[q]), V::loadu_ps(bp + kL * q));
      r[q] = requant::clamp_round<V>(v, lo, hi);  // |r| <= 255: the packs never saturate
    }
    const I s01 = V::add16(V::packs32(r[0], r[1]), yzp);
    const I s23 = V::add16(V::packs32(r[2], r[3]), yzp);
    V::mask_store8(out, mask, V::packus16(s01, s23));
  };
  // Interior columns: first tap >= 0 and last tap < W.
  int64_t ow_lo, ow_hi;
  dw_interior_cols(g, &ow_lo, &ow_hi);
  for (int64_t ow = 0; ow < g.OW; ++ow) {
    if (ow == ow_lo) {
      // Stride 2, 3 taps: the (x[p + 2], x[p + 3]) byte pairs of one pixel are the (x[p'],
      // x[p' + 1]) pairs of the next (p' = p + 2): carry them over (x[p + 3] is read for real,
      // inside the image, and meets a zero weight byte).
      const int64_t ow_pair = g.W - 4 + g.PW < 0 ? 0 : std::min<int64_t>(ow_hi, (g.W - 4 + g.PW) / 2 + 1);
      if (NR > 0 && KWT == 3 && g.SW == 2 && g.DW == 1 && ow < ow_pair) {
        I pl[NR > 0 ? NR : 1], ph[NR > 0 ? NR : 1];
        for (int j = 0; j < NR; ++j) {
          const uint8_t* r = xr[j] + (ow * 2 - g.PW) * C;
          const I x0 = V::maskz_load8(mask, r), x1 = V::maskz_load8(mask, r + C);
          pl[j] = V::unlo8(x0, x1);
          ph[j] = V::unhi8(x0, x1);
        }
        for (; ow < ow_pair; ++ow) {
          I acc[4] = {corr[0], corr[1], corr[2], corr[3]};
          const int64_t off = (ow * 2 - g.PW) * C;
          for (int j = 0; j < NR; ++j) {
            const uint8_t* r = xr[j] + off;
            const I x2 = V::maskz_load8(mask, r + 2 * C), x3 = V::maskz_load8(mask, r + 3 * C);
            const I l23 = V::unlo8(x2, x3), h23 = V::unhi8(x2, x3);
            acc[0] = V::dp(acc[0], V::unlo16(pl[j], l23), wv[j][0]);
            acc[1] = V::dp(acc[1], V::unhi16(pl[j], l23), wv[j][1]);
            acc[2] = V::dp(acc[2], V::unlo16(ph[j], h23), wv[j][2]);
            acc[3] = V::dp(acc[3], V::unhi16(ph[j], h23), wv[j][3]);
            pl[j] = l23;
            ph[j] = h23;
          }
          finish(acc, yrow + ow * C + cb);
        }
      }
      for (; ow < ow_hi; ++ow) {
        I acc[4] = {corr[0], corr[1], corr[2], corr[3]};
        dw_vnni_pixel<V, NR, KWT, true>(xr, wv, wp, nr, ow * g.SW - g.PW, g.W, C, g.DW, KW, mask, vzp, acc);
        finish(acc, yrow + ow * C + cb);
      }
      if (ow >= g.OW) break;
    }
    I acc[4] = {corr[0], corr[1], corr[2], corr[3]};
    dw_vnni_pixel<V, NR, KWT, false>(xr, wv, wp, nr, ow * g.SW - g.PW, g.W, C, g.DW, KW, mask, vzp, acc);
    finish(acc, yrow + ow * C + cb);
  }
}

// One channel block [cb, cb + V::kCh) of output row r (valid kernel rows jrow / joff).
template <class V>
void dw_vnni_block(const uint8_t* x, const ConvGeom& g, int64_t cb, const int32_t* wq, const int32_t* wsum,
                   const float* mb, const float* bb, const int64_t* jrow, const int64_t* joff, int64_t nr, int32_t x_zp,
                   const ConvEpilogue& ep, uint8_t* yrow, const uint8_t** xr, const int32_t** wp) {
  using I = typename V::I;
  constexpr int kCh = V::kCh, kL = V::kCh / 4;
  I corr[4];
  for (int q = 0; q < 4; ++q) {
    I s = V::zero();
    for (int64_t j = 0; j < nr; ++j) s = V::add32(s, V::loadu(wsum + jrow[j] * kCh + kL * q));
    corr[q] = V::mullo32(s, V::set1_32(-x_zp));
  }
  for (int64_t j = 0; j < nr; ++j) {
    xr[j] = x + joff[j] + cb;
    wp[j] = wq + jrow[j] * kCh;
  }
  const I vzp = V::set1_8(x_zp);
  if (nr == 3 && g.KW == 3) {
    dw_vnni_row<V, 3, 3>(xr, wp, nr, g, cb, corr, mb, bb, ep, yrow, vzp);
  } else if (nr == 2 && g.KW == 3) {
    dw_vnni_row<V, 2, 3>(xr, wp, nr, g, cb, corr, mb, bb, ep, yrow, vzp);
  } else {
    dw_vnni_row<V, 0, 0>(xr, wp, nr, g, cb, corr, mb, bb, ep, yrow, vzp);
  }
}

// AVX-512: blocks of 64 channels while more than 32 remain, then one block of <= 32 (ymm);
// AVX-VNNI: blocks of 32 (ymm). c_tail: where the 32-channel blocks start ([c_tail, C) is empty
// when c_tail == C); cpad: the padded channel count.
struct DwBlocks {
  int64_t c_tail, cpad;
  explicit DwBlocks(int64_t C) {
#if defined(QPLUGIN_ISA_AVX512)
    const int64_t n64 = C > 32 ? (C - 1) / 64 + ((C - 1) % 64 >= 32 ? 1 : 0) : 0;
#else
    const int64_t n64 = 0;
#endif
    c_tail = n64 * 64;
    cpad = c_tail + (C - c_tail + 31) / 32 * 32;
  }
};

// Lane l of vector q of the block at channel cb (either width) holds channel dw_lane_channel(cb, q, l).
inline int64_t dw_lane_channel(int64_t cb, int64_t q, int64_t l) { return cb + 16 * (l / 4) + 4 * q + (l % 4); }

// wpk: conv_depthwise_pack's layout.
bool dw_vnni(const uint8_t* x, const ConvGeom& g, int64_t r0, int64_t rcount, const int32_t* wpk, int32_t x_zp,
             const ConvEpilogue& ep, uint8_t* y) {
  if (g.KW > 4 || ep.add != nullptr) return false;
  const int64_t C = g.C;
  const int64_t KR = g.KD * g.KH;
  const DwBlocks blk(C);
  const int64_t c_tail = blk.c_tail;
  const int32_t* wq = wpk;
  const int32_t* wsum = wpk + KR * blk.cpad;
  // mult / bias permuted as the weights' lanes: [4][kCh / 4] per block, block data at cb.
  std::vector<float> mp(static_cast<size_t>(blk.cpad), 0.0f), bp(mp.size(), 0.0f);
  for (int64_t cb = 0; cb < C;) {
    const int64_t kl = (cb < c_tail ? 64 : 32) / 4;
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t l = 0; l < kl; ++l) {
        const int64_t c = dw_lane_channel(cb, q, l);
        if (c >= C) continue;
        mp[cb + q * kl + l] = ep.mult[c];
        bp[cb + q * kl + l] = ep.bias[c];
      }
    cb += 4 * kl;
  }
  std::vector<int64_t> jrow(static_cast<size_t>(KR)), joff(static_cast<size_t>(KR));
  std::vector<const uint8_t*> xr(static_cast<size_t>(KR));
  std::vector<const int32_t*> wp(static_cast<size_t>(KR));
  for (int64_t r = r0; r < r0 + rcount; ++r) {
    const int64_t nr = dw_valid_rows(g, r / g.OH, r % g.OH, jrow.data(), joff.data());
    uint8_t* yrow = y + r * g.OW * C;
#if defined(QPLUGIN_ISA_AVX512)
    for (int64_t cb = 0; cb < c_tail; cb += 64) {
      dw_vnni_block<Zmm>(x, g, cb, wq + KR * cb, wsum + KR * cb, mp.data() + cb, bp.data() + cb, jrow.data(),
                         joff.data(), nr, x_zp, ep, yrow, xr.data(), wp.data());
    }
#endif
    for (int64_t cb = c_tail; cb < C; cb += 32) {
      dw_vnni_block<Ymm>(x, g, cb, wq + KR * cb, wsum + KR * cb, mp.data() + cb, bp.data() + cb, jrow.data(),
                         joff.data(), nr, x_zp, ep, yrow, xr.data(), wp.data());
    }
  }
  return true;
}
}  // namespace
#endif

#if defined(QPLUGIN_ISA_AVX2)
namespace {
// Depthwise 3 x 3, AVX2, 16 channels [c, c + 16) of `count` interior output pixels of one row
// (every tap inside the image, no residual add): taps in pairs, one vpmaddwd per pair and 8
// channels (the generic loop spends one per tap). x bytes of taps 2i and 2i+1 are widened to
// int16 and interleaved by unpacklo / unpackhi_epi16, so the lo accumulator holds channels
// 0-3 | 8-11 and the hi one 4-7 | 12-15 (per 128-bit lane); the 9th tap pairs with zero. The
// weights (w - w_zp, |.| <= 255) and the epilogue constants are laid out in that lane order
// here; packs_epi32(lo, hi) restores channel order. Products |255 * 255| * 2 fit int32, the
// sums are exact, and the float steps are finish_vec's (same order, no residual), so the bytes
// equal the generic loop's.
//   xb: input at the first pixel's first tap column, row offsets prow[0..3) (bytes), taps kstep
//   bytes apart, pixels xstep apart; w: taps of kernel row j at w + (ptap[j] + kw) * C (int32,
//   low 16 bits); y: output of the first pixel (row stride between pixels C bytes).
void dw3x3_pairs_avx2(const uint8_t* xb, const int64_t* prow, int64_t kstep, int64_t xstep, int64_t count,
                      const int32_t* w, const int64_t* ptap, int64_t C, int32_t x_zp, const ConvEpilogue& ep, int64_t c,
                      uint8_t* y) {
  int64_t off[10];
  alignas(32) int16_t wl[5][16], wh[5][16];
  alignas(32) int32_t corr_l[8], corr_h[8];
  alignas(32) float mult_l[8], mult_h[8], bias_l[8], bias_h[8];
  auto w16 = [&](int t, int ch) -> int32_t {
    if (t >= 9) return 0;
    return static_cast<int16_t>(static_cast<uint16_t>(w[(ptap[t / 3] + t % 3) * C + ch] & 0xFFFF));
  };
  for (int t = 0; t < 9; ++t) off[t] = prow[t / 3] + (t % 3) * kstep;
  off[9] = off[8];  // read, widened, paired with a zero weight
  for (int q = 0; q < 8; ++q) {
    const int lo = q < 4 ? q : q + 4;  // lane order of unpacklo: channels 0-3 | 8-11
    const int hi = lo + 4;             // unpackhi: 4-7 | 12-15
    uint32_t sl = 0, sh = 0;
    for (int i = 0; i < 5; ++i) {
      wl[i][2 * q] = static_cast<int16_t>(w16(2 * i, lo));
      wl[i][2 * q + 1] = static_cast<int16_t>(w16(2 * i + 1, lo));
      wh[i][2 * q] = static_cast<int16_t>(w16(2 * i, hi));
      wh[i][2 * q + 1] = static_cast<int16_t>(w16(2 * i + 1, hi));
    }
    for (int t = 0; t < 9; ++t) {
      sl += static_cast<uint32_t>(w16(t, lo));
      sh += static_cast<uint32_t>(w16(t, hi));
    }
    corr_l[q] = static_cast<int32_t>(sl * static_cast<uint32_t>(-x_zp));
    corr_h[q] = static_cast<int32_t>(sh * static_cast<uint32_t>(-x_zp));
    mult_l[q] = ep.mult[c + lo];
    mult_h[q] = ep.mult[c + hi];
    bias_l[q] = ep.bias[c + lo];
    bias_h[q] = ep.bias[c + hi];
  }
  __m256i vwl[5], vwh[5];
  for (int i = 0; i < 5; ++i) {
    vwl[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(wl[i]));
    vwh[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(wh[i]));
  }
  const __m256i cl = _mm256_load_si256(reinterpret_cast<const __m256i*>(corr_l));
  const __m256i ch = _mm256_load_si256(reinterpret_cast<const __m256i*>(corr_h));
  const __m256 ml = _mm256_load_ps(mult_l), mh = _mm256_load_ps(mult_h);
  const __m256 bl = _mm256_load_ps(bias_l), bh = _mm256_load_ps(bias_h);
  const __m256 vmax = _mm256_set1_ps(static_cast<float>(ep.qmax - ep.y_zp));
  const __m256 vmin = _mm256_set1_ps(static_cast<float>(ep.qmin - ep.y_zp));
  const __m256i vyzp = _mm256_set1_epi16(static_cast<int16_t>(ep.y_zp));
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* xp = xb + i * xstep;
    __m256i al = cl, ah = ch;
#pragma GCC unroll 5
    for (int k = 0; k < 5; ++k) {
      const __m256i x0 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xp + off[2 * k])));
      const __m256i x1 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xp + off[2 * k + 1])));
      al = _mm256_add_epi32(al, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), vwl[k]));
      ah = _mm256_add_epi32(ah, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), vwh[k]));
    }
    const __m256 fl = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(al), ml), bl);
    const __m256 fh = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(ah), mh), bh);
    // The requantize step with + y_zp after the first pack: |r| <= 255 after the clamp, so packs
    // is exact, + y_zp stays in int16, packus exact (0..255).
    const __m256i r16 = _mm256_add_epi16(
        _mm256_packs_epi32(requant::clamp_round(fl, vmin, vmax), requant::clamp_round(fh, vmin, vmax)), vyzp);
    const __m256i r8 = _mm256_permute4x64_epi64(_mm256_packus_epi16(r16, r16), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i * C), _mm256_castsi256_si128(r8));
  }
}
}  // namespace
#endif

#if defined(QPLUGIN_ISA_NEON)
namespace {
// Depthwise interior columns [ow_lo, ow_hi) of one output row on NEON, channels [0, c_full) in
// blocks of 16 (c_full a multiple of 16); every tap of the row's nrows valid kernel rows lies
// inside the image. x is read unsigned (0..255) and widened to int16, the weights (w - w_zp,
// |.| <= 255) narrowed to int16 once per block; SMLAL / SMLAL2 multiply them into int32 (|x * w|
// <= 65025: exact, no 16-bit sum). The x_zp term is one per-block constant, -x_zp * sum of the
// valid taps' weights, as in the generic loop. The epilogue is finish_one's float steps lane by
// lane (requant.h's vector form). wt: scratch of nrows * KW * 16 int16; toff: nrows * KW int64.
void dw_interior_neon(const uint8_t* x, const ConvGeom& g, const int64_t* prow, const int64_t* ptap, int64_t nrows,
                      int64_t ow_lo, int64_t ow_hi, int64_t c_full, const int32_t* w, int32_t x_zp,
                      const ConvEpilogue& ep, uint8_t* yrow, const uint8_t* arow, int16_t* wt, int64_t* toff) {
  const int64_t C = g.C;
  const int64_t nt = nrows * g.KW;
  for (int64_t j = 0; j < nrows; ++j) {
    for (int64_t kw = 0; kw < g.KW; ++kw) toff[j * g.KW + kw] = prow[j] + kw * g.DW * C;
  }
  const requant::Bounds rb = requant::make_bounds(ep.y_zp, ep.qmin, ep.qmax);
  const int32x4_t vadd_zp = vdupq_n_s32(ep.add_zp);
  const float32x4_t vamul = vdupq_n_f32(ep.add_mult);
  const int64_t xstep = g.SW * C;
  for (int64_t c = 0; c < c_full; c += 16) {
    int32x4_t corr[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
    for (int64_t j = 0; j < nrows; ++j) {
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        const int32_t* wp = w + (ptap[j] + kw) * C + c;
        int16_t* wd = wt + (j * g.KW + kw) * 16;
        for (int h = 0; h < 2; ++h) {
          // the low 16 bits of each int32 are the weight
          const int16x8_t v = vcombine_s16(vmovn_s32(vld1q_s32(wp + 8 * h)), vmovn_s32(vld1q_s32(wp + 8 * h + 4)));
          vst1q_s16(wd + 8 * h, v);
          corr[2 * h] = vaddw_s16(corr[2 * h], vget_low_s16(v));
          corr[2 * h + 1] = vaddw_high_s16(corr[2 * h + 1], v);
        }
      }
    }
    float32x4_t mult[4], bias[4];
    for (int q = 0; q < 4; ++q) {
      corr[q] = vmulq_n_s32(corr[q], -x_zp);
      mult[q] = vld1q_f32(ep.mult + c + 4 * q);
      bias[q] = vld1q_f32(ep.bias + c + 4 * q);
    }
    const uint8_t* xb = x + (ow_lo * g.SW - g.PW) * C + c;
    for (int64_t ow = ow_lo; ow < ow_hi; ++ow, xb += xstep) {
      int32x4_t a0 = corr[0], a1 = corr[1], a2 = corr[2], a3 = corr[3];
      for (int64_t t = 0; t < nt; ++t) {
        const uint8x16_t xv = vld1q_u8(xb + toff[t]);
        const int16x8_t xl = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(xv)));
        const int16x8_t xh = vreinterpretq_s16_u16(vmovl_high_u8(xv));
        const int16x8_t wl = vld1q_s16(wt + 16 * t), wh = vld1q_s16(wt + 16 * t + 8);
        a0 = vmlal_s16(a0, vget_low_s16(xl), vget_low_s16(wl));
        a1 = vmlal_high_s16(a1, xl, wl);
        a2 = vmlal_s16(a2, vget_low_s16(xh), vget_low_s16(wh));
        a3 = vmlal_high_s16(a3, xh, wh);
      }
      const int32x4_t acc[4] = {a0, a1, a2, a3};
      const int64_t o = ow * C + c;
      float32x4_t f[4];
      for (int q = 0; q < 4; ++q) f[q] = vaddq_f32(vmulq_f32(vcvtq_f32_s32(acc[q]), mult[q]), bias[q]);
      if (arow != nullptr) {
        const uint8x16_t av = vld1q_u8(arow + o);
        const uint16x8_t al = vmovl_u8(vget_low_u8(av)), ah = vmovl_high_u8(av);
        const uint32x4_t a32[4] = {vmovl_u16(vget_low_u16(al)), vmovl_high_u16(al), vmovl_u16(vget_low_u16(ah)),
                                   vmovl_high_u16(ah)};
        for (int q = 0; q < 4; ++q) {
          const int32x4_t d = vsubq_s32(vreinterpretq_s32_u32(a32[q]), vadd_zp);
          f[q] = vaddq_f32(f[q], vmulq_f32(vcvtq_f32_s32(d), vamul));
        }
      }
      // requantized values lie in [qmin, qmax] within [0, 255]: plain narrowing
      const simd::VI q0 = requant::requantize(simd::VF{{f[0], f[1]}}, rb);
      const simd::VI q1 = requant::requantize(simd::VF{{f[2], f[3]}}, rb);
      const int16x8_t r0 = vcombine_s16(vmovn_s32(q0.v[0]), vmovn_s32(q0.v[1]));
      const int16x8_t r1 = vcombine_s16(vmovn_s32(q1.v[0]), vmovn_s32(q1.v[1]));
      vst1q_u8(yrow + o, vcombine_u8(vmovn_u16(vreinterpretq_u16_s16(r0)), vmovn_u16(vreinterpretq_u16_s16(r1))));
    }
  }
}
}  // namespace
#endif

int64_t conv_depthwise_packed_size(int64_t KR, int64_t KW, int64_t C) {
#if defined(QPLUGIN_DW_VNNI)
  return KW > 4 ? 0 : 2 * KR * DwBlocks(C).cpad;
#else
  (void)KR, (void)KW, (void)C;
  return 0;
#endif
}

bool conv_depthwise_pack(const int32_t* w, int64_t KR, int64_t KW, int64_t C, int32_t* out) {
#if defined(QPLUGIN_DW_VNNI)
  if (KW > 4) return false;
  // Per block (at channel cb, width kch): [KR][4][kch / 4] int32 lanes of interleaved weight
  // bytes (out, at KR * cb) and their sums (out + KR * cpad, at KR * cb); padding lanes zero.
  const DwBlocks blk(C);
  int32_t* wq = out;
  int32_t* wsum = out + KR * blk.cpad;
  std::fill(out, out + 2 * KR * blk.cpad, 0);
  for (int64_t cb = 0; cb < C;) {
    const int64_t kch = cb < blk.c_tail ? 64 : 32;
    const int64_t kl = kch / 4;
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t l = 0; l < kl; ++l) {
        const int64_t c = dw_lane_channel(cb, q, l);
        if (c >= C) continue;
        for (int64_t j = 0; j < KR; ++j) {
          uint32_t packed = 0;
          int32_t sum = 0;
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int32_t v = static_cast<int16_t>(static_cast<uint16_t>(w[(j * KW + kw) * C + c] & 0xFFFF));
            if (v < -128 || v > 127) return false;
            packed |= static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(v))) << (8 * kw);
            sum += v;
          }
          wq[KR * cb + j * kch + q * kl + l] = static_cast<int32_t>(packed);
          wsum[KR * cb + j * kch + q * kl + l] = sum;
        }
      }
    cb += kch;
  }
  return true;
#else
  (void)w, (void)KR, (void)KW, (void)C, (void)out;
  return false;
#endif
}

void conv_depthwise(const uint8_t* x, const ConvGeom& g, int64_t r0, int64_t rcount, const int32_t* w,
                    const int32_t* wpk, int32_t x_zp, const ConvEpilogue& ep, uint8_t* y) {
#if defined(QPLUGIN_DW_VNNI)
  if (wpk != nullptr && dw_vnni(x, g, r0, rcount, wpk, x_zp, ep, y)) return;
#else
  (void)wpk;
#endif
  const int64_t C = g.C;
  const int64_t taps = g.KD * g.KH * g.KW;
  std::vector<int64_t> off(taps), tap(taps);
  std::vector<int64_t> prow(g.KD * g.KH), ptap(g.KD * g.KH);  // valid (kd, kh) rows
  int64_t ow_lo, ow_hi;
  dw_interior_cols(g, &ow_lo, &ow_hi);
#if defined(QPLUGIN_ISA_NEON)
  // interior channels in blocks of 16 on dw_interior_neon
  const int64_t c_full = C / 16 * 16;
  std::vector<int16_t> wt(static_cast<size_t>(taps * 16));
  std::vector<int64_t> toff(static_cast<size_t>(taps));
#elif QPLUGIN_SIMD
  const int64_t c_full = C / kLanes * kLanes;
#else
  const int64_t c_full = 0;
#endif
  for (int64_t r = r0; r < r0 + rcount; ++r) {
    uint8_t* yrow = y + r * g.OW * C;
    const uint8_t* arow = ep.add != nullptr ? ep.add + r * g.OW * C : nullptr;
    const int64_t nrows = dw_valid_rows(g, r / g.OH, r % g.OH, ptap.data(), prow.data());
    for (int64_t j = 0; j < nrows; ++j) ptap[j] *= g.KW;  // the row's first tap
    // Border columns: every channel, taps checked one by one.
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      if (ow == ow_lo) ow = ow_hi;
      if (ow >= g.OW) break;
      dw_pixel(x, g, prow.data(), ptap.data(), nrows, ow, 0, w, x_zp, ep, yrow + ow * C,
               arow != nullptr ? arow + ow * C : nullptr, off.data(), tap.data());
    }
    if (ow_lo >= ow_hi) continue;
    // Interior columns, channel tail.
    if (c_full < C) {
      for (int64_t ow = ow_lo; ow < ow_hi; ++ow) {
        dw_pixel(x, g, prow.data(), ptap.data(), nrows, ow, c_full, w, x_zp, ep, yrow + ow * C,
                 arow != nullptr ? arow + ow * C : nullptr, off.data(), tap.data());
      }
    }
#if defined(QPLUGIN_ISA_NEON)
    if (c_full > 0) {
      dw_interior_neon(x, g, prow.data(), ptap.data(), nrows, ow_lo, ow_hi, c_full, w, x_zp, ep, yrow, arow, wt.data(),
                       toff.data());
    }
#elif QPLUGIN_SIMD
    // Interior columns, full channel vectors: x is read unsigned (0..255, high
    // 16 bits zero) so vpmaddwd gives x * (w - w_zp); the x_zp term is one
    // per-row constant -x_zp * sum over the valid taps of (w - w_zp).
    const int64_t xstep = g.SW * C;
    const int64_t kstep = g.DW * C;
    int64_t c_start = 0;
#if defined(QPLUGIN_ISA_AVX2)
    if (nrows == 3 && g.KW == 3 && arow == nullptr) {
      for (; c_start + 16 <= c_full; c_start += 16) {
        dw3x3_pairs_avx2(x + (ow_lo * g.SW - g.PW) * C + c_start, prow.data(), kstep, xstep, ow_hi - ow_lo, w + c_start,
                         ptap.data(), C, x_zp, ep, c_start, yrow + ow_lo * C + c_start);
      }
    }
#endif
    for (int64_t c = c_start; c < c_full; c += kLanes) {
      VI corr = set1_i(0);
      for (int64_t j = 0; j < nrows; ++j) {
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const VI wv = loadu_i(w + (ptap[j] + kw) * C + c);
          corr = add_i(corr, sext16_i(wv));
        }
      }
      corr = mullo_i(corr, set1_i(-x_zp));
      const VF mult = loadu_f(ep.mult + c);
      const VF bias = loadu_f(ep.bias + c);
      const uint8_t* xbase = x + (ow_lo * g.SW - g.PW) * C + c;
      if (nrows == 3 && g.KW == 3) {
        const uint8_t* x0 = xbase + prow[0];
        const uint8_t* x1 = xbase + prow[1];
        const uint8_t* x2 = xbase + prow[2];
        const int32_t* w0 = w + ptap[0] * C + c;
        const int32_t* w1 = w + ptap[1] * C + c;
        const int32_t* w2 = w + ptap[2] * C + c;
        const VI w00 = loadu_i(w0), w01 = loadu_i(w0 + C), w02 = loadu_i(w0 + 2 * C);
        const VI w10 = loadu_i(w1), w11 = loadu_i(w1 + C), w12 = loadu_i(w1 + 2 * C);
        const VI w20 = loadu_i(w2), w21 = loadu_i(w2 + C), w22 = loadu_i(w2 + 2 * C);
        for (int64_t ow = ow_lo; ow < ow_hi; ++ow) {
          VI a0 = add_i(corr, madd16(load_u8(x0), w00));
          VI a1 = madd16(load_u8(x1), w10);
          VI a2 = madd16(load_u8(x2), w20);
          a0 = add_i(a0, madd16(load_u8(x0 + kstep), w01));
          a1 = add_i(a1, madd16(load_u8(x1 + kstep), w11));
          a2 = add_i(a2, madd16(load_u8(x2 + kstep), w21));
          a0 = add_i(a0, madd16(load_u8(x0 + 2 * kstep), w02));
          a1 = add_i(a1, madd16(load_u8(x1 + 2 * kstep), w12));
          a2 = add_i(a2, madd16(load_u8(x2 + 2 * kstep), w22));
          const int64_t o = ow * C + c;
          finish_vec(add_i(a0, add_i(a1, a2)), mult, bias, arow != nullptr ? arow + o : nullptr, kLanes, ep, yrow + o);
          x0 += xstep;
          x1 += xstep;
          x2 += xstep;
        }
      } else {
        for (int64_t ow = ow_lo; ow < ow_hi; ++ow) {
          const uint8_t* xb = xbase + (ow - ow_lo) * xstep;
          VI acc = corr;
          for (int64_t j = 0; j < nrows; ++j) {
            const uint8_t* xr = xb + prow[j];
            const int32_t* wr = w + ptap[j] * C + c;
            for (int64_t kw = 0; kw < g.KW; ++kw) {
              acc = add_i(acc, madd16(load_u8(xr + kw * kstep), loadu_i(wr + kw * C)));
            }
          }
          const int64_t o = ow * C + c;
          finish_vec(acc, mult, bias, arow != nullptr ? arow + o : nullptr, kLanes, ep, yrow + o);
        }
      }
    }
#endif
  }
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
