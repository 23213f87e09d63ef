// Compiled once per ISA (kernels/isa.h). Scalar loops are the reference and the
// tails; vector lanes compute the same integer tests.
#include "kernels/compare_kernel.h"

#include <algorithm>
#include <type_traits>

#include "kernels/bytes_simd.h"
#include "kernels/quantize_math.h"
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
#elif defined(QPLUGIN_ISA_NEON)
inline simd::VI range_01(simd::VI v, simd::VI lo, simd::VI hi, simd::VI inv) {
  const int32x4_t one = vdupq_n_s32(1);
  auto half = [&](int k) {
    const uint32x4_t in = vandq_u32(vcgeq_s32(v.v[k], lo.v[k]), vcleq_s32(v.v[k], hi.v[k]));
    return veorq_s32(vandq_s32(vreinterpretq_s32_u32(in), one), inv.v[k]);
  };
  return simd::VI{{half(0), half(1)}};
}
// NEON has no gather: the lanes looked up one by one.
inline simd::VI gather_i(const int32_t* t, simd::VI idx) {
  alignas(16) int32_t i[simd::kLanes], r[simd::kLanes];
  simd::storeu_i(i, idx);
  for (int k = 0; k < simd::kLanes; ++k) r[k] = t[i[k]];
  return simd::loadu_i(r);
}
inline simd::VI and_i(simd::VI a, simd::VI b) {
  return simd::VI{{vandq_s32(a.v[0], b.v[0]), vandq_s32(a.v[1], b.v[1])}};
}
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

#if defined(QPLUGIN_ISA_AVX2) || defined(QPLUGIN_ISA_NEON)
// 8-bit lanes, 32 per vector: bytes 0/1 for (lo <= q <= hi) XOR invert, the
// range already clamped to T's (lo <= hi): one max, one min, one compare.
template <typename T>
inline bytes::VB range01_8(bytes::VB q, bytes::VB lo, bytes::VB hi, bytes::VB inv) {
  using namespace bytes;
  const VB in = veq8(vmin(vmax(q, lo, T()), hi, T()), q);
  return vxor(vand(in, vset(1, uint8_t())), inv);
}
#endif

#if defined(QPLUGIN_ISA_AVX2)
// 16-bit lanes: the 32 bytes of v widened in the order that packs_epi16 restores
// (per 128-bit half: bytes 0-7 then 8-15).
template <typename T>
inline void widen16(__m256i v, __m256i* lo, __m256i* hi) {
  if constexpr (std::is_signed_v<T>) {
    *lo = _mm256_srai_epi16(_mm256_unpacklo_epi8(v, v), 8);
    *hi = _mm256_srai_epi16(_mm256_unpackhi_epi8(v, v), 8);
  } else {
    *lo = _mm256_unpacklo_epi8(v, _mm256_setzero_si256());
    *hi = _mm256_unpackhi_epi8(v, _mm256_setzero_si256());
  }
}
// 0xFFFF per 16-bit lane for lo <= d <= hi.
inline __m256i in16(__m256i d, __m256i lo, __m256i hi) {
  return _mm256_cmpeq_epi16(_mm256_min_epi16(_mm256_max_epi16(d, lo), hi), d);
}
inline int16_t sat16(int32_t v) { return static_cast<int16_t>(std::min(32767, std::max(-32768, v))); }
#endif

#if defined(QPLUGIN_ISA_AVX2)
// Mixed-grid 8-bit pairs: the rank tables order values as float(q - z) * s does (cpu/compare.cpp
// builds them from those floats), so compare those floats: sign(rank_a - rank_b) is
// sign(deq_a - deq_b), and the op's range over that sign is one predicate kPred. 0/1 bytes for
// the dense / broadcast operands; returns how many elements were done (whole vectors).
template <int kPred, typename A, typename B>
int64_t cmp_floats(const A* a, const B* b, uint8_t* y, int64_t n, const Cmp2& c) {
  using namespace simd;
  const VI za = set1_i(c.za), zb = set1_i(c.zb);
  const VF sa = set1_f(c.sa), sb = set1_f(c.sb);
  const VF a_bc = set1_f(static_cast<float>(static_cast<int32_t>(a[0]) - c.za) * c.sa);
  const VF b_bc = set1_f(static_cast<float>(static_cast<int32_t>(b[0]) - c.zb) * c.sb);
  const bool a_vec = c.as == 1, b_vec = c.bs == 1;
  auto mask = [&](int64_t j) {  // -1 / 0 per lane
    const VF fa = a_vec ? mul_f(to_f(sub_i(load_q(a + j), za)), sa) : a_bc;
    const VF fb = b_vec ? mul_f(to_f(sub_i(load_q(b + j), zb)), sb) : b_bc;
    return _mm256_castps_si256(_mm256_cmp_ps(fa, fb, kPred));
  };
  const __m256i one = _mm256_set1_epi8(1);
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    const __m256i m = pack4_(mask(i), mask(i + kLanes), mask(i + 2 * kLanes), mask(i + 3 * kLanes), true);
    bytes::stb(y + i, _mm256_and_si256(m, one));
  }
  for (; i + kLanes <= n; i += kLanes) store_u8(y + i, _mm256_and_si256(mask(i), _mm256_set1_epi32(1)));
  return i;
}
#endif

template <typename T>
void cmp_range(const T* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const CmpRange& r) {
  int64_t i = 0;
#if defined(QPLUGIN_ISA_AVX2) || defined(QPLUGIN_ISA_NEON)
  if constexpr (sizeof(T) == 1) {
    const int32_t lo = std::max<int32_t>(r.lo, QRange<T>::min), hi = std::min<int32_t>(r.hi, QRange<T>::max);
    if (qs == 1 && ys == 1 && lo <= hi) {
      using namespace bytes;
      const VB vlo = vset(lo, T()), vhi = vset(hi, T()), inv = vset(r.invert ? 1 : 0, uint8_t());
      for (; i + 2 * kVecBytes <= n; i += 2 * kVecBytes) {
        stb(y + i, range01_8<T>(ldb(q + i), vlo, vhi, inv));
        stb(y + i + kVecBytes, range01_8<T>(ldb(q + i + kVecBytes), vlo, vhi, inv));
      }
      for (; i + kVecBytes <= n; i += kVecBytes) stb(y + i, range01_8<T>(ldb(q + i), vlo, vhi, inv));
    }
  }
#endif
#if QPLUGIN_SIMD
  if (qs == 1 && ys == 1) {
    using namespace simd;
    const VI lo = set1_i(r.lo), hi = set1_i(r.hi), inv = set1_i(r.invert ? 1 : 0);
    auto one = [&](int64_t j) {
      return range_01(load_q(q + j), lo, hi, inv);
    };
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
    auto raw16 = [](const void* p) {  // 32 raw bytes (table indexes) as uint16 lanes
      return bytes::load16(static_cast<const uint8_t*>(p));
    };
    for (; i + 32 <= n; i += 32) {
      const __m512i d = _mm512_sub_epi16(la(raw16(a + i)), lb(raw16(b + i)));
      const __mmask32 m = (_mm512_cmpge_epi16_mask(d, lo) & _mm512_cmple_epi16_mask(d, hi)) ^ inv;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_maskz_set1_epi8(m, 1));
    }
  }
#endif
#if defined(QPLUGIN_ISA_AVX2)
  if (!tables && c.ys == 1 && c.as == 1 && c.bs == 1) {
    // d = a + off - b in 16-bit lanes (|d| < 1024), 32 elements per step.
    const __m256i off = _mm256_set1_epi16(static_cast<int16_t>(c.off));
    const __m256i lo = _mm256_set1_epi16(sat16(r.lo)), hi = _mm256_set1_epi16(sat16(r.hi));
    const __m256i one = _mm256_set1_epi8(1), inv = _mm256_set1_epi8(r.invert ? 1 : 0);
    for (; i + 32 <= n; i += 32) {
      __m256i a0, a1, b0, b1;
      widen16<A>(bytes::ldb(a + i), &a0, &a1);
      widen16<B>(bytes::ldb(b + i), &b0, &b1);
      const __m256i d0 = _mm256_sub_epi16(_mm256_add_epi16(a0, off), b0);
      const __m256i d1 = _mm256_sub_epi16(_mm256_add_epi16(a1, off), b1);
      const __m256i m = _mm256_packs_epi16(in16(d0, lo, hi), in16(d1, lo, hi));
      bytes::stb(y + i, _mm256_xor_si256(_mm256_and_si256(m, one), inv));
    }
  }
  if (tables && c.ys == 1 && (c.as == 1 || c.as == 0) && (c.bs == 1 || c.bs == 0) && (c.as | c.bs) != 0) {
    // The rank tables order values as float(q - z) * s does (cpu/compare.cpp builds them from those
    // floats), so compare the floats: sign(deq_a - deq_b) has d's sign, and every range is a sign test.
    // The range over sign(d) in {-1, 0, 1} is one of 8 sets, i.e. one float predicate.
    int set = 0;
    for (int d = -1; d <= 1; ++d) set |= in_range(d, r) << (d + 1);
    switch (set) {
      case 0: i = cmp_floats<_CMP_FALSE_OQ>(a, b, y, n, c); break;
      case 1: i = cmp_floats<_CMP_LT_OQ>(a, b, y, n, c); break;
      case 2: i = cmp_floats<_CMP_EQ_OQ>(a, b, y, n, c); break;
      case 3: i = cmp_floats<_CMP_LE_OQ>(a, b, y, n, c); break;
      case 4: i = cmp_floats<_CMP_GT_OQ>(a, b, y, n, c); break;
      case 5: i = cmp_floats<_CMP_NEQ_OQ>(a, b, y, n, c); break;
      case 6: i = cmp_floats<_CMP_GE_OQ>(a, b, y, n, c); break;
      default: i = cmp_floats<_CMP_TRUE_UQ>(a, b, y, n, c); break;
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

}  // namespace

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

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
