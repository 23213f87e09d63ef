// A thin width-agnostic layer over AVX2 / AVX-512 / NEON intrinsics for the kernels/
// translation units. In the AVX2 build a "vector" is 8 x 32-bit lanes, in the
// AVX-512 build 16. The NEON build (aarch64) mirrors AVX2: 8 lanes held in a pair of
// 128-bit registers, so every kernel keeps its AVX2 blocking (HI = one register, a
// 4 * kLanes byte store = 32 bytes) and each op reproduces the x86 instruction's
// result bit for bit. QPLUGIN_SIMD_X86 is defined in the x86 builds only, for code
// written on x86 intrinsics directly. The scalar build defines QPLUGIN_SIMD 0 and kernels use
// their plain loops only (that loop is also the tail of the vector loops, so
// every path shares one definition of the math).
//
// Besides the float / int32 lane operations (min_i / max_i: int32 clamps, which run on the integer
// pipes, where a float min_f / max_f pair competes with the conversions): tails (load_u8_n / loadu_i_n / loadu_f_n /
// store_u8_n: the first n lanes, masked on AVX-512), 16-bit pair products (madd16) and, in the
// AVX-512 build, explicit-width Zmm / Ymm for kernels that run one loop at two widths.
//
// Semantics worth knowing:
//  - min_f(a, b) / min_d(a, b) return b where a is NaN (x86 MINPS / MINPD rule); kernels rely
//    on it to send NaN to a chosen bound (or to keep it: min_f(bound, v)).
//  - to_i32_round(v) rounds to nearest, ties to even (MXCSR default), and
//    gives INT32_MIN for NaN and out-of-range values.
//  The NEON build reproduces both (FMIN / FCVTNS alone would not: FMIN returns NaN, FCVTNS
//  saturates and gives 0 for NaN), the saturating packs of the 8-bit stores, and VPMADDWD.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/isa.h"

#if defined(QPLUGIN_ISA_AVX2) || defined(QPLUGIN_ISA_AVX512)
#include <immintrin.h>
#define QPLUGIN_SIMD 1
#define QPLUGIN_SIMD_X86 1
#elif defined(QPLUGIN_ISA_NEON)
#include <arm_neon.h>
#define QPLUGIN_SIMD 1
#else
#define QPLUGIN_SIMD 0
#endif

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace simd {

// IEEE fp16 bits -> float (exact; every fp16 value is a float). The scalar path's conversion and
// the reference the F16C loads (load_f16) agree with bit for bit.
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

#if defined(QPLUGIN_ISA_AVX512)

constexpr int kLanes = 16;
using VF = __m512;
using VI = __m512i;
using VD = __m512d;  // kLanes / 2 doubles
using HI = __m256i;  // kLanes / 2 int32

inline VF loadu_f(const float* p) { return _mm512_loadu_ps(p); }
inline void storeu_f(float* p, VF v) { _mm512_storeu_ps(p, v); }
// Non-temporal store (p aligned to kLanes floats): bypasses the cache, no read-for-ownership.
inline void stream_f(float* p, VF v) { _mm512_stream_ps(p, v); }
inline VF set1_f(float x) { return _mm512_set1_ps(x); }
inline VF add_f(VF a, VF b) { return _mm512_add_ps(a, b); }
inline VF sub_f(VF a, VF b) { return _mm512_sub_ps(a, b); }
inline VF mul_f(VF a, VF b) { return _mm512_mul_ps(a, b); }
inline VF div_f(VF a, VF b) { return _mm512_div_ps(a, b); }
// 2^n for integral n in [-126, 127] (the exponent field set directly).
inline VF exp2_bits(VF n) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
}
inline VF fmadd_f(VF a, VF b, VF c) { return _mm512_fmadd_ps(a, b, c); }
// kLanes fp16 values -> floats (F16C; exact, as half_to_float).
inline VF load_f16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline VF min_f(VF a, VF b) { return _mm512_min_ps(a, b); }
inline VF max_f(VF a, VF b) { return _mm512_max_ps(a, b); }
inline VF round_f(VF a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline VI to_i32_round(VF a) { return _mm512_cvtps_epi32(a); }
inline VF to_f(VI a) { return _mm512_cvtepi32_ps(a); }
// Lanes where a is NaN take `nan_value`.
inline VI nan_to(VF a, VI v, int32_t nan_value) {
  __mmask16 m = _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
  return _mm512_mask_mov_epi32(v, m, _mm512_set1_epi32(nan_value));
}
// nan_to(a, v, 0): the ordered lanes of v, zeros elsewhere.
inline VI nan_to_zero(VF a, VI v) { return _mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(a, a, _CMP_ORD_Q), v); }
// Whether any lane of a is NaN.
inline bool any_nan(VF a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q) != 0; }
// Whether any lane of a is >= bound (false for NaN lanes).
inline bool any_ge(VF a, float bound) { return _mm512_cmp_ps_mask(a, _mm512_set1_ps(bound), _CMP_GE_OQ) != 0; }
// Lanes where a >= bound take `value`.
inline VI ge_to(VF a, float bound, VI v, int32_t value) {
  __mmask16 m = _mm512_cmp_ps_mask(a, _mm512_set1_ps(bound), _CMP_GE_OQ);
  return _mm512_mask_mov_epi32(v, m, _mm512_set1_epi32(value));
}

inline VI set1_i(int32_t x) { return _mm512_set1_epi32(x); }
inline VI add_i(VI a, VI b) { return _mm512_add_epi32(a, b); }
inline VI sub_i(VI a, VI b) { return _mm512_sub_epi32(a, b); }
inline VI loadu_i(const int32_t* p) { return _mm512_loadu_si512(p); }
inline void storeu_i(int32_t* p, VI v) { _mm512_storeu_si512(p, v); }
inline VI load_u8(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline VI load_s8(const int8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
// Stores 4 vectors of int32 as 4*kLanes bytes, saturating to the 8-bit range (as the AVX2
// build does): packs works within 128-bit lanes, one dword permute restores element order.
// Three shuffles and one store instead of four vpmovdb + four stores.
// kAdd: z_ab / z_cd (pack_zp16) are added to the 16-bit halves, saturating, between the packs.
template <bool kAdd = false>
inline __m512i pack4_(VI a, VI b, VI c, VI d, bool is_signed, VI z_ab = VI(), VI z_cd = VI()) {
  __m512i ab = _mm512_packs_epi32(a, b);
  __m512i cd = _mm512_packs_epi32(c, d);
  if constexpr (kAdd) {
    ab = _mm512_adds_epi16(ab, z_ab);
    cd = _mm512_adds_epi16(cd, z_cd);
  }
  const __m512i abcd = is_signed ? _mm512_packs_epi16(ab, cd) : _mm512_packus_epi16(ab, cd);
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), abcd);
}
// The 16-bit zero points of vectors a and b in the lanes of their first pack (pack4_<true>).
inline VI pack_zp16(VI za, VI zb) { return _mm512_packs_epi32(za, zb); }
inline void store4_u8(uint8_t* p, VI a, VI b, VI c, VI d) { _mm512_storeu_si512(p, pack4_(a, b, c, d, false)); }
inline void store4_s8(int8_t* p, VI a, VI b, VI c, VI d) { _mm512_storeu_si512(p, pack4_(a, b, c, d, true)); }
// Non-temporal versions (p aligned to 4 * kLanes bytes), for outputs that will not be read soon.
inline void stream4_u8(uint8_t* p, VI a, VI b, VI c, VI d) {
  _mm512_stream_si512(reinterpret_cast<__m512i*>(p), pack4_(a, b, c, d, false));
}
inline void stream4_s8(int8_t* p, VI a, VI b, VI c, VI d) {
  _mm512_stream_si512(reinterpret_cast<__m512i*>(p), pack4_(a, b, c, d, true));
}
// Stores (streams) sat8(v + z) of the int32 lanes v of a, b, c, d and their zero points z
// (pack_zp16; |z| <= 255): the sum saturates to 16 bits, which moves no value past the 8-bit
// range back into it.
template <typename T>
inline void store4_add(T* p, VI a, VI b, VI c, VI d, VI z_ab, VI z_cd) {
  _mm512_storeu_si512(p, pack4_<true>(a, b, c, d, std::is_signed<T>::value, z_ab, z_cd));
}
template <typename T>
inline void stream4_add(T* p, VI a, VI b, VI c, VI d, VI z_ab, VI z_cd) {
  _mm512_stream_si512(reinterpret_cast<__m512i*>(p), pack4_<true>(a, b, c, d, std::is_signed<T>::value, z_ab, z_cd));
}
inline void store_u8(uint8_t* p, VI a) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(a)); }
inline void store_s8(int8_t* p, VI a) { store_u8(reinterpret_cast<uint8_t*>(p), a); }

// Half-width int32 <-> doubles, for math that must round like double.
inline HI lo_half(VI a) { return _mm512_castsi512_si256(a); }
inline HI hi_half(VI a) { return _mm512_extracti64x4_epi64(a, 1); }
inline VD to_d(HI a) { return _mm512_cvtepi32_pd(a); }
inline VD loadu_d(const double* p) { return _mm512_loadu_pd(p); }
inline VD set1_d(double x) { return _mm512_set1_pd(x); }
inline VD add_d(VD a, VD b) { return _mm512_add_pd(a, b); }
inline VD sub_d(VD a, VD b) { return _mm512_sub_pd(a, b); }
inline VD mul_d(VD a, VD b) { return _mm512_mul_pd(a, b); }
inline VD div_d(VD a, VD b) { return _mm512_div_pd(a, b); }
inline VD min_d(VD a, VD b) { return _mm512_min_pd(a, b); }
inline VD round_d(VD a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// Doubles -> int32 (rounding as to_i32_round; NaN and out-of-range values give INT32_MIN), and
// two halves of int32 lanes joined (lo first).
inline HI to_i32_d(VD a) { return _mm512_cvtpd_epi32(a); }
inline VI join_i(HI lo, HI hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
inline VD lo_to_d(VF a) { return _mm512_cvtps_pd(_mm512_castps512_ps256(a)); }
inline VD hi_to_d(VF a) {
  return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm512_extracti64x4_epi64(_mm512_castps_si512(a), 1)));
}
inline VF join_to_f(VD lo, VD hi) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}
// int32 lanes: low 32 bits of the product; pairs of 16-bit halves multiplied and summed
// (VPMADDWD); the low 16 bits sign-extended.
inline VI mullo_i(VI a, VI b) { return _mm512_mullo_epi32(a, b); }
inline VI min_i(VI a, VI b) { return _mm512_min_epi32(a, b); }
inline VI max_i(VI a, VI b) { return _mm512_max_epi32(a, b); }
inline VI madd16(VI a, VI b) { return _mm512_madd_epi16(a, b); }
inline VI sext16_i(VI v) { return _mm512_srai_epi32(_mm512_slli_epi32(v, 16), 16); }
// The int32 lanes of a then b (2 * kLanes consecutive values) split by index parity, each half in order.
inline void deinterleave_i(VI a, VI b, VI* even, VI* odd) {
  const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  *even = _mm512_permutex2var_epi32(a, ie, b);
  *odd = _mm512_permutex2var_epi32(a, _mm512_add_epi32(ie, _mm512_set1_epi32(1)), b);
}
// Tails: the first n (<= kLanes) elements; masked-off lanes are not touched in memory.
inline VI load_u8_n(const uint8_t* p, int n) {
  if (n == kLanes) return load_u8(p);
  return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1), p));
}
inline VI loadu_i_n(const int32_t* p, int n) {
  return _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << n) - 1), p);
}
inline VF loadu_f_n(const float* p, int n) { return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p); }
inline void storeu_f_n(float* p, VF v, int n) { _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v); }
inline void store_u8_n(uint8_t* p, VI v, int n) {
  if (n == kLanes) {
    store_u8(p, v);
  } else {
    _mm_mask_storeu_epi8(p, static_cast<__mmask16>((1u << n) - 1), _mm512_cvtepi32_epi8(v));
  }
}

#elif defined(QPLUGIN_ISA_AVX2)

constexpr int kLanes = 8;
using VF = __m256;
using VI = __m256i;
using VD = __m256d;
using HI = __m128i;

inline VF loadu_f(const float* p) { return _mm256_loadu_ps(p); }
inline void storeu_f(float* p, VF v) { _mm256_storeu_ps(p, v); }
inline void stream_f(float* p, VF v) { _mm256_stream_ps(p, v); }
inline VF set1_f(float x) { return _mm256_set1_ps(x); }
inline VF add_f(VF a, VF b) { return _mm256_add_ps(a, b); }
inline VF sub_f(VF a, VF b) { return _mm256_sub_ps(a, b); }
inline VF mul_f(VF a, VF b) { return _mm256_mul_ps(a, b); }
inline VF div_f(VF a, VF b) { return _mm256_div_ps(a, b); }
inline VF exp2_bits(VF n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
}
inline VF fmadd_f(VF a, VF b, VF c) { return _mm256_fmadd_ps(a, b, c); }
inline VF load_f16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline VF min_f(VF a, VF b) { return _mm256_min_ps(a, b); }
inline VF max_f(VF a, VF b) { return _mm256_max_ps(a, b); }
inline VF round_f(VF a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline VI to_i32_round(VF a) { return _mm256_cvtps_epi32(a); }
inline VF to_f(VI a) { return _mm256_cvtepi32_ps(a); }
inline VI nan_to(VF a, VI v, int32_t nan_value) {
  __m256 m = _mm256_cmp_ps(a, a, _CMP_UNORD_Q);
  return _mm256_blendv_epi8(v, _mm256_set1_epi32(nan_value), _mm256_castps_si256(m));
}
// nan_to(a, v, 0) as an AND with the ordered mask (no blend).
inline VI nan_to_zero(VF a, VI v) { return _mm256_and_si256(v, _mm256_castps_si256(_mm256_cmp_ps(a, a, _CMP_ORD_Q))); }
inline bool any_nan(VF a) { return _mm256_movemask_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q)) != 0; }
inline bool any_ge(VF a, float bound) {
  return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(bound), _CMP_GE_OQ)) != 0;
}
inline VI ge_to(VF a, float bound, VI v, int32_t value) {
  __m256 m = _mm256_cmp_ps(a, _mm256_set1_ps(bound), _CMP_GE_OQ);
  return _mm256_blendv_epi8(v, _mm256_set1_epi32(value), _mm256_castps_si256(m));
}

inline VI set1_i(int32_t x) { return _mm256_set1_epi32(x); }
inline VI add_i(VI a, VI b) { return _mm256_add_epi32(a, b); }
inline VI sub_i(VI a, VI b) { return _mm256_sub_epi32(a, b); }
inline VI loadu_i(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void storeu_i(int32_t* p, VI v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
inline VI load_u8(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline VI load_s8(const int8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
// packs works within 128-bit halves; the permute restores element order.
template <bool kAdd = false>
inline __m256i pack4_(VI a, VI b, VI c, VI d, bool is_signed, VI z_ab = VI(), VI z_cd = VI()) {
  __m256i ab = _mm256_packs_epi32(a, b);
  __m256i cd = _mm256_packs_epi32(c, d);
  if constexpr (kAdd) {
    ab = _mm256_adds_epi16(ab, z_ab);
    cd = _mm256_adds_epi16(cd, z_cd);
  }
  __m256i abcd = is_signed ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
  return _mm256_permutevar8x32_epi32(abcd, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}
inline VI pack_zp16(VI za, VI zb) { return _mm256_packs_epi32(za, zb); }
inline void store4_u8(uint8_t* p, VI a, VI b, VI c, VI d) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), pack4_(a, b, c, d, false));
}
inline void store4_s8(int8_t* p, VI a, VI b, VI c, VI d) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), pack4_(a, b, c, d, true));
}
inline void stream4_u8(uint8_t* p, VI a, VI b, VI c, VI d) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), pack4_(a, b, c, d, false));
}
inline void stream4_s8(int8_t* p, VI a, VI b, VI c, VI d) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), pack4_(a, b, c, d, true));
}
template <typename T>
inline void store4_add(T* p, VI a, VI b, VI c, VI d, VI z_ab, VI z_cd) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), pack4_<true>(a, b, c, d, std::is_signed<T>::value, z_ab, z_cd));
}
template <typename T>
inline void stream4_add(T* p, VI a, VI b, VI c, VI d, VI z_ab, VI z_cd) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), pack4_<true>(a, b, c, d, std::is_signed<T>::value, z_ab, z_cd));
}
inline void store_u8(uint8_t* p, VI a) {
  __m256i v = pack4_(a, a, a, a, false);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(v));
}
inline void store_s8(int8_t* p, VI a) {
  __m256i v = pack4_(a, a, a, a, true);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(v));
}

inline HI lo_half(VI a) { return _mm256_castsi256_si128(a); }
inline HI hi_half(VI a) { return _mm256_extracti128_si256(a, 1); }
inline VD to_d(HI a) { return _mm256_cvtepi32_pd(a); }
inline VD loadu_d(const double* p) { return _mm256_loadu_pd(p); }
inline VD set1_d(double x) { return _mm256_set1_pd(x); }
inline VD add_d(VD a, VD b) { return _mm256_add_pd(a, b); }
inline VD sub_d(VD a, VD b) { return _mm256_sub_pd(a, b); }
inline VD mul_d(VD a, VD b) { return _mm256_mul_pd(a, b); }
inline VD div_d(VD a, VD b) { return _mm256_div_pd(a, b); }
inline VD min_d(VD a, VD b) { return _mm256_min_pd(a, b); }
inline VD round_d(VD a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline HI to_i32_d(VD a) { return _mm256_cvtpd_epi32(a); }
inline VI join_i(HI lo, HI hi) { return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1); }
inline VD lo_to_d(VF a) { return _mm256_cvtps_pd(_mm256_castps256_ps128(a)); }
inline VD hi_to_d(VF a) { return _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)); }
inline VF join_to_f(VD lo, VD hi) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}
inline VI mullo_i(VI a, VI b) { return _mm256_mullo_epi32(a, b); }
inline VI min_i(VI a, VI b) { return _mm256_min_epi32(a, b); }
inline VI max_i(VI a, VI b) { return _mm256_max_epi32(a, b); }
inline VI madd16(VI a, VI b) { return _mm256_madd_epi16(a, b); }
inline VI sext16_i(VI v) { return _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16); }
// The int32 lanes of a then b (2 * kLanes consecutive values) split by index parity, each half in order:
// an in-lane pick of both vectors' even (odd) lanes, then the 64-bit pairs back in order.
inline void deinterleave_i(VI a, VI b, VI* even, VI* odd) {
  const __m256 fa = _mm256_castsi256_ps(a), fb = _mm256_castsi256_ps(b);
  const __m256i e =
      _mm256_castps_si256(_mm256_shuffle_ps(fa, fb, _MM_SHUFFLE(2, 0, 2, 0)));  // a0 a2 b0 b2 | a4 a6 b4 b6
  const __m256i o = _mm256_castps_si256(_mm256_shuffle_ps(fa, fb, _MM_SHUFFLE(3, 1, 3, 1)));
  *even = _mm256_permute4x64_epi64(e, _MM_SHUFFLE(3, 1, 2, 0));
  *odd = _mm256_permute4x64_epi64(o, _MM_SHUFFLE(3, 1, 2, 0));
}

#elif defined(QPLUGIN_ISA_NEON)

// 8 lanes as a pair of 128-bit registers (v[0]: lanes 0..3, v[1]: lanes 4..7), laid out in
// memory as the 8 lanes in order. VI doubles as the 32-byte register of bytes_simd.h (VB, W16).
constexpr int kLanes = 8;
struct VF {
  float32x4_t v[2];
};
struct VI {
  int32x4_t v[2];
};
struct VD {
  float64x2_t v[2];
};
using HI = int32x4_t;  // kLanes / 2 int32

namespace neon_detail {
// x86 MINPS / MAXPS: the first operand where the comparison holds, else the second (so NaN in
// either operand gives the second).
inline float32x4_t min4(float32x4_t a, float32x4_t b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
inline float32x4_t max4(float32x4_t a, float32x4_t b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
inline float64x2_t min2d(float64x2_t a, float64x2_t b) { return vbslq_f64(vcltq_f64(a, b), a, b); }
// CVTPS2DQ: round to nearest even; NaN and values >= 2^31 give INT32_MIN (FCVTNS saturates
// them to INT32_MAX / 0; values below -2^31 saturate to INT32_MIN as x86 gives).
inline int32x4_t cvt4(float32x4_t a) {
  const uint32x4_t ok = vcltq_f32(a, vdupq_n_f32(2147483648.0f));
  return vbslq_s32(ok, vcvtnq_s32_f32(a), vdupq_n_s32(INT32_MIN));
}
// CVTPD2DQ on two doubles: round to nearest even, INT32_MIN where the rounded value leaves the
// int32 range or a is NaN (a < 2^31 - 0.5: the rounded value is at most INT32_MAX; values rounding
// below INT32_MIN saturate to it in the narrow).
inline int32x2_t cvt2d(float64x2_t a) {
  const uint64x2_t ok = vcltq_f64(a, vdupq_n_f64(2147483647.5));
  const int32x2_t r = vqmovn_s64(vcvtnq_s64_f64(a));
  return vbsl_s32(vmovn_u64(ok), r, vdup_n_s32(INT32_MIN));
}
inline uint32x4_t unord4(float32x4_t a) { return vmvnq_u32(vceqq_f32(a, a)); }
// VPMADDWD on one register: 16-bit lane pairs multiplied and summed into int32 (wrapping).
inline int32x4_t madd4(int32x4_t a, int32x4_t b) {
  const int16x8_t a16 = vreinterpretq_s16_s32(a), b16 = vreinterpretq_s16_s32(b);
  const int32x4_t lo = vmull_s16(vget_low_s16(a16), vget_low_s16(b16));
  const int32x4_t hi = vmull_high_s16(a16, b16);
  return vpaddq_s32(lo, hi);
}
// Both registers of a pair through one unary / binary operation.
template <typename V, typename F>
inline V map1(V a, F f) {
  return V{{f(a.v[0]), f(a.v[1])}};
}
template <typename V, typename F>
inline V map2(V a, V b, F f) {
  return V{{f(a.v[0], b.v[0]), f(a.v[1], b.v[1])}};
}
// The 8 int32 lanes of a narrowed to 8 int16 lanes in element order, saturating (PACKSSDW).
inline int16x8_t packs_lo(VI a) { return vcombine_s16(vqmovn_s32(a.v[0]), vqmovn_s32(a.v[1])); }
}  // namespace neon_detail

inline VF loadu_f(const float* p) { return VF{{vld1q_f32(p), vld1q_f32(p + 4)}}; }
inline void storeu_f(float* p, VF v) {
  vst1q_f32(p, v.v[0]);
  vst1q_f32(p + 4, v.v[1]);
}
// NEON has no non-temporal vector store; a plain store (stream_fence is a no-op).
inline void stream_f(float* p, VF v) { storeu_f(p, v); }
inline VF set1_f(float x) { return VF{{vdupq_n_f32(x), vdupq_n_f32(x)}}; }
inline VF add_f(VF a, VF b) {
  return neon_detail::map2(a, b, [](float32x4_t x, float32x4_t y) {
    return vaddq_f32(x, y);
  });
}
inline VF sub_f(VF a, VF b) {
  return neon_detail::map2(a, b, [](float32x4_t x, float32x4_t y) {
    return vsubq_f32(x, y);
  });
}
inline VF mul_f(VF a, VF b) {
  return neon_detail::map2(a, b, [](float32x4_t x, float32x4_t y) {
    return vmulq_f32(x, y);
  });
}
inline VF div_f(VF a, VF b) {
  return neon_detail::map2(a, b, [](float32x4_t x, float32x4_t y) {
    return vdivq_f32(x, y);
  });
}
inline VF exp2_bits(VF n) {
  return neon_detail::map1(n, [](float32x4_t x) {
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(neon_detail::cvt4(x), vdupq_n_s32(127)), 23));
  });
}
// a * b + c with one rounding (FMLA), as VFMADD.
inline VF fmadd_f(VF a, VF b, VF c) {
  return VF{{vfmaq_f32(c.v[0], a.v[0], b.v[0]), vfmaq_f32(c.v[1], a.v[1], b.v[1])}};
}
// FCVTL: exact, as half_to_float, except that a signaling NaN comes back quiet (as from F16C).
inline VF load_f16(const uint16_t* p) {
  return VF{{vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))), vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p + 4)))}};
}
inline VF min_f(VF a, VF b) { return neon_detail::map2(a, b, neon_detail::min4); }
inline VF max_f(VF a, VF b) { return neon_detail::map2(a, b, neon_detail::max4); }
inline VF round_f(VF a) {
  return neon_detail::map1(a, [](float32x4_t x) {
    return vrndnq_f32(x);
  });
}
inline VI to_i32_round(VF a) { return VI{{neon_detail::cvt4(a.v[0]), neon_detail::cvt4(a.v[1])}}; }
inline VF to_f(VI a) { return VF{{vcvtq_f32_s32(a.v[0]), vcvtq_f32_s32(a.v[1])}}; }
inline VI nan_to(VF a, VI v, int32_t nan_value) {
  const int32x4_t nv = vdupq_n_s32(nan_value);
  return VI{{vbslq_s32(neon_detail::unord4(a.v[0]), nv, v.v[0]), vbslq_s32(neon_detail::unord4(a.v[1]), nv, v.v[1])}};
}
inline VI nan_to_zero(VF a, VI v) {
  return VI{{vandq_s32(v.v[0], vreinterpretq_s32_u32(vceqq_f32(a.v[0], a.v[0]))),
             vandq_s32(v.v[1], vreinterpretq_s32_u32(vceqq_f32(a.v[1], a.v[1])))}};
}
inline bool any_nan(VF a) {
  return vmaxvq_u32(vorrq_u32(neon_detail::unord4(a.v[0]), neon_detail::unord4(a.v[1]))) != 0;
}
inline bool any_ge(VF a, float bound) {
  const float32x4_t b = vdupq_n_f32(bound);
  return vmaxvq_u32(vorrq_u32(vcgeq_f32(a.v[0], b), vcgeq_f32(a.v[1], b))) != 0;
}
inline VI ge_to(VF a, float bound, VI v, int32_t value) {
  const float32x4_t b = vdupq_n_f32(bound);
  const int32x4_t x = vdupq_n_s32(value);
  return VI{{vbslq_s32(vcgeq_f32(a.v[0], b), x, v.v[0]), vbslq_s32(vcgeq_f32(a.v[1], b), x, v.v[1])}};
}

inline VI set1_i(int32_t x) { return VI{{vdupq_n_s32(x), vdupq_n_s32(x)}}; }
inline VI add_i(VI a, VI b) {
  return neon_detail::map2(a, b, [](int32x4_t x, int32x4_t y) {
    return vaddq_s32(x, y);
  });
}
inline VI sub_i(VI a, VI b) {
  return neon_detail::map2(a, b, [](int32x4_t x, int32x4_t y) {
    return vsubq_s32(x, y);
  });
}
inline VI loadu_i(const int32_t* p) { return VI{{vld1q_s32(p), vld1q_s32(p + 4)}}; }
inline void storeu_i(int32_t* p, VI v) {
  vst1q_s32(p, v.v[0]);
  vst1q_s32(p + 4, v.v[1]);
}
inline VI load_u8(const uint8_t* p) {
  const uint16x8_t w = vmovl_u8(vld1_u8(p));
  return VI{{vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(w))), vreinterpretq_s32_u32(vmovl_high_u16(w))}};
}
inline VI load_s8(const int8_t* p) {
  const int16x8_t w = vmovl_s8(vld1_s8(p));
  return VI{{vmovl_s16(vget_low_s16(w)), vmovl_high_s16(w)}};
}
// The 4 * kLanes int32 lanes of a, b, c, d as bytes in element order, saturated through int16
// (PACKSSDW) then to int8 / uint8 (PACKSSWB / PACKUSWB), as the AVX2 build's pack4_.
// kAdd: z_ab / z_cd (pack_zp16) are added to the 16-bit values, saturating, between the packs.
template <bool kAdd = false>
inline VI pack4_(VI a, VI b, VI c, VI d, bool is_signed, VI z_ab = VI(), VI z_cd = VI()) {
  int16x8_t a16 = neon_detail::packs_lo(a), b16 = neon_detail::packs_lo(b);
  int16x8_t c16 = neon_detail::packs_lo(c), d16 = neon_detail::packs_lo(d);
  if constexpr (kAdd) {
    a16 = vqaddq_s16(a16, vreinterpretq_s16_s32(z_ab.v[0]));
    b16 = vqaddq_s16(b16, vreinterpretq_s16_s32(z_ab.v[1]));
    c16 = vqaddq_s16(c16, vreinterpretq_s16_s32(z_cd.v[0]));
    d16 = vqaddq_s16(d16, vreinterpretq_s16_s32(z_cd.v[1]));
  }
  if (is_signed) {
    return VI{{vreinterpretq_s32_s8(vcombine_s8(vqmovn_s16(a16), vqmovn_s16(b16))),
               vreinterpretq_s32_s8(vcombine_s8(vqmovn_s16(c16), vqmovn_s16(d16)))}};
  }
  return VI{{vreinterpretq_s32_u8(vcombine_u8(vqmovun_s16(a16), vqmovun_s16(b16))),
             vreinterpretq_s32_u8(vcombine_u8(vqmovun_s16(c16), vqmovun_s16(d16)))}};
}
// The 16-bit zero points of vectors a and b (saturated), a's 8 in v[0] and b's in v[1]: the
// layout pack4_<true> adds them in.
inline VI pack_zp16(VI za, VI zb) {
  return VI{{vreinterpretq_s32_s16(neon_detail::packs_lo(za)), vreinterpretq_s32_s16(neon_detail::packs_lo(zb))}};
}
inline void store4_u8(uint8_t* p, VI a, VI b, VI c, VI d) {
  storeu_i(reinterpret_cast<int32_t*>(p), pack4_(a, b, c, d, false));
}
inline void store4_s8(int8_t* p, VI a, VI b, VI c, VI d) {
  storeu_i(reinterpret_cast<int32_t*>(p), pack4_(a, b, c, d, true));
}
inline void stream4_u8(uint8_t* p, VI a, VI b, VI c, VI d) { store4_u8(p, a, b, c, d); }
inline void stream4_s8(int8_t* p, VI a, VI b, VI c, VI d) { store4_s8(p, a, b, c, d); }
template <typename T>
inline void store4_add(T* p, VI a, VI b, VI c, VI d, VI z_ab, VI z_cd) {
  storeu_i(reinterpret_cast<int32_t*>(p), pack4_<true>(a, b, c, d, std::is_signed<T>::value, z_ab, z_cd));
}
template <typename T>
inline void stream4_add(T* p, VI a, VI b, VI c, VI d, VI z_ab, VI z_cd) {
  store4_add(p, a, b, c, d, z_ab, z_cd);
}
// kLanes bytes, saturating (as AVX2).
inline void store_u8(uint8_t* p, VI a) { vst1_u8(p, vqmovun_s16(neon_detail::packs_lo(a))); }
inline void store_s8(int8_t* p, VI a) { vst1_s8(p, vqmovn_s16(neon_detail::packs_lo(a))); }

inline HI lo_half(VI a) { return a.v[0]; }
inline HI hi_half(VI a) { return a.v[1]; }
inline VD to_d(HI a) { return VD{{vcvtq_f64_s64(vmovl_s32(vget_low_s32(a))), vcvtq_f64_s64(vmovl_high_s32(a))}}; }
inline VD loadu_d(const double* p) { return VD{{vld1q_f64(p), vld1q_f64(p + 2)}}; }
inline VD set1_d(double x) { return VD{{vdupq_n_f64(x), vdupq_n_f64(x)}}; }
inline VD add_d(VD a, VD b) {
  return neon_detail::map2(a, b, [](float64x2_t x, float64x2_t y) {
    return vaddq_f64(x, y);
  });
}
inline VD sub_d(VD a, VD b) {
  return neon_detail::map2(a, b, [](float64x2_t x, float64x2_t y) {
    return vsubq_f64(x, y);
  });
}
inline VD mul_d(VD a, VD b) {
  return neon_detail::map2(a, b, [](float64x2_t x, float64x2_t y) {
    return vmulq_f64(x, y);
  });
}
inline VD div_d(VD a, VD b) {
  return neon_detail::map2(a, b, [](float64x2_t x, float64x2_t y) {
    return vdivq_f64(x, y);
  });
}
inline VD min_d(VD a, VD b) { return neon_detail::map2(a, b, neon_detail::min2d); }
inline VD round_d(VD a) {
  return neon_detail::map1(a, [](float64x2_t x) {
    return vrndnq_f64(x);
  });
}
inline HI to_i32_d(VD a) { return vcombine_s32(neon_detail::cvt2d(a.v[0]), neon_detail::cvt2d(a.v[1])); }
inline VI join_i(HI lo, HI hi) { return VI{{lo, hi}}; }
inline VD lo_to_d(VF a) { return VD{{vcvt_f64_f32(vget_low_f32(a.v[0])), vcvt_high_f64_f32(a.v[0])}}; }
inline VD hi_to_d(VF a) { return VD{{vcvt_f64_f32(vget_low_f32(a.v[1])), vcvt_high_f64_f32(a.v[1])}}; }
inline VF join_to_f(VD lo, VD hi) {
  return VF{{vcvt_high_f32_f64(vcvt_f32_f64(lo.v[0]), lo.v[1]), vcvt_high_f32_f64(vcvt_f32_f64(hi.v[0]), hi.v[1])}};
}
inline VI mullo_i(VI a, VI b) {
  return neon_detail::map2(a, b, [](int32x4_t x, int32x4_t y) {
    return vmulq_s32(x, y);
  });
}
inline VI min_i(VI a, VI b) {
  return neon_detail::map2(a, b, [](int32x4_t x, int32x4_t y) {
    return vminq_s32(x, y);
  });
}
inline VI max_i(VI a, VI b) {
  return neon_detail::map2(a, b, [](int32x4_t x, int32x4_t y) {
    return vmaxq_s32(x, y);
  });
}
inline VI madd16(VI a, VI b) { return neon_detail::map2(a, b, neon_detail::madd4); }
inline VI sext16_i(VI v) {
  return neon_detail::map1(v, [](int32x4_t x) {
    return vshrq_n_s32(vshlq_n_s32(x, 16), 16);
  });
}
inline void deinterleave_i(VI a, VI b, VI* even, VI* odd) {
  *even = VI{{vuzp1q_s32(a.v[0], a.v[1]), vuzp1q_s32(b.v[0], b.v[1])}};
  *odd = VI{{vuzp2q_s32(a.v[0], a.v[1]), vuzp2q_s32(b.v[0], b.v[1])}};
}
#endif

#if (defined(QPLUGIN_ISA_AVX2) || defined(QPLUGIN_ISA_NEON)) && !defined(QPLUGIN_ISA_AVX512)
// Tails through a stack copy (AVX2 and NEON have no byte masks).
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
inline void storeu_f_n(float* p, VF v, int n) {
  float tmp[kLanes];
  storeu_f(tmp, v);
  std::memcpy(p, tmp, n * sizeof(float));
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

#if QPLUGIN_SIMD
#if defined(QPLUGIN_SIMD_X86)
inline void stream_fence() { _mm_sfence(); }
#else
inline void stream_fence() {}
#endif
// Overloads by element type, for kernels templated on uint8_t / int8_t.
inline VI load_q(const uint8_t* p) { return load_u8(p); }
inline VI load_q(const int8_t* p) { return load_s8(p); }
inline VI load_q(const int32_t* p) { return loadu_i(p); }
inline void stream4_q(uint8_t* p, VI a, VI b, VI c, VI d) { stream4_u8(p, a, b, c, d); }
inline void stream4_q(int8_t* p, VI a, VI b, VI c, VI d) { stream4_s8(p, a, b, c, d); }
inline void store_q(uint8_t* p, VI a) { store_u8(p, a); }
inline void store_q(int8_t* p, VI a) { store_s8(p, a); }
inline void store_q(int32_t* p, VI a) { storeu_i(p, a); }
inline void store4_q(uint8_t* p, VI a, VI b, VI c, VI d) { store4_u8(p, a, b, c, d); }
inline void store4_q(int8_t* p, VI a, VI b, VI c, VI d) { store4_s8(p, a, b, c, d); }
#endif

#if defined(QPLUGIN_ISA_AVX512)
// Explicit widths inside the AVX-512 build, for kernels that run one loop at two widths (the
// depthwise VNNI kernel: 64-channel blocks in zmm, a tail in ymm): the same operations as static
// members of Zmm (64 bytes) and Ymm (32 bytes), byte masks M, kCh = bytes per vector.
struct Zmm {
  using I = __m512i;
  using F = __m512;
  using M = __mmask64;
  static constexpr int kCh = 64;  // channels per block (4 vectors of kCh / 4 int32 lanes)
  static I maskz_load8(M m, const uint8_t* p) { return _mm512_maskz_loadu_epi8(m, p); }
  static void mask_store8(uint8_t* p, M m, I v) { _mm512_mask_storeu_epi8(p, m, v); }
  static I loadu(const int32_t* p) { return _mm512_loadu_si512(p); }
  static F loadu_ps(const float* p) { return _mm512_loadu_ps(p); }
  static I set1_8(int v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  static I set1_16(int v) { return _mm512_set1_epi16(static_cast<int16_t>(v)); }
  static I set1_32(int32_t v) { return _mm512_set1_epi32(v); }
  static F set1_ps(float v) { return _mm512_set1_ps(v); }
  static I zero() { return _mm512_setzero_si512(); }
  static I unlo8(I a, I b) { return _mm512_unpacklo_epi8(a, b); }
  static I unhi8(I a, I b) { return _mm512_unpackhi_epi8(a, b); }
  static I unlo16(I a, I b) { return _mm512_unpacklo_epi16(a, b); }
  static I unhi16(I a, I b) { return _mm512_unpackhi_epi16(a, b); }
  static I dp(I acc, I a, I w) { return _mm512_dpbusd_epi32(acc, a, w); }
  static I add32(I a, I b) { return _mm512_add_epi32(a, b); }
  static I mullo32(I a, I b) { return _mm512_mullo_epi32(a, b); }
  static I add16(I a, I b) { return _mm512_add_epi16(a, b); }
  static I packs32(I a, I b) { return _mm512_packs_epi32(a, b); }
  static I packus16(I a, I b) { return _mm512_packus_epi16(a, b); }
  static F cvt_ps(I a) { return _mm512_cvtepi32_ps(a); }
  static I cvt_i(F a) { return _mm512_cvtps_epi32(a); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F min(F a, F b) { return _mm512_min_ps(a, b); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static M mask(int n) { return n >= 64 ? ~M(0) : ((M(1) << n) - 1); }
};
#endif

#if defined(QPLUGIN_ISA_AVX512) || defined(QPLUGIN_ISA_AVXVNNI)
// Ymm: the 32-byte width of the depthwise VNNI kernel. AVX-512 masks its loads / stores with
// byte masks; the AVX-VNNI build (no mask registers) takes M as the byte count and moves a
// partial vector through a zeroed 32-byte buffer.
struct Ymm {
  using I = __m256i;
  using F = __m256;
#if defined(QPLUGIN_ISA_AVX512)
  using M = __mmask32;
  static I maskz_load8(M m, const uint8_t* p) { return _mm256_maskz_loadu_epi8(m, p); }
  static void mask_store8(uint8_t* p, M m, I v) { _mm256_mask_storeu_epi8(p, m, v); }
  static I dp(I acc, I a, I w) { return _mm256_dpbusd_epi32(acc, a, w); }
  static M mask(int n) { return n >= 32 ? ~M(0) : ((M(1) << n) - 1); }
#else
  using M = int;
  // a partial vector of whole dwords moves with vpmaskmovd (masked-off lanes read as zero and
  // never fault); other counts through a zeroed buffer
  static I dword_mask(M m) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(m / 4), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static I maskz_load8(M m, const uint8_t* p) {
    if (m >= 32) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if (m % 4 == 0) return _mm256_maskload_epi32(reinterpret_cast<const int*>(p), dword_mask(m));
    alignas(32) uint8_t buf[32] = {};
    std::memcpy(buf, p, static_cast<size_t>(m));
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(buf));
  }
  static void mask_store8(uint8_t* p, M m, I v) {
    if (m >= 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    } else if (m % 4 == 0) {
      _mm256_maskstore_epi32(reinterpret_cast<int*>(p), dword_mask(m), v);
    } else {
      alignas(32) uint8_t buf[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(buf), v);
      std::memcpy(p, buf, static_cast<size_t>(m));
    }
  }
  static I dp(I acc, I a, I w) { return _mm256_dpbusd_avx_epi32(acc, a, w); }
  static M mask(int n) { return n >= 32 ? 32 : n; }
#endif
  static constexpr int kCh = 32;
  static I loadu(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static F loadu_ps(const float* p) { return _mm256_loadu_ps(p); }
  static I set1_8(int v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static I set1_16(int v) { return _mm256_set1_epi16(static_cast<int16_t>(v)); }
  static I set1_32(int32_t v) { return _mm256_set1_epi32(v); }
  static F set1_ps(float v) { return _mm256_set1_ps(v); }
  static I zero() { return _mm256_setzero_si256(); }
  static I unlo8(I a, I b) { return _mm256_unpacklo_epi8(a, b); }
  static I unhi8(I a, I b) { return _mm256_unpackhi_epi8(a, b); }
  static I unlo16(I a, I b) { return _mm256_unpacklo_epi16(a, b); }
  static I unhi16(I a, I b) { return _mm256_unpackhi_epi16(a, b); }
  static I add32(I a, I b) { return _mm256_add_epi32(a, b); }
  static I mullo32(I a, I b) { return _mm256_mullo_epi32(a, b); }
  static I add16(I a, I b) { return _mm256_add_epi16(a, b); }
  static I packs32(I a, I b) { return _mm256_packs_epi32(a, b); }
  static I packus16(I a, I b) { return _mm256_packus_epi16(a, b); }
  static F cvt_ps(I a) { return _mm256_cvtepi32_ps(a); }
  static I cvt_i(F a) { return _mm256_cvtps_epi32(a); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F min(F a, F b) { return _mm256_min_ps(a, b); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
};
#endif

}  // namespace simd
}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
