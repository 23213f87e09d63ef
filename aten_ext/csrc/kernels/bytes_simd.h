// 64-byte block helpers on 8-bit order keys (key = byte ^ mask), shared by
// sort_kernel.cpp and reduce_kernel.cpp. Included only from *_kernel.cpp files,
// so each ISA build gets its own copy (file-local, inline, in QPLUGIN_ISA_NS).
#pragma once

#include <cstdint>

#include "kernels/isa.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace bytes {

constexpr int64_t kBlock = 64;

// Largest key of the 64 bytes at p.
inline uint8_t block_max64(const uint8_t* p, uint8_t mask) {
#if defined(QPLUGIN_ISA_AVX512)
  const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_set1_epi8(static_cast<char>(mask)));
  __m256i m = _mm256_max_epu8(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  __m128i h = _mm_max_epu8(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
#elif defined(QPLUGIN_ISA_AVX2)
  const __m256i vm = _mm256_set1_epi8(static_cast<char>(mask));
  const __m256i a = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), vm);
  const __m256i b = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), vm);
  const __m256i m = _mm256_max_epu8(a, b);
  __m128i h = _mm_max_epu8(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
#endif
#if QPLUGIN_SIMD
  h = _mm_max_epu8(h, _mm_srli_si128(h, 8));
  h = _mm_max_epu8(h, _mm_srli_si128(h, 4));
  h = _mm_max_epu8(h, _mm_srli_si128(h, 2));
  h = _mm_max_epu8(h, _mm_srli_si128(h, 1));
  return static_cast<uint8_t>(_mm_cvtsi128_si32(h) & 0xFF);
#else
  uint8_t best = 0;
  for (int j = 0; j < kBlock; ++j) {
    const uint8_t k = static_cast<uint8_t>(p[j] ^ mask);
    best = k > best ? k : best;
  }
  return best;
#endif
}

// Bit j set where key(p[j]) >= t, for the 64 bytes at p.
inline uint64_t block_ge64(const uint8_t* p, uint8_t mask, uint8_t t) {
#if defined(QPLUGIN_ISA_AVX512)
  const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_set1_epi8(static_cast<char>(mask)));
  return _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(static_cast<char>(t)));
#elif defined(QPLUGIN_ISA_AVX2)
  const __m256i vm = _mm256_set1_epi8(static_cast<char>(mask));
  const __m256i vt = _mm256_set1_epi8(static_cast<char>(t));
  const __m256i a = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), vm);
  const __m256i b = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), vm);
  const uint32_t ma = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(a, vt), a)));
  const uint32_t mb = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(b, vt), b)));
  return static_cast<uint64_t>(ma) | (static_cast<uint64_t>(mb) << 32);
#else
  uint64_t bits = 0;
  for (int j = 0; j < kBlock; ++j) {
    if (static_cast<uint8_t>(p[j] ^ mask) >= t) bits |= uint64_t{1} << j;
  }
  return bits;
#endif
}

// Largest key of x[0:n) (n >= 1).
inline uint8_t row_max(const uint8_t* x, int64_t n, uint8_t mask) {
  int64_t i = 0;
  uint8_t best = 0;
#if defined(QPLUGIN_ISA_AVX512)
  if (n >= kBlock) {
    const __m512i vm = _mm512_set1_epi8(static_cast<char>(mask));
    __m512i acc = _mm512_setzero_si512();
    for (; i + kBlock <= n; i += kBlock) acc = _mm512_max_epu8(acc, _mm512_xor_si512(_mm512_loadu_si512(x + i), vm));
    alignas(64) uint8_t lanes[64];
    _mm512_store_si512(lanes, acc);
    for (int j = 0; j < 64; ++j) best = lanes[j] > best ? lanes[j] : best;
  }
#elif defined(QPLUGIN_ISA_AVX2)
  if (n >= kBlock) {
    const __m256i vm = _mm256_set1_epi8(static_cast<char>(mask));
    __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
    for (; i + kBlock <= n; i += kBlock) {
      a0 = _mm256_max_epu8(a0, _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)), vm));
      a1 = _mm256_max_epu8(a1, _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + 32)), vm));
    }
    alignas(32) uint8_t lanes[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_max_epu8(a0, a1));
    for (int j = 0; j < 32; ++j) best = lanes[j] > best ? lanes[j] : best;
  }
#endif
  for (; i < n; ++i) {
    const uint8_t k = static_cast<uint8_t>(x[i] ^ mask);
    best = k > best ? k : best;
  }
  return best;
}

// First index of x[0:n) whose key is >= t, or n.
inline int64_t first_ge(const uint8_t* x, int64_t n, uint8_t mask, uint8_t t) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  for (; i + kBlock <= n; i += kBlock) {
    const uint64_t bits = block_ge64(x + i, mask, t);
    if (bits) return i + __builtin_ctzll(bits);
  }
#endif
  for (; i < n; ++i) {
    if (static_cast<uint8_t>(x[i] ^ mask) >= t) return i;
  }
  return n;
}

} // namespace bytes
} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
