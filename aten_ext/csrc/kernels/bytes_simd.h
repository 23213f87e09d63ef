// The byte-level SIMD vocabulary of kernels/ (simd.h is the 32-bit-lane one):
//  - whole-register vectors of 8-bit or 32-bit lanes (VB: ldb / stb / vmax / vmin /
//    vset, the lane type picked by a tag value T(); AVX-512 also masked tails
//    ldb_n / stb_n), used by the clamp, pooling, compare and cat kernels;
//  - 64-byte block helpers on 8-bit order keys (key = byte ^ mask: block maximum, positions
//    >= t, any >= t in four blocks), used by sort and reduce;
//  - 8-byte group sums (PSADBW) at an explicit width (G32, and G64 on AVX-512), used by pooling;
//  - the stride-2, 3-tap maximum of a byte row at an explicit width (Y32, X16), used by pooling;
//  - 16-bit lanes (W16, 2 * simd::kLanes of them, simd::VI's register): bytes widened on load
//    (load16), summed in 16 bits (or paired by simd::madd16), kept in int16 rows (storew /
//    loadw) or folded into int32 vectors (widen_lo16 / widen_hi16 / fold16), used by the
//    pooling, norm, compare and upsample kernels;
//  - a 256-entry byte table lookup (lut_rows), used by activations and cat;
//  - the exact sum of a run of bytes (sum_bytes: PSADBW), used by reduce and pooling;
//  - a saturating 4-vector store with a lower bound (store4_sat) and its single-vector clamp
//    (clamp_sat), for int32 results known to fit.
// Included only from *_kernel.cpp files, so each ISA build gets its own copy
// (file-local, inline, in QPLUGIN_ISA_NS).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/isa.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace bytes {

#if defined(QPLUGIN_ISA_AVX512)
using VB = __m512i;
constexpr int64_t kVecBytes = 64;
inline VB ldb(const void* p) { return _mm512_loadu_si512(p); }
inline void stb(void* p, VB v) { _mm512_storeu_si512(p, v); }
inline VB vmax(VB a, VB b, uint8_t) { return _mm512_max_epu8(a, b); }
inline VB vmax(VB a, VB b, int8_t) { return _mm512_max_epi8(a, b); }
inline VB vmax(VB a, VB b, int32_t) { return _mm512_max_epi32(a, b); }
inline VB vmin(VB a, VB b, uint8_t) { return _mm512_min_epu8(a, b); }
inline VB vmin(VB a, VB b, int8_t) { return _mm512_min_epi8(a, b); }
inline VB vmin(VB a, VB b, int32_t) { return _mm512_min_epi32(a, b); }
inline VB vset(int32_t v, uint8_t) { return _mm512_set1_epi8(static_cast<char>(v)); }
inline VB vset(int32_t v, int8_t) { return _mm512_set1_epi8(static_cast<char>(v)); }
inline VB vset(int32_t v, int32_t) { return _mm512_set1_epi32(v); }
// Tails: the first n (< one vector) elements; masked-off lanes are not touched in memory.
inline VB ldb_n(const uint8_t* p, int64_t n) { return _mm512_maskz_loadu_epi8(_bzhi_u64(~0ULL, n), p); }
inline VB ldb_n(const int8_t* p, int64_t n) { return _mm512_maskz_loadu_epi8(_bzhi_u64(~0ULL, n), p); }
inline VB ldb_n(const int32_t* p, int64_t n) {
  return _mm512_maskz_loadu_epi32(static_cast<__mmask16>(_bzhi_u32(0xFFFFu, n)), p);
}
inline void stb_n(uint8_t* p, VB v, int64_t n) { _mm512_mask_storeu_epi8(p, _bzhi_u64(~0ULL, n), v); }
inline void stb_n(int8_t* p, VB v, int64_t n) { _mm512_mask_storeu_epi8(p, _bzhi_u64(~0ULL, n), v); }
inline void stb_n(int32_t* p, VB v, int64_t n) {
  _mm512_mask_storeu_epi32(p, static_cast<__mmask16>(_bzhi_u32(0xFFFFu, n)), v);
}
#elif defined(QPLUGIN_ISA_AVX2)
using VB = __m256i;
constexpr int64_t kVecBytes = 32;
inline VB ldb(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline void stb(void* p, VB v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
inline VB vmax(VB a, VB b, uint8_t) { return _mm256_max_epu8(a, b); }
inline VB vmax(VB a, VB b, int8_t) { return _mm256_max_epi8(a, b); }
inline VB vmax(VB a, VB b, int32_t) { return _mm256_max_epi32(a, b); }
inline VB vmin(VB a, VB b, uint8_t) { return _mm256_min_epu8(a, b); }
inline VB vmin(VB a, VB b, int8_t) { return _mm256_min_epi8(a, b); }
inline VB vmin(VB a, VB b, int32_t) { return _mm256_min_epi32(a, b); }
inline VB vset(int32_t v, uint8_t) { return _mm256_set1_epi8(static_cast<char>(v)); }
inline VB vset(int32_t v, int8_t) { return _mm256_set1_epi8(static_cast<char>(v)); }
inline VB vset(int32_t v, int32_t) { return _mm256_set1_epi32(v); }
// 8-bit lanes: 0xFF where a == b, else 0.
inline VB veq8(VB a, VB b) { return _mm256_cmpeq_epi8(a, b); }
inline VB vand(VB a, VB b) { return _mm256_and_si256(a, b); }
inline VB vxor(VB a, VB b) { return _mm256_xor_si256(a, b); }
// Copies a short run of n >= kVecBytes bytes: whole vectors, the last one ending
// exactly at n (overlapping the one before), so no byte outside [0, n) is written.
inline void copy_run(uint8_t* d, const uint8_t* s, int64_t n) {
  int64_t j = 0;
  for (; j + kVecBytes < n; j += kVecBytes) stb(d + j, ldb(s + j));
  stb(d + n - kVecBytes, ldb(s + n - kVecBytes));
}
#elif defined(QPLUGIN_ISA_NEON)
// 32 bytes as simd::VI's register pair (the AVX2 width, so 4 * simd::kLanes bytes are one VB).
using VB = simd::VI;
constexpr int64_t kVecBytes = 32;
namespace neon_b {
inline uint8x16_t u8(int32x4_t v) { return vreinterpretq_u8_s32(v); }
inline int8x16_t s8(int32x4_t v) { return vreinterpretq_s8_s32(v); }
inline int32x4_t of(uint8x16_t v) { return vreinterpretq_s32_u8(v); }
inline int32x4_t of(int8x16_t v) { return vreinterpretq_s32_s8(v); }
inline VB mk(uint8x16_t a, uint8x16_t b) { return VB{{of(a), of(b)}}; }
}  // namespace neon_b
inline VB ldb(const void* p) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return neon_b::mk(vld1q_u8(b), vld1q_u8(b + 16));
}
inline void stb(void* p, VB v) {
  uint8_t* b = static_cast<uint8_t*>(p);
  vst1q_u8(b, neon_b::u8(v.v[0]));
  vst1q_u8(b + 16, neon_b::u8(v.v[1]));
}
inline VB vmax(VB a, VB b, uint8_t) {
  return neon_b::mk(vmaxq_u8(neon_b::u8(a.v[0]), neon_b::u8(b.v[0])), vmaxq_u8(neon_b::u8(a.v[1]), neon_b::u8(b.v[1])));
}
inline VB vmax(VB a, VB b, int8_t) {
  return VB{{neon_b::of(vmaxq_s8(neon_b::s8(a.v[0]), neon_b::s8(b.v[0]))),
             neon_b::of(vmaxq_s8(neon_b::s8(a.v[1]), neon_b::s8(b.v[1])))}};
}
inline VB vmax(VB a, VB b, int32_t) { return simd::max_i(a, b); }
inline VB vmin(VB a, VB b, uint8_t) {
  return neon_b::mk(vminq_u8(neon_b::u8(a.v[0]), neon_b::u8(b.v[0])), vminq_u8(neon_b::u8(a.v[1]), neon_b::u8(b.v[1])));
}
inline VB vmin(VB a, VB b, int8_t) {
  return VB{{neon_b::of(vminq_s8(neon_b::s8(a.v[0]), neon_b::s8(b.v[0]))),
             neon_b::of(vminq_s8(neon_b::s8(a.v[1]), neon_b::s8(b.v[1])))}};
}
inline VB vmin(VB a, VB b, int32_t) { return simd::min_i(a, b); }
inline VB vset(int32_t v, uint8_t) {
  return neon_b::mk(vdupq_n_u8(static_cast<uint8_t>(v)), vdupq_n_u8(static_cast<uint8_t>(v)));
}
inline VB vset(int32_t v, int8_t) { return vset(v, uint8_t()); }
inline VB vset(int32_t v, int32_t) { return simd::set1_i(v); }
inline VB veq8(VB a, VB b) {
  return neon_b::mk(vceqq_u8(neon_b::u8(a.v[0]), neon_b::u8(b.v[0])), vceqq_u8(neon_b::u8(a.v[1]), neon_b::u8(b.v[1])));
}
inline VB vand(VB a, VB b) { return VB{{vandq_s32(a.v[0], b.v[0]), vandq_s32(a.v[1], b.v[1])}}; }
inline VB vxor(VB a, VB b) { return VB{{veorq_s32(a.v[0], b.v[0]), veorq_s32(a.v[1], b.v[1])}}; }
inline void copy_run(uint8_t* d, const uint8_t* s, int64_t n) {
  int64_t j = 0;
  for (; j + kVecBytes < n; j += kVecBytes) stb(d + j, ldb(s + j));
  stb(d + n - kVecBytes, ldb(s + n - kVecBytes));
}
#endif

// Copies n < 32 bytes with two fixed-size moves (the first and the last 16, 8, 4, 2 or 1 bytes,
// overlapping): no library call for a variable-length memcpy. Nothing outside [0, n) is read or
// written.
inline void copy_small(uint8_t* d, const uint8_t* s, int64_t n) {
  auto two = [&](auto word) {
    using W = decltype(word);
    W a, b;
    std::memcpy(&a, s, sizeof(W));
    std::memcpy(&b, s + n - sizeof(W), sizeof(W));
    std::memcpy(d, &a, sizeof(W));
    std::memcpy(d + n - sizeof(W), &b, sizeof(W));
  };
  struct W16B {
    uint64_t lo, hi;
  };
  if (n >= 16) {
    two(W16B{});
  } else if (n >= 8) {
    two(uint64_t{});
  } else if (n >= 4) {
    two(uint32_t{});
  } else if (n >= 2) {
    two(uint16_t{});
  } else if (n == 1) {
    d[0] = s[0];
  }
}

// Copies a short run of n bytes (a pixel's channels, a channels_last row) with whole-register
// moves: AVX-512 whole vectors and a masked tail, AVX2 / NEON copy_run (copy_small below one vector).
// Nothing outside [0, n) is read or written.
inline void copy_short(uint8_t* d, const uint8_t* s, int64_t n) {
#if defined(QPLUGIN_ISA_AVX512)
  int64_t j = 0;
  for (; j + kVecBytes <= n; j += kVecBytes) stb(d + j, ldb(s + j));
  if (j < n) stb_n(d + j, ldb_n(s + j, n - j), n - j);
#elif defined(QPLUGIN_ISA_AVX2) || defined(QPLUGIN_ISA_NEON)
  if (n >= kVecBytes) {
    copy_run(d, s, n);
  } else {
    copy_small(d, s, n);
  }
#else
  std::memcpy(d, s, static_cast<size_t>(n));
#endif
}

#if QPLUGIN_SIMD
// 16-bit lanes, 2 * simd::kLanes of them: the bytes at p widened (zero- or sign-extended by the
// pointer's type), sums of <= 256 such values exact in 16 bits.
#if defined(QPLUGIN_ISA_AVX512)
using W16 = __m512i;
inline W16 zero16() { return _mm512_setzero_si512(); }
inline W16 add16(W16 a, W16 b) { return _mm512_add_epi16(a, b); }
inline W16 set16(int16_t v) { return _mm512_set1_epi16(v); }
inline W16 load16(const uint8_t* p) {
  return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline W16 load16(const int8_t* p) {
  return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// The first / second half of a as int32 lanes (T: the byte type the lanes were widened from).
template <typename T>
inline simd::VI widen_lo16(W16 a) {
  const __m256i h = _mm512_castsi512_si256(a);
  return std::is_signed<T>::value ? _mm512_cvtepi16_epi32(h) : _mm512_cvtepu16_epi32(h);
}
template <typename T>
inline simd::VI widen_hi16(W16 a) {
  const __m256i h = _mm512_extracti64x4_epi64(a, 1);
  return std::is_signed<T>::value ? _mm512_cvtepi16_epi32(h) : _mm512_cvtepu16_epi32(h);
}
#elif defined(QPLUGIN_ISA_NEON)
// Lanes 0..7 in v[0], 8..15 in v[1].
using W16 = simd::VI;
inline W16 zero16() { return simd::set1_i(0); }
inline W16 add16(W16 a, W16 b) {
  return W16{{vreinterpretq_s32_s16(vaddq_s16(vreinterpretq_s16_s32(a.v[0]), vreinterpretq_s16_s32(b.v[0]))),
              vreinterpretq_s32_s16(vaddq_s16(vreinterpretq_s16_s32(a.v[1]), vreinterpretq_s16_s32(b.v[1])))}};
}
inline W16 set16(int16_t v) {
  return W16{{vreinterpretq_s32_s16(vdupq_n_s16(v)), vreinterpretq_s32_s16(vdupq_n_s16(v))}};
}
inline W16 load16(const uint8_t* p) {
  const uint8x16_t b = vld1q_u8(p);
  return W16{{vreinterpretq_s32_u16(vmovl_u8(vget_low_u8(b))), vreinterpretq_s32_u16(vmovl_high_u8(b))}};
}
inline W16 load16(const int8_t* p) {
  const int8x16_t b = vld1q_s8(p);
  return W16{{vreinterpretq_s32_s16(vmovl_s8(vget_low_s8(b))), vreinterpretq_s32_s16(vmovl_high_s8(b))}};
}
namespace neon_b {
template <typename T>
inline simd::VI widen8(int32x4_t h) {
  if (std::is_signed<T>::value) {
    const int16x8_t w = vreinterpretq_s16_s32(h);
    return simd::VI{{vmovl_s16(vget_low_s16(w)), vmovl_high_s16(w)}};
  }
  const uint16x8_t w = vreinterpretq_u16_s32(h);
  return simd::VI{{vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(w))), vreinterpretq_s32_u32(vmovl_high_u16(w))}};
}
}  // namespace neon_b
template <typename T>
inline simd::VI widen_lo16(W16 a) {
  return neon_b::widen8<T>(a.v[0]);
}
template <typename T>
inline simd::VI widen_hi16(W16 a) {
  return neon_b::widen8<T>(a.v[1]);
}
#else
using W16 = __m256i;
inline W16 zero16() { return _mm256_setzero_si256(); }
inline W16 add16(W16 a, W16 b) { return _mm256_add_epi16(a, b); }
inline W16 set16(int16_t v) { return _mm256_set1_epi16(v); }
inline W16 load16(const uint8_t* p) {
  return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline W16 load16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
template <typename T>
inline simd::VI widen_lo16(W16 a) {
  const __m128i h = _mm256_castsi256_si128(a);
  return std::is_signed<T>::value ? _mm256_cvtepi16_epi32(h) : _mm256_cvtepu16_epi32(h);
}
template <typename T>
inline simd::VI widen_hi16(W16 a) {
  const __m128i h = _mm256_extracti128_si256(a, 1);
  return std::is_signed<T>::value ? _mm256_cvtepi16_epi32(h) : _mm256_cvtepu16_epi32(h);
}
#endif
// 16-bit lanes as they lie in memory (an int16 row of sums).
inline W16 loadw(const int16_t* p) { return simd::loadu_i(reinterpret_cast<const int32_t*>(p)); }
inline void storew(int16_t* p, W16 v) { simd::storeu_i(reinterpret_cast<int32_t*>(p), v); }
// lo += the first half of *w, hi += the second, as int32; *w = 0.
template <typename T>
inline void fold16(simd::VI* lo, simd::VI* hi, W16* w) {
  *lo = simd::add_i(*lo, widen_lo16<T>(*w));
  *hi = simd::add_i(*hi, widen_hi16<T>(*w));
  *w = zero16();
}
#endif

#if QPLUGIN_SIMD
// Stores 4 vectors of int32 as 4 * simd::kLanes bytes of T: the pack saturates to T's range, then
// every byte is raised to at least lo (T's minimum: no change). For values known to fit int32 this
// is the clamp to [lo, T's max] at one byte max per 4 vectors, instead of a float min / max pair
// per vector (a third of an affine map's loop time).
template <typename T>
inline void store4_sat(T* p, simd::VI a, simd::VI b, simd::VI c, simd::VI d, VB lo) {
  stb(p, vmax(simd::pack4_(a, b, c, d, std::is_signed<T>::value), lo, T()));
}
// The single-vector counterpart (simd::store_q narrows without saturating on AVX-512): int32 lanes
// clamped to [lo, T's max], lo >= T's minimum. With lo = T's minimum, simd::store4_q alone is the
// 4-vector clamp (its pack saturates).
template <typename T>
inline simd::VI clamp_sat(simd::VI v, int32_t lo = std::numeric_limits<T>::min()) {
  return simd::max_i(simd::min_i(v, simd::set1_i(std::numeric_limits<T>::max())), simd::set1_i(lo));
}
#endif

constexpr int64_t kBlock = 64;

// Largest key of the 64 bytes at p: the smallest of ~key (bytes x ^ mask ^ 0xFF) folded to 16
// bytes, then pairs into 16-bit lanes and PHMINPOSUW (5 ops for the last 16 bytes, not 8).
inline uint8_t block_max64(const uint8_t* p, uint8_t mask) {
#if defined(QPLUGIN_ISA_AVX512)
  const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_set1_epi8(static_cast<char>(mask ^ 0xFF)));
  __m256i m = _mm256_min_epu8(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  __m128i h = _mm_min_epu8(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
#elif defined(QPLUGIN_ISA_AVX2)
  const __m256i vm = _mm256_set1_epi8(static_cast<char>(mask ^ 0xFF));
  const __m256i a = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), vm);
  const __m256i b = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), vm);
  const __m256i m = _mm256_min_epu8(a, b);
  __m128i h = _mm_min_epu8(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
#endif
#if defined(QPLUGIN_SIMD_X86)
  h = _mm_min_epu8(h, _mm_srli_epi16(h, 8));  // each 16-bit lane: the smaller of its two bytes
  return static_cast<uint8_t>(255 - (_mm_cvtsi128_si32(_mm_minpos_epu16(h)) & 0xFF));
#elif defined(QPLUGIN_ISA_NEON)
  const uint8x16_t vm = vdupq_n_u8(mask);
  const uint8x16_t m01 = vmaxq_u8(veorq_u8(vld1q_u8(p), vm), veorq_u8(vld1q_u8(p + 16), vm));
  const uint8x16_t m23 = vmaxq_u8(veorq_u8(vld1q_u8(p + 32), vm), veorq_u8(vld1q_u8(p + 48), vm));
  return vmaxvq_u8(vmaxq_u8(m01, m23));
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
  // key >= t as a signed compare: key ^ 0x80 > (t - 1) ^ 0x80, the 0x80 folded into mask's XOR.
  if (t == 0) return ~uint64_t{0};
  const __m256i vm = _mm256_set1_epi8(static_cast<char>(mask ^ 0x80));
  const __m256i vt = _mm256_set1_epi8(static_cast<char>((t - 1) ^ 0x80));
  const __m256i a = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), vm);
  const __m256i b = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), vm);
  const uint32_t ma = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpgt_epi8(a, vt)));
  const uint32_t mb = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpgt_epi8(b, vt)));
  return static_cast<uint64_t>(ma) | (static_cast<uint64_t>(mb) << 32);
#elif defined(QPLUGIN_ISA_NEON)
  // Each compare's 0xFF / 0 bytes ANDed with their bit weight 1 << (j % 8), then three pairwise
  // adds gather every 8 bytes into one: byte k of the result is bits 8k..8k+7.
  const uint8x16_t vm = vdupq_n_u8(mask), vt = vdupq_n_u8(t);
  static const uint8_t kW[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t w = vld1q_u8(kW);
  auto ge = [&](int off) {
    return vandq_u8(vcgeq_u8(veorq_u8(vld1q_u8(p + off), vm), vt), w);
  };
  const uint8x16_t s = vpaddq_u8(vpaddq_u8(ge(0), ge(16)), vpaddq_u8(ge(32), ge(48)));
  return vgetq_lane_u64(vreinterpretq_u64_u8(vpaddq_u8(s, s)), 0);
#else
  uint64_t bits = 0;
  for (int j = 0; j < kBlock; ++j) {
    if (static_cast<uint8_t>(p[j] ^ mask) >= t) bits |= uint64_t{1} << j;
  }
  return bits;
#endif
}

// Whether any key of the 256 bytes at p is >= t: the bytes' maximum compared once (a scan that
// mostly finds nothing checks four blocks for the price of about one block_ge64 each).
inline bool any_ge256(const uint8_t* p, uint8_t mask, uint8_t t) {
#if defined(QPLUGIN_ISA_AVX512)
  const __m512i vm = _mm512_set1_epi8(static_cast<char>(mask));
  __m512i m = _mm512_xor_si512(_mm512_loadu_si512(p), vm);
  for (int j = 64; j < 4 * kBlock; j += 64) m = _mm512_max_epu8(m, _mm512_xor_si512(_mm512_loadu_si512(p + j), vm));
  return _mm512_cmpge_epu8_mask(m, _mm512_set1_epi8(static_cast<char>(t))) != 0;
#elif defined(QPLUGIN_ISA_AVX2)
  const __m256i vm = _mm256_set1_epi8(static_cast<char>(mask));
  __m256i m = _mm256_xor_si256(ldb(p), vm);
  for (int j = 32; j < 4 * kBlock; j += 32) m = _mm256_max_epu8(m, _mm256_xor_si256(ldb(p + j), vm));
  return _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(m, _mm256_set1_epi8(static_cast<char>(t))), m)) != 0;
#elif defined(QPLUGIN_ISA_NEON)
  const uint8x16_t vm = vdupq_n_u8(mask);
  uint8x16_t m = veorq_u8(vld1q_u8(p), vm);
  for (int j = 16; j < 4 * kBlock; j += 16) m = vmaxq_u8(m, veorq_u8(vld1q_u8(p + j), vm));
  return vmaxvq_u8(m) >= t;
#else
  for (int j = 0; j < 4 * kBlock; ++j) {
    if (static_cast<uint8_t>(p[j] ^ mask) >= t) return true;
  }
  return false;
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
#elif defined(QPLUGIN_ISA_NEON)
  if (n >= kBlock) {
    const uint8x16_t vm = vdupq_n_u8(mask);
    uint8x16_t a0 = vdupq_n_u8(0), a1 = a0, a2 = a0, a3 = a0;
    for (; i + kBlock <= n; i += kBlock) {
      a0 = vmaxq_u8(a0, veorq_u8(vld1q_u8(x + i), vm));
      a1 = vmaxq_u8(a1, veorq_u8(vld1q_u8(x + i + 16), vm));
      a2 = vmaxq_u8(a2, veorq_u8(vld1q_u8(x + i + 32), vm));
      a3 = vmaxq_u8(a3, veorq_u8(vld1q_u8(x + i + 48), vm));
    }
    best = vmaxvq_u8(vmaxq_u8(vmaxq_u8(a0, a1), vmaxq_u8(a2, a3)));
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

// y[j] = table[x[j]] for `rows` runs of `cols` bytes (x rows xs apart, y rows ys
// apart). A 256-entry byte table applied exactly: every path gives table[x].
#if defined(QPLUGIN_ISA_AVX512)
// VBMI: two 128-entry VPERMI2B lookups, picked by bit 7; masked tail.
__attribute__((target("avx512vbmi"))) inline __m512i lut_vbmi64(__m512i v, __m512i t0, __m512i t1, __m512i t2,
                                                                __m512i t3) {
  const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1);
  const __m512i hi = _mm512_permutex2var_epi8(t2, v, t3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi);
}

__attribute__((target("avx512vbmi"))) inline void lut_rows_vbmi(const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys,
                                                                int64_t rows, int64_t cols, const uint8_t* table) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* xr = x + r * xs;
    uint8_t* yr = y + r * ys;
    int64_t i = 0;
    for (; i + 128 <= cols; i += 128) {
      const __m512i a = _mm512_loadu_si512(xr + i), b = _mm512_loadu_si512(xr + i + 64);
      _mm512_storeu_si512(yr + i, lut_vbmi64(a, t0, t1, t2, t3));
      _mm512_storeu_si512(yr + i + 64, lut_vbmi64(b, t0, t1, t2, t3));
    }
    for (; i + 64 <= cols; i += 64) _mm512_storeu_si512(yr + i, lut_vbmi64(_mm512_loadu_si512(xr + i), t0, t1, t2, t3));
    if (i < cols) {
      const __mmask64 m = (uint64_t{1} << (cols - i)) - 1;
      _mm512_mask_storeu_epi8(yr + i, m, lut_vbmi64(_mm512_maskz_loadu_epi8(m, xr + i), t0, t1, t2, t3));
    }
  }
}
#endif

inline void lut_rows(const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols,
                     const uint8_t* table, bool use_vbmi) {
#if defined(QPLUGIN_ISA_AVX512)
  if (use_vbmi) {
    lut_rows_vbmi(x, xs, y, ys, rows, cols, table);
    return;
  }
  // 16 in-lane VPSHUFB lookups of 16 entries, each under the mask of the bytes
  // whose high nibble selects that block.
  __m512i t[16];
  for (int k = 0; k < 16; ++k) {
    t[k] = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
  }
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  constexpr int64_t kW = 64;
#elif defined(QPLUGIN_ISA_AVX2)
  (void)use_vbmi;
  // Indices idx_k = x - 16k (k = 0..8) keep x's low nibble; VPSHUFB gives 0 where bit 7 is set.
  // For x = 16h + l < 128, bit 7 of idx_k is clear exactly for k <= h, so the XOR of the lookups of
  // a[k] = T[k] ^ T[k-1] (a[0] = T[0]) at idx_k, k = 0..7, telescopes to T[h][l]. For
  // x = 128 + 16h + l, bit 7 of idx_{k+1} is clear exactly for k >= h, so the XOR of the lookups of
  // b[k] = T[8+k] ^ T[9+k] (b[7] = T[15]) at idx_{k+1} telescopes to T[8+h][l]. Bit 7 of x picks
  // (VPBLENDVB): 16 shuffles + 8 byte subs + 14 XORs + 1 blend per 32 bytes. (The two halves as
  // prefix XORs on x and on x ^ 0x80 take 7 more subs and an XOR, 46 ops, and run slower.)
  __m256i a[8], b[8];
  auto block = [&](int k) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k));
  };
  for (int k = 0; k < 8; ++k) {
    a[k] = _mm256_broadcastsi128_si256(k == 0 ? block(0) : _mm_xor_si128(block(k), block(k - 1)));
    b[k] = _mm256_broadcastsi128_si256(k == 7 ? block(15) : _mm_xor_si128(block(8 + k), block(9 + k)));
  }
  const __m256i step = _mm256_set1_epi8(0x10);
  auto lut32 = [&](__m256i x) {
    __m256i idx = x;
    __m256i lo = _mm256_shuffle_epi8(a[0], idx);
    idx = _mm256_sub_epi8(idx, step);
    __m256i hi = _mm256_shuffle_epi8(b[0], idx);
    for (int k = 1; k < 8; ++k) {
      lo = _mm256_xor_si256(lo, _mm256_shuffle_epi8(a[k], idx));
      idx = _mm256_sub_epi8(idx, step);
      hi = _mm256_xor_si256(hi, _mm256_shuffle_epi8(b[k], idx));
    }
    return _mm256_blendv_epi8(lo, hi, x);
  };
  constexpr int64_t kW = 32;
#elif defined(QPLUGIN_ISA_NEON)
  (void)use_vbmi;
  // TBL over four 64-byte quarters of the table: the lookup of x - 64k is out of range (TBX
  // leaves the byte alone) except in x's own quarter.
  uint8x16x4_t q[4];
  for (int k = 0; k < 4; ++k) q[k] = vld1q_u8_x4(table + 64 * k);
  const uint8x16_t step = vdupq_n_u8(64);
  auto lut16 = [&](uint8x16_t v) {
    uint8x16_t r = vqtbl4q_u8(q[0], v);
    v = vsubq_u8(v, step);
    r = vqtbx4q_u8(r, q[1], v);
    v = vsubq_u8(v, step);
    r = vqtbx4q_u8(r, q[2], v);
    v = vsubq_u8(v, step);
    return vqtbx4q_u8(r, q[3], v);
  };
  constexpr int64_t kW = 32;
#else
  (void)use_vbmi;
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* xr = x + r * xs;
    uint8_t* yr = y + r * ys;
    int64_t i = 0;
#if defined(QPLUGIN_ISA_AVX512)
    for (; i + kW <= cols; i += kW) {
      const __m512i v = _mm512_loadu_si512(xr + i);
      const __m512i lo = _mm512_and_si512(v, low4);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
      __m512i res = _mm512_shuffle_epi8(t[0], lo);
      for (int k = 1; k < 16; ++k) {
        const __mmask64 m = _mm512_cmpeq_epi8_mask(hi, _mm512_set1_epi8(static_cast<char>(k)));
        res = _mm512_mask_shuffle_epi8(res, m, t[k], lo);
      }
      _mm512_storeu_si512(yr + i, res);
    }
#elif defined(QPLUGIN_ISA_AVX2)
    for (; i + kW <= cols; i += kW) stb(yr + i, lut32(ldb(xr + i)));
#elif defined(QPLUGIN_ISA_NEON)
    for (; i + kW <= cols; i += kW) {
      vst1q_u8(yr + i, lut16(vld1q_u8(xr + i)));
      vst1q_u8(yr + i + 16, lut16(vld1q_u8(xr + i + 16)));
    }
#endif
    for (; i < cols; ++i) yr[i] = table[xr[i]];
  }
}

#if defined(QPLUGIN_ISA_NEON)
// 8-byte group sums at an explicit width: 64-bit lane j of sad8(v) is bytes 8j..8j+7 of v added
// (three widening pairwise adds per register, PSADBW's result). G32: 32 bytes, as on x86.
struct G32 {
  using V = simd::VI;
  static constexpr int64_t kBytes = 32;
  static V ld(const void* p) { return ldb(p); }
  static void st(void* p, V v) { stb(p, v); }
  static V zero() { return simd::set1_i(0); }
  static V set1(uint8_t v) { return vset(v, uint8_t()); }
  static V xorb(V a, V b) { return vxor(a, b); }
  static int32x4_t sad1(int32x4_t v) {
    return vreinterpretq_s32_u64(vpaddlq_u32(vpaddlq_u16(vpaddlq_u8(vreinterpretq_u8_s32(v)))));
  }
  static V sad8(V v) { return V{{sad1(v.v[0]), sad1(v.v[1])}}; }
  static int32x4_t add1(int32x4_t a, int32x4_t b) {
    return vreinterpretq_s32_s64(vaddq_s64(vreinterpretq_s64_s32(a), vreinterpretq_s64_s32(b)));
  }
  static V add64(V a, V b) { return V{{add1(a.v[0], b.v[0]), add1(a.v[1], b.v[1])}}; }
};
#elif QPLUGIN_SIMD
// 8-byte group sums (PSADBW against zero) at an explicit width: 64-bit lane j of sad8(v) is bytes
// 8j..8j+7 of v added. G32 (ymm) in both builds, G64 (zmm) in the AVX-512 build, so a loop can
// take the widest vector a row holds.
struct G32 {
  using V = __m256i;
  static constexpr int64_t kBytes = 32;
  static V ld(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static void st(void* p, V v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
  static V zero() { return _mm256_setzero_si256(); }
  static V set1(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static V xorb(V a, V b) { return _mm256_xor_si256(a, b); }
  static V sad8(V v) { return _mm256_sad_epu8(v, _mm256_setzero_si256()); }
  static V add64(V a, V b) { return _mm256_add_epi64(a, b); }
};
#if defined(QPLUGIN_ISA_AVX512)
struct G64 {
  using V = __m512i;
  static constexpr int64_t kBytes = 64;
  static V ld(const void* p) { return _mm512_loadu_si512(p); }
  static void st(void* p, V v) { _mm512_storeu_si512(p, v); }
  static V zero() { return _mm512_setzero_si512(); }
  static V set1(uint8_t v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  static V xorb(V a, V b) { return _mm512_xor_si512(a, b); }
  static V sad8(V v) { return _mm512_sad_epu8(v, _mm512_setzero_si512()); }
  static V add64(V a, V b) { return _mm512_add_epi64(a, b); }
};
#endif
#endif

#if defined(QPLUGIN_ISA_NEON)
// The stride-2, 3-tap maximum of a byte row (see the x86 definition below): result byte k is the
// maximum of a[2k], a[2k + 1] and b[2k + 1], the even / odd bytes split by UZP1 / UZP2.
namespace neon_b {
inline uint8x16_t max16(uint8x16_t a, uint8x16_t b, uint8_t) { return vmaxq_u8(a, b); }
inline uint8x16_t max16(uint8x16_t a, uint8x16_t b, int8_t) {
  return vreinterpretq_u8_s8(vmaxq_s8(vreinterpretq_s8_u8(a), vreinterpretq_s8_u8(b)));
}
}  // namespace neon_b
struct Y32 {
  using V = uint8x16x2_t;
  static constexpr int64_t kOut = 16;
  static V ld(const void* p) { return vld1q_u8_x2(static_cast<const uint8_t*>(p)); }
  template <typename T>
  static V vmax(V a, V b, T) {
    return V{{neon_b::max16(a.val[0], b.val[0], T()), neon_b::max16(a.val[1], b.val[1], T())}};
  }
  template <typename T>
  static void max3s2(T* o, V a, V b) {
    const uint8x16_t ae = vuzp1q_u8(a.val[0], a.val[1]), ao = vuzp2q_u8(a.val[0], a.val[1]);
    const uint8x16_t bo = vuzp2q_u8(b.val[0], b.val[1]);
    vst1q_u8(reinterpret_cast<uint8_t*>(o), neon_b::max16(neon_b::max16(ae, ao, T()), bo, T()));
  }
};
struct X16 {
  using V = uint8x16_t;
  static constexpr int64_t kOut = 8;
  static V ld(const void* p) { return vld1q_u8(static_cast<const uint8_t*>(p)); }
  template <typename T>
  static V vmax(V a, V b, T) {
    return neon_b::max16(a, b, T());
  }
  template <typename T>
  static void max3s2(T* o, V a, V b) {
    const uint8x16_t ae = vuzp1q_u8(a, a), ao = vuzp2q_u8(a, a), bo = vuzp2q_u8(b, b);
    vst1_u8(reinterpret_cast<uint8_t*>(o), vget_low_u8(neon_b::max16(neon_b::max16(ae, ao, T()), bo, T())));
  }
};
#elif QPLUGIN_SIMD
// The stride-2, 3-tap maximum of a byte row (max pooling's 3-wide / stride 2 / pad 1 windows) at
// an explicit width: Y32 (ymm, 16 results) and X16 (xmm, 8), both builds. With a = the row's bytes
// at columns c - 1 .. and b = at c .., max3s2 stores as result byte k the maximum of a[2k],
// a[2k + 1] and b[2k + 1] (columns c + 2k - 1, c + 2k, c + 2k + 1): the odd bytes of max(a, b,
// a << 8 in 16-bit lanes), moved down and packed (bit patterns kept: T only picks the max).
struct Y32 {
  using V = __m256i;
  static constexpr int64_t kOut = 16;
  static V ld(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static V vmax(V a, V b, uint8_t) { return _mm256_max_epu8(a, b); }
  static V vmax(V a, V b, int8_t) { return _mm256_max_epi8(a, b); }
  template <typename T>
  static void max3s2(T* o, V a, V b) {
    const V r = _mm256_srli_epi16(vmax(vmax(a, b, T()), _mm256_slli_epi16(a, 8), T()), 8);
    const V p = _mm256_permute4x64_epi64(_mm256_packus_epi16(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm256_castsi256_si128(p));
  }
};
struct X16 {
  using V = __m128i;
  static constexpr int64_t kOut = 8;
  static V ld(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static V vmax(V a, V b, uint8_t) { return _mm_max_epu8(a, b); }
  static V vmax(V a, V b, int8_t) { return _mm_max_epi8(a, b); }
  template <typename T>
  static void max3s2(T* o, V a, V b) {
    const V r = _mm_srli_epi16(vmax(vmax(a, b, T()), _mm_slli_epi16(a, 8), T()), 8);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o), _mm_packus_epi16(r, r));
  }
};
#endif

// Sum of the bytes (each ^ flip) of x[0:n), exact: PSADBW at the build's width into four
// independent 64-bit accumulators, 4 vectors a step (the xor only for signed bytes; one chain
// through a single accumulator, with the xor always, left AVX-512 slower than AVX2 on global pools).
inline int64_t sum_bytes(const uint8_t* x, int64_t n, uint8_t flip) {
  int64_t i = 0;
  int64_t s = 0;
#if QPLUGIN_SIMD
#if defined(QPLUGIN_ISA_AVX512)
  using G = G64;
#else
  using G = G32;
#endif
  constexpr int64_t kB = G::kBytes;
  const G::V vf = G::set1(flip);
  auto sad = [&](int64_t j) {
    const G::V v = G::ld(x + j);
    return G::sad8(flip ? G::xorb(v, vf) : v);
  };
  G::V acc = G::zero(), acc1 = G::zero(), acc2 = G::zero(), acc3 = G::zero();
  for (; i + 4 * kB <= n; i += 4 * kB) {
    acc = G::add64(acc, sad(i));
    acc1 = G::add64(acc1, sad(i + kB));
    acc2 = G::add64(acc2, sad(i + 2 * kB));
    acc3 = G::add64(acc3, sad(i + 3 * kB));
  }
  for (; i + kB <= n; i += kB) acc = G::add64(acc, sad(i));
  alignas(64) int64_t lanes[kB / 8];
  G::st(lanes, G::add64(G::add64(acc, acc1), G::add64(acc2, acc3)));
  for (int64_t k = 0; k < kB / 8; ++k) s += lanes[k];
#endif
  for (; i < n; ++i) s += static_cast<uint8_t>(x[i] ^ flip);
  return s;
}

}  // namespace bytes
}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
