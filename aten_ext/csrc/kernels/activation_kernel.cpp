// Compiled once per ISA (see kernels/isa.h). The scalar loops are the reference
// and the tails of the vector loops.
#include "kernels/activation_kernel.h"

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

#if defined(QPLUGIN_ISA_AVX512)
using VB = __m512i;
constexpr int kBytes = 64;
inline VB ldb(const void* p) { return _mm512_loadu_si512(p); }
inline void stb(void* p, VB v) { _mm512_storeu_si512(p, v); }
inline VB vmax(VB a, VB b, const uint8_t*) { return _mm512_max_epu8(a, b); }
inline VB vmin(VB a, VB b, const uint8_t*) { return _mm512_min_epu8(a, b); }
inline VB vset(int32_t v, const uint8_t*) { return _mm512_set1_epi8(static_cast<char>(v)); }
inline VB vmax(VB a, VB b, const int8_t*) { return _mm512_max_epi8(a, b); }
inline VB vmin(VB a, VB b, const int8_t*) { return _mm512_min_epi8(a, b); }
inline VB vset(int32_t v, const int8_t*) { return _mm512_set1_epi8(static_cast<char>(v)); }
inline VB vmax(VB a, VB b, const int32_t*) { return _mm512_max_epi32(a, b); }
inline VB vmin(VB a, VB b, const int32_t*) { return _mm512_min_epi32(a, b); }
inline VB vset(int32_t v, const int32_t*) { return _mm512_set1_epi32(v); }
#elif defined(QPLUGIN_ISA_AVX2)
using VB = __m256i;
constexpr int kBytes = 32;
inline VB ldb(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline void stb(void* p, VB v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
inline VB vmax(VB a, VB b, const uint8_t*) { return _mm256_max_epu8(a, b); }
inline VB vmin(VB a, VB b, const uint8_t*) { return _mm256_min_epu8(a, b); }
inline VB vset(int32_t v, const uint8_t*) { return _mm256_set1_epi8(static_cast<char>(v)); }
inline VB vmax(VB a, VB b, const int8_t*) { return _mm256_max_epi8(a, b); }
inline VB vmin(VB a, VB b, const int8_t*) { return _mm256_min_epi8(a, b); }
inline VB vset(int32_t v, const int8_t*) { return _mm256_set1_epi8(static_cast<char>(v)); }
inline VB vmax(VB a, VB b, const int32_t*) { return _mm256_max_epi32(a, b); }
inline VB vmin(VB a, VB b, const int32_t*) { return _mm256_min_epi32(a, b); }
inline VB vset(int32_t v, const int32_t*) { return _mm256_set1_epi32(v); }
#endif

template <typename T>
void clamp_impl(const T* x, T* y, int64_t n, int32_t lo, int32_t hi) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  constexpr int64_t kPer = kBytes / sizeof(T);
  const T* tag = nullptr;
  const VB vlo = vset(lo, tag);
  const VB vhi = vset(hi, tag);
  for (; i + 4 * kPer <= n; i += 4 * kPer) {
    const VB a = ldb(x + i), b = ldb(x + i + kPer), c = ldb(x + i + 2 * kPer), d = ldb(x + i + 3 * kPer);
    stb(y + i, vmin(vmax(a, vlo, tag), vhi, tag));
    stb(y + i + kPer, vmin(vmax(b, vlo, tag), vhi, tag));
    stb(y + i + 2 * kPer, vmin(vmax(c, vlo, tag), vhi, tag));
    stb(y + i + 3 * kPer, vmin(vmax(d, vlo, tag), vhi, tag));
  }
  for (; i + kPer <= n; i += kPer) stb(y + i, vmin(vmax(ldb(x + i), vlo, tag), vhi, tag));
#endif
  for (; i < n; ++i) {
    const int32_t m = x[i] < lo ? lo : x[i];  // max, then min (as torch: lo > hi gives hi)
    y[i] = static_cast<T>(m > hi ? hi : m);
  }
}

#if defined(QPLUGIN_ISA_AVX512)
// 256-entry byte table with VBMI: two 128-entry VPERMI2B lookups, picked by bit 7.
__attribute__((target("avx512vbmi"))) inline VB lut_vbmi_one(VB v, VB t0, VB t1, VB t2, VB t3) {
  const VB lo = _mm512_permutex2var_epi8(t0, v, t1);
  const VB hi = _mm512_permutex2var_epi8(t2, v, t3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi);
}

__attribute__((target("avx512vbmi"))) int64_t lut_vbmi(const uint8_t* x, uint8_t* y, int64_t n,
                                                       const uint8_t* table) {
  const VB t0 = ldb(table), t1 = ldb(table + 64), t2 = ldb(table + 128), t3 = ldb(table + 192);
  int64_t i = 0;
  auto one = [&](VB v) { return lut_vbmi_one(v, t0, t1, t2, t3); };
  for (; i + 2 * kBytes <= n; i += 2 * kBytes) {
    const VB a = ldb(x + i), b = ldb(x + i + kBytes);
    stb(y + i, one(a));
    stb(y + i + kBytes, one(b));
  }
  for (; i + kBytes <= n; i += kBytes) stb(y + i, one(ldb(x + i)));
  return i;
}

// Without VBMI: 16 in-lane VPSHUFB lookups of 16 entries each, each applied
// under the mask of bytes whose high nibble selects that block.
int64_t lut_shuffle(const uint8_t* x, uint8_t* y, int64_t n, const uint8_t* table) {
  VB t[16];
  for (int k = 0; k < 16; ++k) {
    alignas(64) uint8_t rep[64];  // block k in each 128-bit lane
    for (int j = 0; j < 64; ++j) rep[j] = table[16 * k + (j & 15)];
    t[k] = ldb(rep);
  }
  const VB low4 = _mm512_set1_epi8(0x0F);
  int64_t i = 0;
  for (; i + kBytes <= n; i += kBytes) {
    const VB v = ldb(x + i);
    const VB lo = _mm512_and_si512(v, low4);
    const VB hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
    VB r = _mm512_shuffle_epi8(t[0], lo);
    for (int k = 1; k < 16; ++k) {
      const __mmask64 m = _mm512_cmpeq_epi8_mask(hi, _mm512_set1_epi8(static_cast<char>(k)));
      r = _mm512_mask_shuffle_epi8(r, m, t[k], lo);
    }
    stb(y + i, r);
  }
  return i;
}
#elif defined(QPLUGIN_ISA_AVX2)
// 16 in-lane VPSHUFB lookups of 16 entries each. Block k sees index
// sat_add(x - 16k, 0x70) (x - 16k wrapping): for bytes in block k that is
// 0x70..0x7F (low nibble kept); for every other byte x - 16k wraps to >= 16,
// so the index has bit 7 set and VPSHUFB writes 0. OR-ing the 16 results
// leaves each byte's one entry.
int64_t lut_shuffle(const uint8_t* x, uint8_t* y, int64_t n, const uint8_t* table) {
  VB t[16];
  for (int k = 0; k < 16; ++k) {
    t[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
  }
  const VB bias = _mm256_set1_epi8(0x70);
  const VB step = _mm256_set1_epi8(0x10);
  int64_t i = 0;
  for (; i + kBytes <= n; i += kBytes) {
    VB s = ldb(x + i);
    VB r = _mm256_setzero_si256();
    for (int k = 0; k < 16; ++k) {
      r = _mm256_or_si256(r, _mm256_shuffle_epi8(t[k], _mm256_adds_epu8(s, bias)));
      s = _mm256_sub_epi8(s, step);
    }
    stb(y + i, r);
  }
  return i;
}
#endif

} // namespace

void clamp_u8(const uint8_t* x, uint8_t* y, int64_t n, int32_t lo, int32_t hi) { clamp_impl(x, y, n, lo, hi); }
void clamp_s8(const int8_t* x, int8_t* y, int64_t n, int32_t lo, int32_t hi) { clamp_impl(x, y, n, lo, hi); }
void clamp_s32(const int32_t* x, int32_t* y, int64_t n, int32_t lo, int32_t hi) { clamp_impl(x, y, n, lo, hi); }

void lut_apply8(const uint8_t* x, uint8_t* y, int64_t n, const uint8_t* table, bool use_vbmi) {
  int64_t i = 0;
#if defined(QPLUGIN_ISA_AVX512)
  i = use_vbmi ? lut_vbmi(x, y, n, table) : lut_shuffle(x, y, n, table);
#elif defined(QPLUGIN_ISA_AVX2)
  i = lut_shuffle(x, y, n, table);
#endif
  for (; i + 4 <= n; i += 4) {
    const uint8_t a = table[x[i]], b = table[x[i + 1]], c = table[x[i + 2]], d = table[x[i + 3]];
    y[i] = a;
    y[i + 1] = b;
    y[i + 2] = c;
    y[i + 3] = d;
  }
  for (; i < n; ++i) y[i] = table[x[i]];
}

void act_map_s32(const int32_t* x, int32_t* y, int64_t n, const ActSpec* spec) {
  const ActSpec s = *spec;
  for (int64_t i = 0; i < n; ++i) y[i] = act_apply<int32_t>(s, x[i]);
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
