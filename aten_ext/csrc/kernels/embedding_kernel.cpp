// Embedding-bag kernel; see embedding_kernel.h for the contract. Compiled once per ISA. The
// scalar loops are the reference and the tails of the vector loops.
#include "kernels/embedding_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

inline void row_qparams(const EmbRows& w, int64_t r, float* scale, float* bias) {
  const uint8_t* p = w.qp + r * w.qp_stride;
  if (w.half) {
    uint16_t s, b;
    std::memcpy(&s, p, 2);
    std::memcpy(&b, p + 2, 2);
    *scale = simd::half_to_float(s);
    *bias = simd::half_to_float(b);
  } else {
    std::memcpy(scale, p, 4);
    std::memcpy(bias, p + 4, 4);
  }
}

// The codes of row r, one a byte: the row itself (8-bit) or its nibbles expanded into buf.
inline const uint8_t* row_codes(const EmbRows& w, int64_t r, uint8_t* buf) {
  const uint8_t* p = w.data + r * w.row_bytes;
  if (w.bits == 8) return p;
  const int64_t nb = (w.D + 1) / 2;
  int64_t j = 0;
#if QPLUGIN_SIMD
  const __m128i mask = _mm_set1_epi8(0x0F);
  for (; j + 16 <= nb; j += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j));
    const __m128i lo = _mm_and_si128(v, mask), hi = _mm_and_si128(_mm_srli_epi16(v, 4), mask);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + 2 * j), _mm_unpacklo_epi8(lo, hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + 2 * j + 16), _mm_unpackhi_epi8(lo, hi));
  }
#endif
  for (; j < nb; ++j) {
    buf[2 * j] = p[j] & 0x0F;
    buf[2 * j + 1] = p[j] >> 4;
  }
  return buf;
}

// o[j] = fma(s, q[j], o[j] + b)
inline void sum_row(float* o, const uint8_t* q, int64_t D, float s, float b) {
  int64_t j = 0;
#if QPLUGIN_SIMD
  using namespace simd;
  const VF sv = set1_f(s), bv = set1_f(b);
  for (; j + kLanes <= D; j += kLanes) {
    storeu_f(o + j, fmadd_f(sv, to_f(load_u8(q + j)), add_f(loadu_f(o + j), bv)));
  }
#endif
  for (; j < D; ++j) o[j] = std::fma(s, static_cast<float>(q[j]), o[j] + b);
}

// o[j] = fma(s, q[j], b) (first row of a max bag), or max(o[j], that) as max_f does.
inline void max_row(float* o, const uint8_t* q, int64_t D, float s, float b, bool first) {
  int64_t j = 0;
#if QPLUGIN_SIMD
  using namespace simd;
  const VF sv = set1_f(s), bv = set1_f(b);
  for (; j + kLanes <= D; j += kLanes) {
    const VF v = fmadd_f(sv, to_f(load_u8(q + j)), bv);
    storeu_f(o + j, first ? v : max_f(loadu_f(o + j), v));
  }
#endif
  for (; j < D; ++j) {
    const float v = std::fma(s, static_cast<float>(q[j]), b);
    o[j] = first ? v : (o[j] > v ? o[j] : v);
  }
}

inline void scale_row(float* o, int64_t D, float m) {
  int64_t j = 0;
#if QPLUGIN_SIMD
  using namespace simd;
  const VF mv = set1_f(m);
  for (; j + kLanes <= D; j += kLanes) storeu_f(o + j, mul_f(loadu_f(o + j), mv));
#endif
  for (; j < D; ++j) o[j] *= m;
}

} // namespace

namespace {

#if QPLUGIN_SIMD
constexpr int64_t kBlk = 4 * simd::kLanes;  // output columns a block keeps in registers
constexpr int64_t kPrefetch = 8;            // rows ahead that the first block prefetches

// The kBlk codes of row r from column j0 (a multiple of kBlk): the row itself (8-bit) or its
// nibbles expanded into buf.
inline const uint8_t* block_codes(const EmbRows& w, int64_t r, int64_t j0, uint8_t* buf) {
  const uint8_t* p = w.data + r * w.row_bytes;
  if (w.bits == 8) return p + j0;
  const __m128i mask = _mm_set1_epi8(0x0F);
  for (int64_t k = 0; k < kBlk / 32; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j0 / 2 + 16 * k));
    const __m128i lo = _mm_and_si128(v, mask), hi = _mm_and_si128(_mm_srli_epi16(v, 4), mask);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + 32 * k), _mm_unpacklo_epi8(lo, hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + 32 * k + 16), _mm_unpackhi_epi8(lo, hi));
  }
  return buf;
}

// Columns [0, D - D % kBlk) of bag [s0, s1) with the block's accumulators in registers; the
// per-element operations are sum_row's / max_row's / scale_row's, in the same order.
inline void bag_blocks(const EmbRows& w, const int64_t* idx, int64_t s0, int64_t s1, const float* psw, int mode,
                       float* o) {
  using namespace simd;
  alignas(64) uint8_t buf[kBlk];
  const int64_t count = s1 - s0;
  for (int64_t j0 = 0; j0 + kBlk <= w.D; j0 += kBlk) {
    VF a0 = set1_f(0.0f), a1 = a0, a2 = a0, a3 = a0;
    bool first = true;
    for (int64_t i = s0; i < s1; ++i) {
      const int64_t r = idx[i];
      if (j0 == 0 && i + kPrefetch < s1 && idx[i + kPrefetch] >= 0) {
        // rows of big tables come from memory: fetch a later row's lines while this one runs
        const char* pf = reinterpret_cast<const char*>(w.data + idx[i + kPrefetch] * w.row_bytes);
        for (int64_t l = 0; l < w.row_bytes; l += 64) _mm_prefetch(pf + l, _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(w.qp + idx[i + kPrefetch] * w.qp_stride), _MM_HINT_T0);
      }
      if (r < 0) continue;
      float s, b;
      row_qparams(w, r, &s, &b);
      const uint8_t* q = block_codes(w, r, j0, buf);
      if (mode == 2) {
        const VF sv = set1_f(s), bv = set1_f(b);
        const VF v0 = fmadd_f(sv, to_f(load_u8(q)), bv), v1 = fmadd_f(sv, to_f(load_u8(q + kLanes)), bv);
        const VF v2 = fmadd_f(sv, to_f(load_u8(q + 2 * kLanes)), bv), v3 = fmadd_f(sv, to_f(load_u8(q + 3 * kLanes)), bv);
        a0 = first ? v0 : max_f(a0, v0);
        a1 = first ? v1 : max_f(a1, v1);
        a2 = first ? v2 : max_f(a2, v2);
        a3 = first ? v3 : max_f(a3, v3);
        first = false;
        continue;
      }
      if (psw != nullptr) {
        b = b * psw[i];
        s = s * psw[i];
      }
      const VF sv = set1_f(s), bv = set1_f(b);
      a0 = fmadd_f(sv, to_f(load_u8(q)), add_f(a0, bv));
      a1 = fmadd_f(sv, to_f(load_u8(q + kLanes)), add_f(a1, bv));
      a2 = fmadd_f(sv, to_f(load_u8(q + 2 * kLanes)), add_f(a2, bv));
      a3 = fmadd_f(sv, to_f(load_u8(q + 3 * kLanes)), add_f(a3, bv));
    }
    if (mode == 1 && count > 0) {
      const VF m = set1_f(1.0f / static_cast<float>(count));
      a0 = mul_f(a0, m);
      a1 = mul_f(a1, m);
      a2 = mul_f(a2, m);
      a3 = mul_f(a3, m);
    }
    // (an empty max bag keeps the zeros it started with)
    storeu_f(o + j0, a0);
    storeu_f(o + j0 + kLanes, a1);
    storeu_f(o + j0 + 2 * kLanes, a2);
    storeu_f(o + j0 + 3 * kLanes, a3);
  }
}
#endif

} // namespace

void embedding_bag_rows(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw,
                        int mode, int64_t b0, int64_t b1, float* out) {
  const int64_t D = w.D;
  int64_t j0 = 0;  // columns before j0 are done in register blocks
#if QPLUGIN_SIMD
  j0 = D - D % kBlk;
#endif
  std::vector<uint8_t> buf(w.bits == 8 || j0 == D ? 0 : static_cast<size_t>(D + 1));
  for (int64_t b = b0; b < b1; ++b) {
    float* o = out + b * D;
#if QPLUGIN_SIMD
    if (j0 > 0) bag_blocks(w, idx, starts[b], starts[b + 1], psw, mode, o);
#endif
    if (j0 == D) continue;
    // the remaining columns [j0, D) (all of them on the scalar path), row by row through memory
    float* oc = o + j0;
    const int64_t n = D - j0;
    bool first = true;
    if (mode != 2) std::fill(oc, oc + n, 0.0f);
    for (int64_t i = starts[b]; i < starts[b + 1]; ++i) {
      const int64_t r = idx[i];
      if (r < 0) continue;
      float s, bias;
      row_qparams(w, r, &s, &bias);
      const uint8_t* q = row_codes(w, r, buf.data()) + j0;
      if (mode == 2) {
        max_row(oc, q, n, s, bias, first);
        first = false;
      } else if (psw != nullptr) {
        sum_row(oc, q, n, s * psw[i], bias * psw[i]);
      } else {
        sum_row(oc, q, n, s, bias);
      }
    }
    if (mode == 2 && first) std::fill(oc, oc + n, 0.0f);
    const int64_t count = starts[b + 1] - starts[b];
    if (mode == 1 && count > 0) scale_row(oc, n, 1.0f / static_cast<float>(count));
  }
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
