// Compiled once per ISA (kernels/isa.h): the u8 x s8 -> s32 microkernels and the
// requantize epilogue of kernels/gemm/qgemm.h. The scalar path is the reference;
// every path computes the same exact int32 C and the same float epilogue.
#include "kernels/gemm/qgemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#if defined(QPLUGIN_ISA_AVX2) || defined(QPLUGIN_ISA_AVX512)
#include <immintrin.h>
#endif

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

using gemm::kPanelN;
using gemm::OutKind;
using gemm::QGemmParams;

#if defined(QPLUGIN_ISA_AVX512)
constexpr int kMaxMR = 6;  // rows per tile
constexpr int kMaxNV = 4;  // panels (16 columns each) per tile
#elif defined(QPLUGIN_ISA_AVX2)
constexpr int kMaxMR = 3;
constexpr int kMaxNV = 1;
#else
constexpr int kMaxMR = 4;
constexpr int kMaxNV = 1;
#endif
constexpr int kTileN = kMaxNV * kPanelN;

// Bytes 4q .. 4q+3 of an activation row as one little-endian word; bytes at or
// beyond K read as zero (never touched in memory).
inline int32_t load_quad(const uint8_t* row, int64_t k, int64_t K) {
  int32_t v = 0;
  std::memcpy(&v, row + k, static_cast<size_t>(std::min<int64_t>(4, K - k)));
  return v;
}

// acc[r * kTileN + j] = sum_k A[r][k] * B[n0 + j][k] for r < mr, j < nv * 16.
// b points at the first panel; panel v starts at b + v * pstride.
#if defined(QPLUGIN_ISA_AVX512)
template <int MR, int NV>
void tile(const uint8_t* a, int64_t lda, int64_t K, const int8_t* b, int64_t pstride, int32_t* acc) {
  __m512i c[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) c[r][v] = _mm512_setzero_si512();
  const int64_t kfull = K / 4 * 4;
  int64_t k = 0;
  for (; k < kfull; k += 4) {
    const int8_t* bq = b + k * kPanelN;
    __m512i bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(bq + v * pstride);
    for (int r = 0; r < MR; ++r) {
      int32_t w;
      std::memcpy(&w, a + r * lda + k, 4);
      const __m512i av = _mm512_set1_epi32(w);
      for (int v = 0; v < NV; ++v) c[r][v] = _mm512_dpbusd_epi32(c[r][v], av, bv[v]);
    }
  }
  if (k < K) {
    const int8_t* bq = b + k * kPanelN;
    __m512i bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(bq + v * pstride);
    for (int r = 0; r < MR; ++r) {
      const __m512i av = _mm512_set1_epi32(load_quad(a + r * lda, k, K));
      for (int v = 0; v < NV; ++v) c[r][v] = _mm512_dpbusd_epi32(c[r][v], av, bv[v]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) _mm512_storeu_si512(acc + r * kTileN + v * kPanelN, c[r][v]);
}
#elif defined(QPLUGIN_ISA_AVX2)
// One panel: B bytes widened s8 -> s16, activations u8 -> s16, vpmaddwd
// (int16 pairs -> int32, never saturates for these ranges). Lanes hold
// (column, k-pair) partial sums, folded by one hadd at the end.
template <int MR, int NV>
void tile(const uint8_t* a, int64_t lda, int64_t K, const int8_t* b, int64_t pstride, int32_t* acc) {
  static_assert(NV == 1, "AVX2 tile is one panel wide");
  __m256i c[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) c[r][j] = _mm256_setzero_si256();
  auto step = [&](const int8_t* bq, const int32_t* quads) {
    __m256i aw[MR];
    for (int r = 0; r < MR; ++r) aw[r] = _mm256_cvtepu8_epi16(_mm_set1_epi32(quads[r]));
    for (int j = 0; j < 4; ++j) {
      const __m256i bw = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bq + 16 * j)));
      for (int r = 0; r < MR; ++r) c[r][j] = _mm256_add_epi32(c[r][j], _mm256_madd_epi16(aw[r], bw));
    }
  };
  const int64_t kfull = K / 4 * 4;
  int64_t k = 0;
  int32_t quads[MR];
  for (; k < kfull; k += 4) {
    for (int r = 0; r < MR; ++r) std::memcpy(&quads[r], a + r * lda + k, 4);
    step(b + k * kPanelN, quads);
  }
  if (k < K) {
    for (int r = 0; r < MR; ++r) quads[r] = load_quad(a + r * lda, k, K);
    step(b + k * kPanelN, quads);
  }
  const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
  for (int r = 0; r < MR; ++r) {
    const __m256i lo = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(c[r][0], c[r][1]), order);
    const __m256i hi = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(c[r][2], c[r][3]), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + r * kTileN), lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + r * kTileN + 8), hi);
  }
  (void)pstride;
}
#else
// The reference: the definition, read through the packed layout.
template <int MR, int NV>
void tile(const uint8_t* a, int64_t lda, int64_t K, const int8_t* b, int64_t pstride, int32_t* acc) {
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NV; ++v) {
      for (int j = 0; j < kPanelN; ++j) {
        int32_t s = 0;
        for (int64_t k = 0; k < K; ++k) {
          s += static_cast<int32_t>(a[r * lda + k]) *
               static_cast<int32_t>(b[v * pstride + (k / 4) * (4 * kPanelN) + 4 * j + (k % 4)]);
        }
        acc[r * kTileN + v * kPanelN + j] = s;
      }
    }
  }
}
#endif

using TileFn = void (*)(const uint8_t*, int64_t, int64_t, const int8_t*, int64_t, int32_t*);

template <int MR, int... NVs>
void fill_row(TileFn* row, std::integer_sequence<int, NVs...>) {
  ((row[NVs] = &tile<MR, NVs + 1>), ...);
}
template <int... MRs>
struct TileTable {
  TileFn fns[kMaxMR][kMaxNV];
  TileTable() { (fill_row<MRs + 1>(fns[MRs], std::make_integer_sequence<int, kMaxNV>{}), ...); }
};
template <int... MRs>
TileTable<MRs...> make_table(std::integer_sequence<int, MRs...>) {
  return TileTable<MRs...>();
}

TileFn tile_fn(int mr, int nv) {
  static const auto table = make_table(std::make_integer_sequence<int, kMaxMR>{});
  return table.fns[mr - 1][nv - 1];
}

// Epilogue for one row: cols [0, cnt) of acc_row are columns n .. n + cnt - 1.
// t = K * a_zp - rowsum(A[m]); C = acc - a_zp * colsum[n] + b_zp[n] * t (int32 wrap).
void epilogue_row(const QGemmParams& p, const int32_t* acc_row, int64_t m, int64_t n, int64_t cnt,
                  int32_t t) {
  const int32_t azp = p.a_zero_point;
  const int32_t* colsum = p.b->col_sums + n;
  const int32_t* bzp = p.b_zero_points + n;
  const float* mult = p.multipliers + n;
  const float* bias = p.bias ? p.bias + n : nullptr;
  auto corrected = [&](int64_t j) {
    const uint32_t c = static_cast<uint32_t>(acc_row[j]) -
                       static_cast<uint32_t>(azp) * static_cast<uint32_t>(colsum[j]) +
                       static_cast<uint32_t>(bzp[j]) * static_cast<uint32_t>(t);
    return static_cast<int32_t>(c);
  };
  int64_t j = 0;
  if (p.kind == OutKind::kS32) {
    int32_t* out = static_cast<int32_t*>(p.out) + m * p.ldc + n;
    for (; j < cnt; ++j) out[j] = corrected(j);
    return;
  }
  if (p.kind == OutKind::kF32) {
    float* out = static_cast<float*>(p.out) + m * p.ldc + n;
    const float fmin = p.out_fmin;
#if defined(QPLUGIN_ISA_AVX512)
    const __m512i vazp = _mm512_set1_epi32(azp), vt = _mm512_set1_epi32(t);
    for (; j + 16 <= cnt; j += 16) {
      __m512i c = _mm512_loadu_si512(acc_row + j);
      c = _mm512_sub_epi32(c, _mm512_mullo_epi32(vazp, _mm512_loadu_si512(colsum + j)));
      c = _mm512_add_epi32(c, _mm512_mullo_epi32(_mm512_loadu_si512(bzp + j), vt));
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(c), _mm512_loadu_ps(mult + j));
      if (bias) f = _mm512_add_ps(f, _mm512_loadu_ps(bias + j));
      _mm512_storeu_ps(out + j, _mm512_max_ps(f, _mm512_set1_ps(fmin)));
    }
#elif defined(QPLUGIN_ISA_AVX2)
    const __m256i vazp = _mm256_set1_epi32(azp), vt = _mm256_set1_epi32(t);
    for (; j + 8 <= cnt; j += 8) {
      __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc_row + j));
      c = _mm256_sub_epi32(c, _mm256_mullo_epi32(vazp, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(colsum + j))));
      c = _mm256_add_epi32(c, _mm256_mullo_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bzp + j)), vt));
      __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(c), _mm256_loadu_ps(mult + j));
      if (bias) f = _mm256_add_ps(f, _mm256_loadu_ps(bias + j));
      _mm256_storeu_ps(out + j, _mm256_max_ps(f, _mm256_set1_ps(fmin)));
    }
#endif
    for (; j < cnt; ++j) {
      float f = static_cast<float>(corrected(j)) * mult[j];
      if (bias) f = f + bias[j];
      out[j] = f > fmin ? f : fmin;  // as MAXPS(f, fmin): NaN -> fmin
    }
    return;
  }
  uint8_t* out = static_cast<uint8_t*>(p.out) + m * p.ldc + n;
  const int32_t yzp = p.out_zero_point;
  const float hi = static_cast<float>(p.out_max - yzp);
  const float lo = static_cast<float>(p.out_min - yzp);
#if defined(QPLUGIN_ISA_AVX512)
  {
    const __m512i vazp = _mm512_set1_epi32(azp), vt = _mm512_set1_epi32(t), vyzp = _mm512_set1_epi32(yzp);
    const __m512 vhi = _mm512_set1_ps(hi), vlo = _mm512_set1_ps(lo);
    for (; j + 16 <= cnt; j += 16) {
      __m512i c = _mm512_loadu_si512(acc_row + j);
      c = _mm512_sub_epi32(c, _mm512_mullo_epi32(vazp, _mm512_loadu_si512(colsum + j)));
      c = _mm512_add_epi32(c, _mm512_mullo_epi32(_mm512_loadu_si512(bzp + j), vt));
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(c), _mm512_loadu_ps(mult + j));
      if (bias) f = _mm512_add_ps(f, _mm512_loadu_ps(bias + j));
      f = _mm512_max_ps(_mm512_min_ps(f, vhi), vlo);
      const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), vyzp);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm512_cvtepi32_epi8(q));
    }
  }
#elif defined(QPLUGIN_ISA_AVX2)
  {
    const __m256i vazp = _mm256_set1_epi32(azp), vt = _mm256_set1_epi32(t), vyzp = _mm256_set1_epi32(yzp);
    const __m256 vhi = _mm256_set1_ps(hi), vlo = _mm256_set1_ps(lo);
    for (; j + 8 <= cnt; j += 8) {
      __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc_row + j));
      c = _mm256_sub_epi32(c, _mm256_mullo_epi32(vazp, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(colsum + j))));
      c = _mm256_add_epi32(c, _mm256_mullo_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bzp + j)), vt));
      __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(c), _mm256_loadu_ps(mult + j));
      if (bias) f = _mm256_add_ps(f, _mm256_loadu_ps(bias + j));
      f = _mm256_max_ps(_mm256_min_ps(f, vhi), vlo);
      const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(f), vyzp);
      // values are in [0, 255]: pack 32 -> 16 -> 8 within lanes, then gather the two halves
      const __m256i w16 = _mm256_packs_epi32(q, q);
      const __m256i w8 = _mm256_packus_epi16(w16, w16);
      const uint32_t lo4 = static_cast<uint32_t>(_mm256_extract_epi32(w8, 0));
      const uint32_t hi4 = static_cast<uint32_t>(_mm256_extract_epi32(w8, 4));
      std::memcpy(out + j, &lo4, 4);
      std::memcpy(out + j + 4, &hi4, 4);
    }
  }
#endif
  for (; j < cnt; ++j) {
    float f = static_cast<float>(corrected(j)) * mult[j];
    if (bias) f = f + bias[j];
    f = f < hi ? f : hi;  // as MINPS(f, hi): NaN -> hi
    f = f > lo ? f : lo;
    out[j] = static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(f)) + yzp);
  }
}

} // namespace

void qgemm_block(const QGemmParams& p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const gemm::PackedB& B = *p.b;
  const int64_t K = B.K;
  const int64_t pstride = gemm::padded_k(K) * kPanelN;
  const int32_t azp = p.a_zero_point;
  alignas(64) int32_t acc[kMaxMR * kTileN];
  for (int64_t n = n0; n < n1; n += kTileN) {
    const int64_t ncols = std::min<int64_t>(kTileN, n1 - n);
    const int nv = static_cast<int>((ncols + kPanelN - 1) / kPanelN);
    const int8_t* bp = B.data + (n / kPanelN) * pstride;
    for (int64_t m = m0; m < m1; m += kMaxMR) {
      const int mr = static_cast<int>(std::min<int64_t>(kMaxMR, m1 - m));
      const uint8_t* a = p.a + m * p.lda;
      tile_fn(mr, nv)(a, p.lda, K, bp, pstride, acc);
      for (int r = 0; r < mr; ++r) {
        uint32_t t = static_cast<uint32_t>(K) * static_cast<uint32_t>(azp);
        if (!p.b_zero_points_all_zero) {
          const uint8_t* row = a + r * p.lda;
          uint32_t s = 0;
          for (int64_t k = 0; k < K; ++k) s += row[k];
          t -= s;
        }
        epilogue_row(p, acc + r * kTileN, m + r, n, ncols, static_cast<int32_t>(t));
      }
    }
  }
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
