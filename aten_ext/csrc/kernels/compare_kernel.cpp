// Compiled once per ISA (kernels/isa.h). Scalar loops are the reference and the
// tails; vector lanes compute the same integer tests.
#include "kernels/compare_kernel.h"

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

inline uint8_t in_range(int32_t v, const CmpRange& r) {
  return static_cast<uint8_t>((v >= r.lo && v <= r.hi) != r.invert);
}

#if QPLUGIN_SIMD
// 0/1 per lane for lo <= v <= hi, XOR invert.
#if defined(QPLUGIN_ISA_AVX512)
inline simd::VI range_01(simd::VI v, simd::VI lo, simd::VI hi, simd::VI inv) {
  const __mmask16 m = _mm512_cmpge_epi32_mask(v, lo) & _mm512_cmple_epi32_mask(v, hi);
  return _mm512_xor_si512(_mm512_maskz_set1_epi32(m, 1), inv);
}
inline simd::VI gather_i(const int32_t* t, simd::VI idx) { return _mm512_i32gather_epi32(idx, t, 4); }
inline simd::VI and_i(simd::VI a, simd::VI b) { return _mm512_and_si512(a, b); }
#else
inline simd::VI range_01(simd::VI v, simd::VI lo, simd::VI hi, simd::VI inv) {
  // v >= lo  <=>  !(lo > v)
  const __m256i lt = _mm256_cmpgt_epi32(lo, v);
  const __m256i gt = _mm256_cmpgt_epi32(v, hi);
  const __m256i out = _mm256_andnot_si256(_mm256_or_si256(lt, gt), _mm256_set1_epi32(1));
  return _mm256_xor_si256(out, inv);
}
inline simd::VI gather_i(const int32_t* t, simd::VI idx) { return _mm256_i32gather_epi32(t, idx, 4); }
inline simd::VI and_i(simd::VI a, simd::VI b) { return _mm256_and_si256(a, b); }
#endif
#endif

template <typename T>
void cmp_range(const T* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const CmpRange& r) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  if (qs == 1 && ys == 1) {
    using namespace simd;
    const VI lo = set1_i(r.lo), hi = set1_i(r.hi), inv = set1_i(r.invert ? 1 : 0);
    auto one = [&](int64_t j) { return range_01(load_q(q + j), lo, hi, inv); };
    for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
      store4_u8(y + i, one(i), one(i + kLanes), one(i + 2 * kLanes), one(i + 3 * kLanes));
    }
    for (; i + kLanes <= n; i += kLanes) store_u8(y + i, one(i));
  }
#endif
  for (; i < n; ++i) y[i * ys] = in_range(static_cast<int32_t>(q[i * qs]), r);
}

template <typename A, typename B>
void cmp_pair(const Cmp2& c, int64_t n, const CmpRange& r) {
  const A* a = static_cast<const A*>(c.a);
  const B* b = static_cast<const B*>(c.b);
  uint8_t* y = c.y;
  const bool tables = c.ta != nullptr;
  auto key_a = [&](A v) -> int32_t {
    return tables ? c.ta[static_cast<uint8_t>(v)] : static_cast<int32_t>(v) + c.off;
  };
  auto key_b = [&](B v) -> int32_t {
    return tables ? c.tb[static_cast<uint8_t>(v)] : static_cast<int32_t>(v);
  };
  int64_t i = 0;
#if defined(QPLUGIN_ISA_AVX512)
  if (tables && c.ys == 1 && c.as == 1 && c.bs == 1) {
    // 256-entry int16 tables held in registers: 4 two-register permutes on the
    // low 6 bits of the byte, then blends on bits 6 and 7.
    struct Lut {
      __m512i t[8];
      explicit Lut(const int16_t* p) {
        for (int k = 0; k < 8; ++k) t[k] = _mm512_loadu_si512(p + 32 * k);
      }
      __m512i operator()(__m512i idx) const {  // idx: 32 x uint16 in [0, 256)
        const __m512i r0 = _mm512_permutex2var_epi16(t[0], idx, t[1]);
        const __m512i r1 = _mm512_permutex2var_epi16(t[2], idx, t[3]);
        const __m512i r2 = _mm512_permutex2var_epi16(t[4], idx, t[5]);
        const __m512i r3 = _mm512_permutex2var_epi16(t[6], idx, t[7]);
        const __mmask32 b6 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(0x40));
        const __mmask32 b7 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(0x80));
        const __m512i r01 = _mm512_mask_blend_epi16(b6, r0, r1);
        const __m512i r23 = _mm512_mask_blend_epi16(b6, r2, r3);
        return _mm512_mask_blend_epi16(b7, r01, r23);
      }
    };
    const Lut la(c.ta16), lb(c.tb16);
    const __m512i lo = _mm512_set1_epi16(static_cast<int16_t>(r.lo < -32768 ? -32768 : r.lo));
    const __m512i hi = _mm512_set1_epi16(static_cast<int16_t>(r.hi > 32767 ? 32767 : r.hi));
    const __mmask32 inv = r.invert ? 0xffffffffu : 0u;
    auto bytes = [](const void* p) {  // 32 raw bytes as uint16 lanes
      return _mm512_cvtepu8_epi16(_mm256_loadu_si256(static_cast<const __m256i*>(p)));
    };
    for (; i + 32 <= n; i += 32) {
      const __m512i d = _mm512_sub_epi16(la(bytes(a + i)), lb(bytes(b + i)));
      const __mmask32 m = (_mm512_cmpge_epi16_mask(d, lo) & _mm512_cmple_epi16_mask(d, hi)) ^ inv;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_maskz_set1_epi8(m, 1));
    }
  }
#endif
#if QPLUGIN_SIMD
  if (c.ys == 1 && (c.as == 1 || c.as == 0) && (c.bs == 1 || c.bs == 0) && (c.as | c.bs) != 0) {
    using namespace simd;
    const VI lo = set1_i(r.lo), hi = set1_i(r.hi), inv = set1_i(r.invert ? 1 : 0);
    const VI off = set1_i(c.off), byte = set1_i(0xff);
    const VI a_bc = set1_i(key_a(a[0])), b_bc = set1_i(key_b(b[0]));
    const bool a_vec = c.as == 1, b_vec = c.bs == 1;
    auto one = [&](int64_t j) {
      VI ka = a_bc, kb = b_bc;
      if (a_vec) {
        const VI v = load_q(a + j);
        ka = tables ? gather_i(c.ta, and_i(v, byte)) : add_i(v, off);
      }
      if (b_vec) {
        const VI v = load_q(b + j);
        kb = tables ? gather_i(c.tb, and_i(v, byte)) : v;
      }
      return range_01(sub_i(ka, kb), lo, hi, inv);
    };
    for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
      store4_u8(y + i, one(i), one(i + kLanes), one(i + 2 * kLanes), one(i + 3 * kLanes));
    }
    for (; i + kLanes <= n; i += kLanes) store_u8(y + i, one(i));
  }
#endif
  for (; i < n; ++i) y[i * c.ys] = in_range(key_a(a[i * c.as]) - key_b(b[i * c.bs]), r);
}

} // namespace

void cmp_range_u8(const uint8_t* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const CmpRange& r) {
  cmp_range(q, qs, y, ys, n, r);
}
void cmp_range_s8(const int8_t* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const CmpRange& r) {
  cmp_range(q, qs, y, ys, n, r);
}
void cmp_range_s32(const int32_t* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const CmpRange& r) {
  cmp_range(q, qs, y, ys, n, r);
}
void cmp_pair8(const Cmp2& c, int64_t n, const CmpRange& r) {
  if (c.kind_a == 0 && c.kind_b == 0) return cmp_pair<uint8_t, uint8_t>(c, n, r);
  if (c.kind_a == 0) return cmp_pair<uint8_t, int8_t>(c, n, r);
  if (c.kind_b == 0) return cmp_pair<int8_t, uint8_t>(c, n, r);
  return cmp_pair<int8_t, int8_t>(c, n, r);
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
