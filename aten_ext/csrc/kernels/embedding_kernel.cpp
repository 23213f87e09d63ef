// Embedding-bag kernel; see embedding_kernel.h for the contract. Compiled once per ISA. The
// scalar build's loops (row by row through memory) are the reference; the SIMD builds keep a
// bag's output in registers across its rows (bag_block) and do the same operations per element
// in the same order.
#include "kernels/embedding_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {

#if !QPLUGIN_SIMD
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
  for (int64_t j = 0; j < w.D; ++j) buf[j] = (p[j / 2] >> ((j & 1) * 4)) & 0x0F;
  return buf;
}

// o[j] = fma(s, q[j], o[j] + b)
inline void sum_row(float* o, const uint8_t* q, int64_t D, float s, float b) {
  for (int64_t j = 0; j < D; ++j) o[j] = std::fma(s, static_cast<float>(q[j]), o[j] + b);
}

// o[j] = fma(s, q[j], b) (first row of a max bag), or the larger of o[j] and that (o[j] when
// o[j] > v, else v: x86 MAXPS's rule, NaN included).
inline void max_row(float* o, const uint8_t* q, int64_t D, float s, float b, bool first) {
  for (int64_t j = 0; j < D; ++j) {
    const float v = std::fma(s, static_cast<float>(q[j]), b);
    o[j] = first ? v : (o[j] > v ? o[j] : v);
  }
}

inline void scale_row(float* o, int64_t D, float m) {
  for (int64_t j = 0; j < D; ++j) o[j] *= m;
}

} // namespace
#endif

#if QPLUGIN_SIMD
namespace {

using namespace simd;

constexpr int kMaxNV = 8;          // full vectors a block keeps in registers (64 / 128 floats)
constexpr int64_t kPrefetch = 16;  // indices ahead whose rows the first block prefetches

// A row's scale and bias at p (fp16 through F16C: exact, as half_to_float).
template <bool Half>
inline void qparams_at(const uint8_t* p, float* scale, float* bias) {
  if (Half) {
    int32_t sb;
    std::memcpy(&sb, p, 4);
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi32_si128(sb));
    *scale = _mm_cvtss_f32(f);
    *bias = _mm_cvtss_f32(_mm_movehdup_ps(f));
  } else {
    std::memcpy(scale, p, 4);
    std::memcpy(bias, p + 4, 4);
  }
}

// 4-bit bytes -> their nibbles, one a byte, in element order (low nibble first): the first
// 2 * (bytes in v) of the result's bytes.
inline __m128i nibbles_lo(__m128i v) {
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm_unpacklo_epi8(_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m));
}
inline __m128i nibbles_hi(__m128i v) {
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm_unpackhi_epi8(_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m));
}

// The kLanes codes of a row from element j (j even at 4 bits); reads exactly the bytes holding them.
template <int Bits>
inline VI codes1(const uint8_t* p, int64_t j) {
  if (Bits == 8) return load_u8(p + j);
#if defined(QPLUGIN_ISA_AVX512)
  return _mm512_cvtepu8_epi32(nibbles_lo(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + j / 2))));
#else
  int32_t b4;
  std::memcpy(&b4, p + j / 2, 4);
  return _mm256_cvtepu8_epi32(nibbles_lo(_mm_cvtsi32_si128(b4)));
#endif
}

// 2 * kLanes codes from element j: the same, two vectors from one load.
template <int Bits>
inline void codes2(const uint8_t* p, int64_t j, VI* c0, VI* c1) {
  if (Bits == 8) {
    *c0 = load_u8(p + j);
    *c1 = load_u8(p + j + kLanes);
    return;
  }
#if defined(QPLUGIN_ISA_AVX512)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j / 2));
  *c0 = _mm512_cvtepu8_epi32(nibbles_lo(v));
  *c1 = _mm512_cvtepu8_epi32(nibbles_hi(v));
#else
  const __m128i x = nibbles_lo(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + j / 2)));
  *c0 = _mm256_cvtepu8_epi32(x);
  *c1 = _mm256_cvtepu8_epi32(_mm_unpackhi_epi64(x, x));
#endif
}

#if defined(QPLUGIN_ISA_AVX512)
// The first n (< kLanes) codes from element j (j even at 4 bits) in the low lanes, through a
// masked load (no byte past them is read); the other lanes hold 0 or a stray nibble, never stored.
template <int Bits>
inline VI codes_n(const uint8_t* p, int64_t j, int n) {
  if (Bits == 8) return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(static_cast<__mmask16>(_bzhi_u32(0xFFFFu, n)), p + j));
  const __m128i v = _mm_maskz_loadu_epi8(static_cast<__mmask16>(_bzhi_u32(0xFFFFu, (n + 1) / 2)), p + j / 2);
  return _mm512_cvtepu8_epi32(nibbles_lo(v));
}
#endif

// Code j of a row (the scalar tail).
template <int Bits>
inline float code_at(const uint8_t* p, int64_t j) {
  if (Bits == 8) return static_cast<float>(p[j]);
  return static_cast<float>((p[j / 2] >> ((j & 1) * 4)) & 0x0F);
}

// One row into one accumulator: sum_row's / max_row's operation (max: acc starts at -inf, where
// max_f(-inf, v) = v for every v, NaN included, as the first row's copy).
template <bool Max>
inline VF step(VF acc, VI code, VF sv, VF bv) {
  if (Max) return max_f(acc, fmadd_f(sv, to_f(code), bv));
  return fmadd_f(sv, to_f(code), add_f(acc, bv));
}
template <bool Max>
inline float step1(float acc, float code, float s, float b) {
  if (Max) {
    const float v = std::fma(s, code, b);
    return acc > v ? acc : v;
  }
  return std::fma(s, code, acc + b);
}

// Columns [j0, j0 + NV * kLanes + tail) of bag [s0, s1) into o (the bag's row), accumulators in
// registers across the bag's rows; tail < kLanes columns after the full vectors (AVX-512: one
// masked vector; AVX2: scalar). Rows idx[s0 .. pf_end) are prefetched kPrefetch ahead when
// prefetch is set (the first block of a bag; pf_end: the end of this task's indices).
template <int NV, bool Tail, int Bits, bool Half, bool Max, bool Psw>
void bag_block(const EmbRows& w, const int64_t* idx, int64_t s0, int64_t s1, int64_t pf_end, const float* psw,
               bool mean, int64_t j0, int tail, bool prefetch, float* o) {
  constexpr int kAcc = NV + (Tail ? 1 : 0);
  const VF init = set1_f(Max ? -INFINITY : 0.0f);
  VF a[kAcc > 0 ? kAcc : 1];
#pragma GCC unroll 16
  for (int k = 0; k < kAcc; ++k) a[k] = init;
#if !defined(QPLUGIN_ISA_AVX512)
  float ta[kLanes];
  if (Tail) std::fill(ta, ta + kLanes, Max ? -INFINITY : 0.0f);
#endif
  const uint8_t* const data = w.data;
  const uint8_t* const qp = w.qp;
  const int64_t row_bytes = w.row_bytes, qp_stride = w.qp_stride;
  const int64_t code_bytes = Bits == 8 ? w.D : (w.D + 1) / 2;
  const int64_t pf_stop = prefetch ? pf_end - kPrefetch : s0;  // i < pf_stop: prefetch idx[i + kPrefetch]'s row
  bool any = false;
  for (int64_t i = s0; i < s1; ++i) {
    if (i < pf_stop) {
      const int64_t rp = idx[i + kPrefetch];
      if (rp >= 0) {
        const char* pp = reinterpret_cast<const char*>(data + rp * row_bytes);
        int64_t l = 0;
        do {
          _mm_prefetch(pp + l, _MM_HINT_T0);
          l += 64;
        } while (l < code_bytes);
        _mm_prefetch(reinterpret_cast<const char*>(qp + rp * qp_stride), _MM_HINT_T0);
      }
    }
    const int64_t r = idx[i];
    if (r < 0) continue;
    if (Max) any = true;
    float s, b;
    qparams_at<Half>(qp + r * qp_stride, &s, &b);
    if (Psw) {
      b = b * psw[i];
      s = s * psw[i];
    }
    const uint8_t* p = data + r * row_bytes;
    const VF sv = set1_f(s), bv = set1_f(b);
#pragma GCC unroll 8
    for (int k = 0; k + 1 < NV; k += 2) {
      VI c0, c1;
      codes2<Bits>(p, j0 + k * kLanes, &c0, &c1);
      a[k] = step<Max>(a[k], c0, sv, bv);
      a[k + 1] = step<Max>(a[k + 1], c1, sv, bv);
    }
    if (NV % 2 == 1) a[NV - 1] = step<Max>(a[NV - 1], codes1<Bits>(p, j0 + (NV - 1) * kLanes), sv, bv);
    if (Tail) {
#if defined(QPLUGIN_ISA_AVX512)
      a[kAcc - 1] = step<Max>(a[kAcc - 1], codes_n<Bits>(p, j0 + NV * kLanes, tail), sv, bv);
#else
      for (int t = 0; t < tail; ++t) ta[t] = step1<Max>(ta[t], code_at<Bits>(p, j0 + NV * kLanes + t), s, b);
#endif
    }
  }
  if (Max && !any) {  // an empty max bag (or all its rows pruned) gives 0
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) a[k] = set1_f(0.0f);
#if !defined(QPLUGIN_ISA_AVX512)
    if (Tail) std::fill(ta, ta + kLanes, 0.0f);
#endif
  }
  if (!Max && mean && s1 > s0) {
    const float m = 1.0f / static_cast<float>(s1 - s0);
    const VF mv = set1_f(m);
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) a[k] = mul_f(a[k], mv);
#if !defined(QPLUGIN_ISA_AVX512)
    if (Tail)
      for (int t = 0; t < tail; ++t) ta[t] *= m;
#endif
  }
#pragma GCC unroll 16
  for (int k = 0; k < NV; ++k) storeu_f(o + j0 + k * kLanes, a[k]);
  if (Tail) {
#if defined(QPLUGIN_ISA_AVX512)
    _mm512_mask_storeu_ps(o + j0 + NV * kLanes, static_cast<__mmask16>(_bzhi_u32(0xFFFFu, tail)), a[kAcc - 1]);
#else
    std::copy(ta, ta + tail, o + j0 + NV * kLanes);
#endif
  }
}

using BlockFn = void (*)(const EmbRows&, const int64_t*, int64_t, int64_t, int64_t, const float*, bool, int64_t, int,
                         bool, float*);

// bag_block for nv full vectors (0..kMaxNV) and a tail or not.
template <int Bits, bool Half, bool Max, bool Psw>
BlockFn block_fn(int nv, bool tail) {
#define QPLUGIN_EMB_NV_(n) \
  case n:                  \
    return tail ? &bag_block<n, true, Bits, Half, Max, Psw> : &bag_block<n, false, Bits, Half, Max, Psw>;
  switch (nv) {
    QPLUGIN_EMB_NV_(0) QPLUGIN_EMB_NV_(1) QPLUGIN_EMB_NV_(2) QPLUGIN_EMB_NV_(3)
    QPLUGIN_EMB_NV_(4) QPLUGIN_EMB_NV_(5) QPLUGIN_EMB_NV_(6) QPLUGIN_EMB_NV_(7)
    default: return tail ? &bag_block<kMaxNV, true, Bits, Half, Max, Psw> : &bag_block<kMaxNV, false, Bits, Half, Max, Psw>;
  }
#undef QPLUGIN_EMB_NV_
}

// Bags [b0, b1): the row's columns in blocks of kMaxNV vectors, the last block with the rest and
// the tail; the block functions are picked once per call.
template <int Bits, bool Half, bool Max, bool Psw>
void bags_simd(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw, bool mean, int64_t b0,
               int64_t b1, float* out) {
  const int64_t D = w.D, nvec = D / kLanes;
  const int tail = static_cast<int>(D % kLanes);
  const int64_t nfull = nvec / kMaxNV;  // blocks of kMaxNV vectors before the last
  int last_nv = static_cast<int>(nvec % kMaxNV);
  int64_t blocks = nfull;
  if (last_nv == 0 && tail == 0) {
    --blocks;  // the last full block is the last block
    last_nv = kMaxNV;
  }
  const BlockFn full = block_fn<Bits, Half, Max, Psw>(kMaxNV, false);
  const BlockFn last = block_fn<Bits, Half, Max, Psw>(last_nv, tail > 0);
  const int64_t pf_end = starts[b1];
  for (int64_t b = b0; b < b1; ++b) {
    float* o = out + b * D;
    int64_t j0 = 0;
    for (int64_t k = 0; k < blocks; ++k, j0 += kMaxNV * kLanes)
      full(w, idx, starts[b], starts[b + 1], pf_end, psw, mean, j0, 0, k == 0, o);
    last(w, idx, starts[b], starts[b + 1], pf_end, psw, mean, j0, tail, blocks == 0, o);
  }
}

template <int Bits, bool Half>
void bags_for(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw, int mode, bool mean,
              int64_t b0, int64_t b1, float* out) {
  if (mode == 2) return bags_simd<Bits, Half, true, false>(w, idx, starts, nullptr, false, b0, b1, out);
  if (psw != nullptr) return bags_simd<Bits, Half, false, true>(w, idx, starts, psw, mean, b0, b1, out);
  return bags_simd<Bits, Half, false, false>(w, idx, starts, nullptr, mean, b0, b1, out);
}

} // namespace
#endif

void embedding_bag_rows(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw,
                        int mode, int64_t b0, int64_t b1, float* out) {
#if QPLUGIN_SIMD
  const bool mean = mode == 1;
  if (w.bits == 8 && !w.half) return bags_for<8, false>(w, idx, starts, psw, mode, mean, b0, b1, out);
  if (w.bits == 8) return bags_for<8, true>(w, idx, starts, psw, mode, mean, b0, b1, out);
  if (!w.half) return bags_for<4, false>(w, idx, starts, psw, mode, mean, b0, b1, out);
  return bags_for<4, true>(w, idx, starts, psw, mode, mean, b0, b1, out);
#else
  // the scalar reference: every bag row by row through memory
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
#endif
}

void index_range(const int64_t* x, int64_t n, int64_t* lo, int64_t* hi) {
  int64_t mn = x[0], mx = x[0], i = 0;
#if QPLUGIN_SIMD
  constexpr int kQ = simd::kLanes / 2;  // int64 lanes
  alignas(64) int64_t a[kQ], b[kQ];
#if defined(QPLUGIN_ISA_AVX512)
  __m512i vmn = _mm512_set1_epi64(mn), vmx = vmn;
  for (; i + kQ <= n; i += kQ) {
    const __m512i v = _mm512_loadu_si512(x + i);
    vmn = _mm512_min_epi64(vmn, v);
    vmx = _mm512_max_epi64(vmx, v);
  }
  _mm512_store_si512(a, vmn);
  _mm512_store_si512(b, vmx);
#else
  __m256i vmn = _mm256_set1_epi64x(mn), vmx = vmn;
  for (; i + kQ <= n; i += kQ) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    vmn = _mm256_blendv_epi8(vmn, v, _mm256_cmpgt_epi64(vmn, v));
    vmx = _mm256_blendv_epi8(vmx, v, _mm256_cmpgt_epi64(v, vmx));
  }
  _mm256_store_si256(reinterpret_cast<__m256i*>(a), vmn);
  _mm256_store_si256(reinterpret_cast<__m256i*>(b), vmx);
#endif
  for (int k = 0; k < kQ; ++k) {
    mn = std::min(mn, a[k]);
    mx = std::max(mx, b[k]);
  }
#endif
  for (; i < n; ++i) {
    mn = std::min(mn, x[i]);
    mx = std::max(mx, x[i]);
  }
  *lo = mn;
  *hi = mx;
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
