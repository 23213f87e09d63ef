// Convolution kernels, compiled once per ISA (kernels/isa.h). See conv_kernel.h
// for the contract and docs/design/conv.md for the design.
#include "kernels/conv_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {

namespace {

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// ---- epilogue (scalar definition; the vector one mirrors it lane by lane) ----
inline uint8_t finish_one(int32_t t, float mult, float bias, const uint8_t* add, const ConvEpilogue& ep) {
  float v = static_cast<float>(t) * mult + bias;
  if (add != nullptr) {
    v = v + static_cast<float>(static_cast<int32_t>(*add) - ep.add_zp) * ep.add_mult;
  }
  v = v < 1024.0f ? v : 1024.0f;
  v = v > -1024.0f ? v : -1024.0f;
  int32_t r = static_cast<int32_t>(std::nearbyint(v)) + ep.y_zp;
  r = r < ep.qmin ? ep.qmin : r;
  r = r > ep.qmax ? ep.qmax : r;
  return static_cast<uint8_t>(r);
}

// int32 correction of a raw sum of x * w into sum of (x - x_zp) * (w - w_zp).
// Wrapping arithmetic: the final value is within int32 (prepack bounds K).
inline int32_t correct_one(int32_t raw, int64_t m, int64_t n, const ConvEpilogue& ep) {
  uint32_t t = static_cast<uint32_t>(raw) + static_cast<uint32_t>(ep.col_const[n]);
  if (ep.w_zp != nullptr) {
    t -= static_cast<uint32_t>(ep.w_zp[n]) * static_cast<uint32_t>(ep.row_sum[m]);
  }
  return static_cast<int32_t>(t);
}

#if QPLUGIN_SIMD
using namespace simd;

#if defined(QPLUGIN_ISA_AVX512)
inline VI max_i(VI a, VI b) { return _mm512_max_epi32(a, b); }
inline VI min_i(VI a, VI b) { return _mm512_min_epi32(a, b); }
inline VI mullo_i(VI a, VI b) { return _mm512_mullo_epi32(a, b); }
inline VI madd16(VI a, VI b) { return _mm512_madd_epi16(a, b); }
inline VI load_u8_n(const uint8_t* p, int n) {
  if (n == kLanes) return load_u8(p);
  return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1), p));
}
inline VI loadu_i_n(const int32_t* p, int n) {
  return _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << n) - 1), p);
}
inline VF loadu_f_n(const float* p, int n) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
}
inline void store_u8_n(uint8_t* p, VI v, int n) {
  if (n == kLanes) {
    store_u8(p, v);
  } else {
    _mm_mask_storeu_epi8(p, static_cast<__mmask16>((1u << n) - 1), _mm512_cvtepi32_epi8(v));
  }
}
#else  // AVX2
inline VI max_i(VI a, VI b) { return _mm256_max_epi32(a, b); }
inline VI min_i(VI a, VI b) { return _mm256_min_epi32(a, b); }
inline VI mullo_i(VI a, VI b) { return _mm256_mullo_epi32(a, b); }
inline VI madd16(VI a, VI b) { return _mm256_madd_epi16(a, b); }
inline VI load_u8_n(const uint8_t* p, int n) {
  if (n == kLanes) return load_u8(p);
  uint8_t tmp[kLanes] = {0};
  std::memcpy(tmp, p, n);
  return load_u8(tmp);
}
inline VI loadu_i_n(const int32_t* p, int n) {
  if (n == kLanes) return loadu_i(p);
  int32_t tmp[kLanes] = {0};
  std::memcpy(tmp, p, n * sizeof(int32_t));
  return loadu_i(tmp);
}
inline VF loadu_f_n(const float* p, int n) {
  if (n == kLanes) return loadu_f(p);
  float tmp[kLanes] = {0};
  std::memcpy(tmp, p, n * sizeof(float));
  return loadu_f(tmp);
}
inline void store_u8_n(uint8_t* p, VI v, int n) {
  if (n == kLanes) {
    store_u8(p, v);
  } else {
    uint8_t tmp[kLanes];
    store_u8(tmp, v);
    std::memcpy(p, tmp, n);
  }
}
#endif

// Epilogue for kLanes channels [n, n + cnt) of one output pixel; t already corrected.
inline void finish_vec(VI t, VF mult, VF bias, const uint8_t* add, int cnt, const ConvEpilogue& ep,
                       uint8_t* y) {
  VF v = add_f(mul_f(to_f(t), mult), bias);
  if (add != nullptr) {
    VF a = to_f(sub_i(load_u8_n(add, cnt), set1_i(ep.add_zp)));
    v = add_f(v, mul_f(a, set1_f(ep.add_mult)));
  }
  v = min_f(v, set1_f(1024.0f));
  v = max_f(v, set1_f(-1024.0f));
  VI r = add_i(to_i32_round(v), set1_i(ep.y_zp));
  r = max_i(r, set1_i(ep.qmin));
  r = min_i(r, set1_i(ep.qmax));
  store_u8_n(y, r, cnt);
}
#endif  // QPLUGIN_SIMD

// ---- GEMM microkernels ----
#if defined(QPLUGIN_ISA_AVX512)
constexpr int kMR = 12;
constexpr int kBlockN = 16;  // channels per packed block
// NV blocks of 16 channels (b: first block, blocks kp * 16 bytes apart), MR rows.
template <int MR, int NV>
void ukernel(const uint8_t* a, int64_t kp, const int8_t* b, int64_t m0, int64_t n0, int ncols,
             const ConvEpilogue& ep, uint8_t* y, int64_t ldy) {
  __m512i acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_setzero_si512();
  const int64_t bstride = kp * kBlockN;
  for (int64_t k = 0; k < kp; k += 4) {
    __m512i bv[NV];
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j) bv[j] = _mm512_loadu_si512(b + j * bstride + k * kBlockN);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      int32_t av;
      std::memcpy(&av, a + r * kp + k, 4);
      const __m512i avv = _mm512_set1_epi32(av);
#pragma GCC unroll 2
      for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], avv, bv[j]);
    }
  }
#pragma GCC unroll 2
  for (int j = 0; j < NV; ++j) {
    const int cnt = std::min(kLanes, ncols - j * kLanes);
    if (cnt <= 0) break;
    const int64_t n = n0 + j * kLanes;
    const VI cc = loadu_i_n(ep.col_const + n, cnt);
    const VF mult = loadu_f_n(ep.mult + n, cnt);
    const VF bias = loadu_f_n(ep.bias + n, cnt);
    const VI wzp = ep.w_zp != nullptr ? loadu_i_n(ep.w_zp + n, cnt) : set1_i(0);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      VI t = add_i(acc[r][j], cc);
      if (ep.w_zp != nullptr) t = sub_i(t, mullo_i(wzp, set1_i(ep.row_sum[m0 + r])));
      const uint8_t* add = ep.add != nullptr ? ep.add + (m0 + r) * ldy + n : nullptr;
      finish_vec(t, mult, bias, add, cnt, ep, y + (m0 + r) * ldy + n);
    }
  }
}
#elif defined(QPLUGIN_ISA_AVX2)
constexpr int kMR = 6;
constexpr int kBlockN = 16;
// One block of 16 channels (two vectors of 8), MR rows; a is int16.
template <int MR, int NV>
void ukernel(const int16_t* a, int64_t kp, const int8_t* b, int64_t m0, int64_t n0, int ncols,
             const ConvEpilogue& ep, uint8_t* y, int64_t ldy) {
  static_assert(NV == 2, "AVX2 blocks are 16 channels");
  __m256i acc[MR][2];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = _mm256_setzero_si256();
    acc[r][1] = _mm256_setzero_si256();
  }
  for (int64_t k = 0; k < kp; k += 2) {
    const __m128i braw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k * kBlockN));
    const __m128i braw1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k * kBlockN + 16));
    const __m256i b0 = _mm256_cvtepi8_epi16(braw);
    const __m256i b1 = _mm256_cvtepi8_epi16(braw1);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      int32_t av;
      std::memcpy(&av, a + r * kp + k, 4);
      const __m256i avv = _mm256_set1_epi32(av);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(avv, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(avv, b1));
    }
  }
#pragma GCC unroll 2
  for (int j = 0; j < 2; ++j) {
    const int cnt = std::min(kLanes, ncols - j * kLanes);
    if (cnt <= 0) break;
    const int64_t n = n0 + j * kLanes;
    const VI cc = loadu_i_n(ep.col_const + n, cnt);
    const VF mult = loadu_f_n(ep.mult + n, cnt);
    const VF bias = loadu_f_n(ep.bias + n, cnt);
    const VI wzp = ep.w_zp != nullptr ? loadu_i_n(ep.w_zp + n, cnt) : set1_i(0);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      VI t = add_i(acc[r][j], cc);
      if (ep.w_zp != nullptr) t = sub_i(t, mullo_i(wzp, set1_i(ep.row_sum[m0 + r])));
      const uint8_t* add = ep.add != nullptr ? ep.add + (m0 + r) * ldy + n : nullptr;
      finish_vec(t, mult, bias, add, cnt, ep, y + (m0 + r) * ldy + n);
    }
  }
}
#endif

#if QPLUGIN_SIMD
#if defined(QPLUGIN_ISA_AVX512)
using AElem = uint8_t;
#else
using AElem = int16_t;
#endif

template <int NV>
void gemm_rows(const AElem* a, int64_t kp, int64_t mcount, const int8_t* b, int64_t n0, int ncols,
               const ConvEpilogue& ep, uint8_t* y, int64_t ldy) {
  int64_t m = 0;
  for (; m + kMR <= mcount; m += kMR) {
    ukernel<kMR, NV>(a + m * kp, kp, b, m, n0, ncols, ep, y, ldy);
  }
  const int64_t rem = mcount - m;
  if (rem == 0) return;
  const AElem* am = a + m * kp;
  switch (rem) {
#define QPLUGIN_CONV_REM_(R) \
  case R: ukernel<R, NV>(am, kp, b, m, n0, ncols, ep, y, ldy); break;
    QPLUGIN_CONV_REM_(1)
    QPLUGIN_CONV_REM_(2)
    QPLUGIN_CONV_REM_(3)
    QPLUGIN_CONV_REM_(4)
    QPLUGIN_CONV_REM_(5)
#if defined(QPLUGIN_ISA_AVX512)
    QPLUGIN_CONV_REM_(6)
    QPLUGIN_CONV_REM_(7)
    QPLUGIN_CONV_REM_(8)
    QPLUGIN_CONV_REM_(9)
    QPLUGIN_CONV_REM_(10)
    QPLUGIN_CONV_REM_(11)
#endif
#undef QPLUGIN_CONV_REM_
    default: break;
  }
}
#endif

}  // namespace

// ---------------------------------------------------------------------------
int64_t conv_a_elem_size() {
#if defined(QPLUGIN_ISA_AVX2)
  return 2;
#else
  return 1;
#endif
}

int64_t conv_a_row_elems(int64_t k) { return round_up(k, 4); }

int64_t conv_packed_b_bytes(int64_t n, int64_t kp) {
#if QPLUGIN_SIMD
  return round_up(n, kBlockN) * kp;
#else
  return n * kp;
#endif
}

void conv_pack_b(const int8_t* w, int64_t n, int64_t k, int64_t kp, int8_t* out) {
#if defined(QPLUGIN_ISA_AVX512)
  // [block][kp / 4][16 channels][4]
  const int64_t nb = round_up(n, kBlockN) / kBlockN;
  for (int64_t blk = 0; blk < nb; ++blk) {
    int8_t* o = out + blk * kp * kBlockN;
    for (int64_t k4 = 0; k4 < kp; k4 += 4) {
      for (int64_t j = 0; j < kBlockN; ++j) {
        const int64_t row = blk * kBlockN + j;
        for (int64_t t = 0; t < 4; ++t) {
          const int64_t col = k4 + t;
          o[k4 * kBlockN + j * 4 + t] = (row < n && col < k) ? w[row * k + col] : int8_t(0);
        }
      }
    }
  }
#elif defined(QPLUGIN_ISA_AVX2)
  // [block][kp / 2][16 channels][2]
  const int64_t nb = round_up(n, kBlockN) / kBlockN;
  for (int64_t blk = 0; blk < nb; ++blk) {
    int8_t* o = out + blk * kp * kBlockN;
    for (int64_t k2 = 0; k2 < kp; k2 += 2) {
      for (int64_t j = 0; j < kBlockN; ++j) {
        const int64_t row = blk * kBlockN + j;
        for (int64_t t = 0; t < 2; ++t) {
          const int64_t col = k2 + t;
          o[k2 * kBlockN + j * 2 + t] = (row < n && col < k) ? w[row * k + col] : int8_t(0);
        }
      }
    }
  }
#else
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < kp; ++c) out[r * kp + c] = c < k ? w[r * k + c] : int8_t(0);
  }
#endif
}

void conv_im2col(const uint8_t* x, const ConvGeom& g, int64_t group, int64_t m0, int64_t mcount,
                 void* a, int64_t kp, int32_t x_zp, int32_t* row_sum) {
#if defined(QPLUGIN_ISA_AVX2)
  using T = int16_t;
#else
  using T = uint8_t;
#endif
  T* out = static_cast<T*>(a);
  const int64_t icg = g.icg;
  const int64_t K = g.K();
  const T fill = static_cast<T>(x_zp);
  const int64_t c0 = group * icg;
  for (int64_t i = 0; i < mcount; ++i) {
    const int64_t m = m0 + i;
    const int64_t ow = m % g.OW;
    const int64_t oh = (m / g.OW) % g.OH;
    const int64_t od = m / (g.OW * g.OH);
    T* row = out + i * kp;
    T* p = row;
    for (int64_t kd = 0; kd < g.KD; ++kd) {
      const int64_t id = od * g.SD - g.PD + kd * g.DD;
      const bool din = id >= 0 && id < g.D;
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        const int64_t ih = oh * g.SH - g.PH + kh * g.DH;
        const bool hin = din && ih >= 0 && ih < g.H;
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const int64_t iw = ow * g.SW - g.PW + kw * g.DW;
          if (hin && iw >= 0 && iw < g.W) {
            const uint8_t* src = x + ((id * g.H + ih) * g.W + iw) * g.C + c0;
            if (sizeof(T) == 1 && icg >= 16) {
              std::memcpy(p, src, icg);
            } else {
              for (int64_t c = 0; c < icg; ++c) p[c] = static_cast<T>(src[c]);
            }
          } else {
            for (int64_t c = 0; c < icg; ++c) p[c] = fill;
          }
          p += icg;
        }
      }
    }
    for (int64_t c = K; c < kp; ++c) row[c] = 0;
    if (row_sum != nullptr) {
      int32_t s = 0;
      for (int64_t c = 0; c < K; ++c) s += static_cast<int32_t>(row[c]);
      row_sum[i] = s;
    }
  }
}

void conv_gemm(const void* a, int64_t kp, int64_t mcount, const int8_t* b, int64_t ncount,
               const ConvEpilogue& ep, uint8_t* y, int64_t ldy) {
#if defined(QPLUGIN_ISA_AVX512)
  const AElem* av = static_cast<const AElem*>(a);
  int64_t n = 0;
  for (; n + 2 * kBlockN <= ncount || (n + kBlockN < ncount); n += 2 * kBlockN) {
    const int cols = static_cast<int>(std::min<int64_t>(2 * kBlockN, ncount - n));
    gemm_rows<2>(av, kp, mcount, b + n * kp, n, cols, ep, y, ldy);
  }
  if (n < ncount) {
    gemm_rows<1>(av, kp, mcount, b + n * kp, n, static_cast<int>(ncount - n), ep, y, ldy);
  }
#elif defined(QPLUGIN_ISA_AVX2)
  const AElem* av = static_cast<const AElem*>(a);
  for (int64_t n = 0; n < ncount; n += kBlockN) {
    const int cols = static_cast<int>(std::min<int64_t>(kBlockN, ncount - n));
    gemm_rows<2>(av, kp, mcount, b + n * kp, n, cols, ep, y, ldy);
  }
#else
  const uint8_t* av = static_cast<const uint8_t*>(a);
  for (int64_t m = 0; m < mcount; ++m) {
    const uint8_t* ar = av + m * kp;
    for (int64_t n = 0; n < ncount; ++n) {
      const int8_t* br = b + n * kp;
      int32_t s = 0;
      for (int64_t k = 0; k < kp; ++k) s += static_cast<int32_t>(ar[k]) * static_cast<int32_t>(br[k]);
      const int32_t t = correct_one(s, m, n, ep);
      const uint8_t* add = ep.add != nullptr ? ep.add + m * ldy + n : nullptr;
      y[m * ldy + n] = finish_one(t, ep.mult[n], ep.bias[n], add, ep);
    }
  }
#endif
}

void conv_depthwise(const uint8_t* x, const ConvGeom& g, int64_t r0, int64_t rcount,
                    const int32_t* w, int32_t x_zp, const ConvEpilogue& ep, uint8_t* y) {
  const int64_t C = g.C;
  const int64_t taps = g.KD * g.KH * g.KW;
  std::vector<int64_t> off(taps);  // input offsets of the valid taps
  std::vector<int64_t> tap(taps);  // their tap indices
  for (int64_t r = r0; r < r0 + rcount; ++r) {
    const int64_t oh = r % g.OH;
    const int64_t od = r / g.OH;
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      int64_t nv = 0;
      for (int64_t kd = 0; kd < g.KD; ++kd) {
        const int64_t id = od * g.SD - g.PD + kd * g.DD;
        if (id < 0 || id >= g.D) continue;
        for (int64_t kh = 0; kh < g.KH; ++kh) {
          const int64_t ih = oh * g.SH - g.PH + kh * g.DH;
          if (ih < 0 || ih >= g.H) continue;
          for (int64_t kw = 0; kw < g.KW; ++kw) {
            const int64_t iw = ow * g.SW - g.PW + kw * g.DW;
            if (iw < 0 || iw >= g.W) continue;
            off[nv] = ((id * g.H + ih) * g.W + iw) * C;
            tap[nv] = (kd * g.KH + kh) * g.KW + kw;
            ++nv;
          }
        }
      }
      const int64_t opix = (r * g.OW + ow) * C;
      uint8_t* yp = y + opix;
      const uint8_t* addp = ep.add != nullptr ? ep.add + opix : nullptr;
      int64_t c = 0;
#if QPLUGIN_SIMD
      const VI vzp = set1_i(x_zp);
      for (; c < C; c += kLanes) {
        const int cnt = static_cast<int>(std::min<int64_t>(kLanes, C - c));
        VI acc0 = set1_i(0);
        VI acc1 = set1_i(0);
        int64_t t = 0;
        for (; t + 1 < nv; t += 2) {
          const VI x0 = sub_i(load_u8_n(x + off[t] + c, cnt), vzp);
          const VI x1 = sub_i(load_u8_n(x + off[t + 1] + c, cnt), vzp);
          acc0 = add_i(acc0, madd16(x0, loadu_i_n(w + tap[t] * C + c, cnt)));
          acc1 = add_i(acc1, madd16(x1, loadu_i_n(w + tap[t + 1] * C + c, cnt)));
        }
        if (t < nv) {
          const VI x0 = sub_i(load_u8_n(x + off[t] + c, cnt), vzp);
          acc0 = add_i(acc0, madd16(x0, loadu_i_n(w + tap[t] * C + c, cnt)));
        }
        finish_vec(add_i(acc0, acc1), loadu_f_n(ep.mult + c, cnt), loadu_f_n(ep.bias + c, cnt),
                   addp != nullptr ? addp + c : nullptr, cnt, ep, yp + c);
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
  }
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
