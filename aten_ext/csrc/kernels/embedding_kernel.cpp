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

// fp16 bits -> float (exact; no F16C needed for two values a row).
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu, bits;
  if (exp == 0x1Fu) {
    bits = sign | 0x7F800000u | (man << 13);  // inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal half: normalize
    exp = 113;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline void row_qparams(const EmbRows& w, int64_t r, float* scale, float* bias) {
  const uint8_t* p = w.qp + r * w.qp_stride;
  if (w.half) {
    uint16_t s, b;
    std::memcpy(&s, p, 2);
    std::memcpy(&b, p + 2, 2);
    *scale = half_to_float(s);
    *bias = half_to_float(b);
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

void embedding_bag_rows(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw,
                        int mode, int64_t b0, int64_t b1, float* out) {
  const int64_t D = w.D;
  std::vector<uint8_t> buf(w.bits == 8 ? 0 : static_cast<size_t>(D + 1));
  for (int64_t b = b0; b < b1; ++b) {
    float* o = out + b * D;
    bool first = true;
    if (mode != 2) std::fill(o, o + D, 0.0f);
    for (int64_t i = starts[b]; i < starts[b + 1]; ++i) {
      const int64_t r = idx[i];
      if (r < 0) continue;
      float s, bias;
      row_qparams(w, r, &s, &bias);
      const uint8_t* q = row_codes(w, r, buf.data());
      if (mode == 2) {
        max_row(o, q, D, s, bias, first);
        first = false;
      } else if (psw != nullptr) {
        sum_row(o, q, D, s * psw[i], bias * psw[i]);
      } else {
        sum_row(o, q, D, s, bias);
      }
    }
    if (mode == 2 && first) std::fill(o, o + D, 0.0f);
    const int64_t count = starts[b + 1] - starts[b];
    if (mode == 1 && count > 0) scale_row(o, D, 1.0f / static_cast<float>(count));
  }
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
