// Embedding-bag kernel; see embedding_kernel.h for the contract. Compiled once per ISA. The
// scalar build's loops (row by row through memory) are the reference; the SIMD builds keep a
// bag's output in registers across its rows (bag_block) and do the same operations per element
// in the same order. The vector code is written on x86 intrinsics (QPLUGIN_SIMD_X86); the NEON
// build runs the scalar loops.
#include "kernels/embedding_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {

#if !defined(QPLUGIN_SIMD_X86)
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

}  // namespace
#endif

#if defined(QPLUGIN_SIMD_X86)
namespace {

using namespace simd;

constexpr int kMaxNV = 8;          // full vectors a block keeps in registers (64 / 128 floats)
constexpr int64_t kPrefetch = 40;  // indices ahead whose rows are prefetched (fbgemm's 16 is too short
                                   // a lead for rows in DRAM: they arrive late)
// Tables up to this size are not prefetched: they sit in L2 (1 MiB a core on Zen 4 / 5), whose
// latency out-of-order execution covers; the prefetches would only cost issue slots there
// (5000 x 32 8-bit rows, 200 KB: 1.14 of torch's time without them, 1.24 with). The choice is a
// template argument (Pf), not a branch: the prefetch's live registers alone make the small-table
// loop spill (5000x32, 2048 bags of 1, ours / fbgemm's kernel: AVX2 1.05-1.08 against 1.14-1.19 as a
// branch, AVX-512 1.09-1.10 against 1.41; scripts/harness/embedding_vs_fbgemm.cpp).
constexpr int64_t kPrefetchMinBytes = int64_t{1} << 20;

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
[[maybe_unused]] inline __m128i nibbles_hi(__m128i v) {
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm_unpackhi_epi8(_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m));
}

#if !defined(QPLUGIN_ISA_AVX512)
// AVX2: 8 nibbles (4 bytes) in element order, one a lane: the 4 bytes in every lane, lane k shifted
// right by 4k and masked (element 2j is byte j's low nibble, so lane k takes bits 4k..4k+3).
inline VI nibbles8(const uint8_t* p) {
  int32_t b4;
  std::memcpy(&b4, p, 4);
  const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  return _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(b4), shifts), _mm256_set1_epi32(0x0F));
}
#endif

// The kLanes codes of a row from element j (j even at 4 bits); reads exactly the bytes holding them.
template <int Bits>
inline VI codes1(const uint8_t* p, int64_t j) {
  if (Bits == 8) return load_u8(p + j);
#if defined(QPLUGIN_ISA_AVX512)
  return _mm512_cvtepu8_epi32(nibbles_lo(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + j / 2))));
#else
  return nibbles8(p + j / 2);
#endif
}

// 2 * kLanes codes from element j: the same, two vectors (AVX-512: from one load). AVX2 at 4 bits:
// the kLanes bytes widened once, c0 = their low nibbles (elements j, j + 2, ...), c1 = their high
// nibbles (j + 1, j + 3, ...): 3 operations for 16 codes where two nibbles8 took ~9. Each lane
// still holds one column through every step; BagAcc::store puts the pair back in element order
// (once a bag).
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
  const VI v = load_u8(p + j / 2);  // kLanes bytes: exactly the 2 * kLanes codes
  *c0 = _mm256_and_si256(v, _mm256_set1_epi32(0x0F));
  *c1 = _mm256_srli_epi32(v, 4);
#endif
}

#if !defined(QPLUGIN_ISA_AVX512)
// A split pair (codes2 at 4 bits: even elements, odd elements) back in element order.
inline void join_pair(VF* even, VF* odd) {
  const VF lo = _mm256_unpacklo_ps(*even, *odd), hi = _mm256_unpackhi_ps(*even, *odd);  // within 128-bit halves
  *even = _mm256_permute2f128_ps(lo, hi, 0x20);
  *odd = _mm256_permute2f128_ps(lo, hi, 0x31);
}
#endif

#if defined(QPLUGIN_ISA_AVX512)
// The first n (< kLanes) codes from element j (j even at 4 bits) in the low lanes, through a
// masked load (no byte past them is read); the other lanes hold 0 or a stray nibble, never stored.
template <int Bits>
inline VI codes_n(const uint8_t* p, int64_t j, int n) {
  if (Bits == 8) return load_u8_n(p + j, n);
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

// Where a row's scale and bias are (template argument QP): kQpHalf: fp16 (else float32); kQpInRow:
// at qp_off bytes into the row's own bytes (torch's fused rows: one multiply a row finds both),
// else at qp + r * qp_stride.
constexpr int kQpHalf = 1, kQpInRow = 2;

// The loop-invariant part of a call: where rows and qparams are, and what to prefetch.
struct Src {
  const uint8_t* data;
  const uint8_t* qp;
  int64_t row_bytes, qp_stride, qp_off;
  int64_t pf_bytes;  // bytes from a row's start whose cache lines a prefetch touches
  const int64_t* idx;
  const float* psw;
  int64_t pf_end;  // indices at or past this are not prefetched (the end of this task's bags)
  uint64_t rows;   // rows in the table: an index outside [0, rows) is never read
  bool pruned;     // -1 is a pruned row (skipped), not a bad index
  bool* bad;       // set when an index outside [0, rows) other than a pruned -1 was skipped
};

inline bool qp_in_row(const EmbRows& w) {
  return w.qp >= w.data && w.qp + (w.half ? 4 : 8) <= w.data + w.row_bytes && w.qp_stride == w.row_bytes;
}

template <int QP>
inline Src make_src(const EmbRows& w, const int64_t* idx, const float* psw, int64_t pf_end, bool pruned, bool* bad) {
  const int64_t code_bytes = w.bits == 8 ? w.D : (w.D + 1) / 2;
  return Src{w.data,
             w.qp,
             w.row_bytes,
             w.qp_stride,
             (QP & kQpInRow) ? w.qp - w.data : 0,
             std::max<int64_t>((QP & kQpInRow) ? w.row_bytes : code_bytes, 1),
             idx,
             psw,
             pf_end,
             static_cast<uint64_t>(w.rows),
             pruned,
             bad};
}

// Prefetch the row of index i (the lines of its first and last bytes and every 64 bytes between:
// a trip count that does not depend on the row's alignment, so no branch mispredicts; and its
// qparams' line when they are elsewhere), if i is in range. (A pruned row's -1 gives an address
// before the table: prefetches never fault.)
template <int QP>
__attribute__((always_inline)) inline void prefetch_row(const Src& src, int64_t i) {
  if (i >= src.pf_end) return;
  const int64_t r = src.idx[i];
  const char* first = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(src.data) + r * src.row_bytes);
  _mm_prefetch(first, _MM_HINT_T0);
  for (int64_t l = 64; l < src.pf_bytes - 1; l += 64) _mm_prefetch(first + l, _MM_HINT_T0);
  _mm_prefetch(first + src.pf_bytes - 1, _MM_HINT_T0);
  if (!(QP & kQpInRow))
    _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(src.qp) + r * src.qp_stride), _MM_HINT_T0);
}

// One bag's columns [j0, j0 + NV * kLanes + tail) in registers across its rows: NV full vectors
// and, with Tail, tail (< kLanes) more columns (AVX-512: one masked vector; AVX2: scalar).
template <int NV, bool Tail, int Bits, int QP, bool Max, bool Psw>
struct BagAcc {
  static constexpr int kAcc = NV + (Tail ? 1 : 0);
  VF a[kAcc > 0 ? kAcc : 1];
#if !defined(QPLUGIN_ISA_AVX512)
  float ta[kLanes];
#endif
  bool any = false;  // (max) a row was taken

  __attribute__((always_inline)) inline void init() {
    const VF v = set1_f(Max ? -INFINITY : 0.0f);
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) a[k] = v;
#if !defined(QPLUGIN_ISA_AVX512)
    if (Tail) std::fill(ta, ta + kLanes, Max ? -INFINITY : 0.0f);
#endif
  }

  // Row idx[i] into the accumulators: sum_row's / max_row's operation. An index outside [0, rows) is
  // skipped: a pruned row (-1), or a bad index, flagged for the caller's error (one unsigned compare
  // on the common path, where a separate pass over the indices cost the caller ~3 us on 20480).
  __attribute__((always_inline)) inline void row(const Src& src, int64_t i, int64_t j0, int tail) {
    const int64_t r = src.idx[i];
    if (static_cast<uint64_t>(r) >= src.rows) {
      if (!(r == -1 && src.pruned)) *src.bad = true;
      return;
    }
    if (Max) any = true;
    const uint8_t* row = src.data + r * src.row_bytes;
    float s, b;
    qparams_at<(QP & kQpHalf) != 0>((QP & kQpInRow) ? row + src.qp_off : src.qp + r * src.qp_stride, &s, &b);
    const uint8_t* p = row + (Bits == 8 ? j0 : j0 / 2);  // the block's codes: offsets below are constants
    if (Psw) {
      b = b * src.psw[i];
      s = s * src.psw[i];
    }
    const VF sv = set1_f(s), bv = set1_f(b);
#pragma GCC unroll 8
    for (int k = 0; k + 1 < NV; k += 2) {
      VI c0, c1;
      codes2<Bits>(p, k * kLanes, &c0, &c1);
      a[k] = step<Max>(a[k], c0, sv, bv);
      a[k + 1] = step<Max>(a[k + 1], c1, sv, bv);
    }
    if (NV % 2 == 1) a[NV - 1] = step<Max>(a[NV - 1], codes1<Bits>(p, (NV - 1) * kLanes), sv, bv);
    if (Tail) {
#if defined(QPLUGIN_ISA_AVX512)
      a[kAcc - 1] = step<Max>(a[kAcc - 1], codes_n<Bits>(p, NV * kLanes, tail), sv, bv);
#else
      for (int t = 0; t < tail; ++t) ta[t] = step1<Max>(ta[t], code_at<Bits>(p, NV * kLanes + t), s, b);
#endif
    }
  }

  // The bag's result (count: its number of indices) into o's columns [j0, ...).
  __attribute__((always_inline)) inline void store(int64_t count, bool mean, float* o, int64_t j0, int tail) {
    if (Max && !any) init_zero();  // an empty max bag (or all its rows pruned) gives 0
    if (!Max && mean && count > 0) {
      const float m = 1.0f / static_cast<float>(count);
      const VF mv = set1_f(m);
#pragma GCC unroll 16
      for (int k = 0; k < kAcc; ++k) a[k] = mul_f(a[k], mv);
#if !defined(QPLUGIN_ISA_AVX512)
      if (Tail)
        for (int t = 0; t < tail; ++t) ta[t] *= m;
#endif
    }
    o += j0;
#if !defined(QPLUGIN_ISA_AVX512)
    if (Bits == 4) {  // codes2's split pairs
#pragma GCC unroll 8
      for (int k = 0; k + 1 < NV; k += 2) join_pair(&a[k], &a[k + 1]);  // the pairs of row()
    }
#endif
#pragma GCC unroll 16
    for (int k = 0; k < NV; ++k) storeu_f(o + k * kLanes, a[k]);
    if (Tail) {
#if defined(QPLUGIN_ISA_AVX512)
      storeu_f_n(o + NV * kLanes, a[kAcc - 1], tail);
#else
      std::copy(ta, ta + tail, o + NV * kLanes);
#endif
    }
  }

  __attribute__((always_inline)) inline void init_zero() {
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) a[k] = set1_f(0.0f);
#if !defined(QPLUGIN_ISA_AVX512)
    if (Tail) std::fill(ta, ta + kLanes, 0.0f);
#endif
  }
};

// Bag [s0, s1)'s columns [j0, ...) (prefetching kPrefetch indices ahead with Pf: the bag's first
// block of a table larger than kPrefetchMinBytes).
template <int NV, bool Tail, int Bits, int QP, bool Max, bool Psw, bool Pf>
__attribute__((always_inline)) inline void one_bag(const Src& src, int64_t s0, int64_t s1, bool mean, int64_t j0,
                                                   int tail, float* o) {
  BagAcc<NV, Tail, Bits, QP, Max, Psw> acc;
  acc.init();
  for (int64_t i = s0; i < s1; ++i) {
    if (Pf) prefetch_row<QP>(src, i + kPrefetch);
    acc.row(src, i, j0, tail);
  }
  acc.store(s1 - s0, mean, o, j0, tail);
}

// Bags [b0, b1), one at a time: each bag's columns in `full` blocks of kMaxNV vectors, then a last
// block of LastNV vectors and the tail. (Two bags at a time, their rows interleaved to hide the
// add + FMA chain, cost more per bag than they save: 5000x32 8-bit, 2048 bags of 1 / 10 rows,
// AVX2, in one harness with fbgemm's AVX2 kernel: 1.43 / 1.20 of its time, against 1.05-1.08 / 1.13
// one bag at a time.)
template <int LastNV, bool Tail, int Bits, int QP, bool Max, bool Psw, bool Pf>
bool bags_range(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw, bool mean, bool pruned,
                int64_t b0, int64_t b1, int64_t full, int tail, float* out) {
  bool bad = false;
  const Src src = make_src<QP>(w, idx, psw, starts[b1], pruned, &bad);
  const int64_t D = w.D;
  if (full == 0) {  // the whole row in one block: j0 a constant 0
    for (int64_t b = b0; b < b1; ++b)
      one_bag<LastNV, Tail, Bits, QP, Max, Psw, Pf>(src, starts[b], starts[b + 1], mean, 0, tail, out + b * D);
    return !bad;
  }
  for (int64_t b = b0; b < b1; ++b) {
    float* o = out + b * D;
    one_bag<kMaxNV, false, Bits, QP, Max, Psw, Pf>(src, starts[b], starts[b + 1], mean, 0, 0, o);
    int64_t j0 = kMaxNV * kLanes;
    for (int64_t k = 1; k < full; ++k, j0 += kMaxNV * kLanes)
      one_bag<kMaxNV, false, Bits, QP, Max, Psw, false>(src, starts[b], starts[b + 1], mean, j0, 0, o);
    one_bag<LastNV, Tail, Bits, QP, Max, Psw, false>(src, starts[b], starts[b + 1], mean, j0, tail, o);
  }
  return !bad;
}

using RangeFn = bool (*)(const EmbRows&, const int64_t*, const int64_t*, const float*, bool, bool, int64_t, int64_t,
                         int64_t, int, float*);

// D = (full * kMaxNV + last_nv) * kLanes + tail, last_nv in 1..kMaxNV (or 0 with a tail).
template <int Bits, int QP, bool Max, bool Psw, bool Pf>
bool bags_simd_pf(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw, bool mean, bool pruned,
                  int64_t b0, int64_t b1, float* out) {
  const int64_t nvec = w.D / kLanes;
  const int tail = static_cast<int>(w.D % kLanes);
  int64_t full = nvec / kMaxNV;
  int last_nv = static_cast<int>(nvec % kMaxNV);
  if (last_nv == 0 && tail == 0) {
    --full;
    last_nv = kMaxNV;
  }
  RangeFn fn = nullptr;
  // clang-format off
#define QPLUGIN_EMB_NV_(n)                                                                                     \
  case n:                                                                                                      \
    fn = tail > 0 ? &bags_range<n, true, Bits, QP, Max, Psw, Pf> : &bags_range<n, false, Bits, QP, Max, Psw, Pf>; \
    break;
  switch (last_nv) {
    QPLUGIN_EMB_NV_(0) QPLUGIN_EMB_NV_(1) QPLUGIN_EMB_NV_(2) QPLUGIN_EMB_NV_(3)
    QPLUGIN_EMB_NV_(4) QPLUGIN_EMB_NV_(5) QPLUGIN_EMB_NV_(6) QPLUGIN_EMB_NV_(7)
    default: fn = &bags_range<kMaxNV, false, Bits, QP, Max, Psw, Pf>;
  }
#undef QPLUGIN_EMB_NV_
  // clang-format on
  return fn(w, idx, starts, psw, mean, pruned, b0, b1, full, tail, out);
}

template <int Bits, int QP, bool Max, bool Psw>
bool bags_simd(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw, bool mean, bool pruned,
               int64_t b0, int64_t b1, float* out) {
  if (w.rows * w.row_bytes > kPrefetchMinBytes)
    return bags_simd_pf<Bits, QP, Max, Psw, true>(w, idx, starts, psw, mean, pruned, b0, b1, out);
  return bags_simd_pf<Bits, QP, Max, Psw, false>(w, idx, starts, psw, mean, pruned, b0, b1, out);
}

template <int Bits, int QP>
bool bags_for(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw, int mode, bool mean,
              bool pruned, int64_t b0, int64_t b1, float* out) {
  if (mode == 2) return bags_simd<Bits, QP, true, false>(w, idx, starts, nullptr, false, pruned, b0, b1, out);
  if (psw != nullptr) return bags_simd<Bits, QP, false, true>(w, idx, starts, psw, mean, pruned, b0, b1, out);
  return bags_simd<Bits, QP, false, false>(w, idx, starts, nullptr, mean, pruned, b0, b1, out);
}

}  // namespace
#endif

bool embedding_bag_rows(const EmbRows& w, const int64_t* idx, const int64_t* starts, const float* psw, int mode,
                        bool pruned, int64_t b0, int64_t b1, float* out) {
#if defined(QPLUGIN_SIMD_X86)
  if (w.D == 0) {  // no columns to reduce: only the indices' check remains
    bool ok = true;
    for (int64_t i = starts[b0]; i < starts[b1]; ++i)
      ok &= (idx[i] >= 0 && idx[i] < w.rows) || (idx[i] == -1 && pruned);
    return ok;
  }
  const bool mean = mode == 1;
  if (qp_in_row(w) && w.bits == 8 && !w.half)
    return bags_for<8, kQpInRow>(w, idx, starts, psw, mode, mean, pruned, b0, b1, out);
  if (qp_in_row(w) && w.bits == 4 && w.half)
    return bags_for<4, kQpInRow | kQpHalf>(w, idx, starts, psw, mode, mean, pruned, b0, b1, out);
  if (w.bits == 8) {
    if (w.half) return bags_for<8, kQpHalf>(w, idx, starts, psw, mode, mean, pruned, b0, b1, out);
    return bags_for<8, 0>(w, idx, starts, psw, mode, mean, pruned, b0, b1, out);
  }
  if (w.half) return bags_for<4, kQpHalf>(w, idx, starts, psw, mode, mean, pruned, b0, b1, out);
  return bags_for<4, 0>(w, idx, starts, psw, mode, mean, pruned, b0, b1, out);
#else
  // the scalar reference: every bag row by row through memory
  const int64_t D = w.D;
  std::vector<uint8_t> buf(w.bits == 8 ? 0 : static_cast<size_t>(D + 1));
  bool ok = true;
  for (int64_t b = b0; b < b1; ++b) {
    float* o = out + b * D;
    bool first = true;
    if (mode != 2) std::fill(o, o + D, 0.0f);
    for (int64_t i = starts[b]; i < starts[b + 1]; ++i) {
      const int64_t r = idx[i];
      if (r < 0 || r >= w.rows) {  // skipped: a pruned row (-1), or a bad index (flagged)
        ok &= r == -1 && pruned;
        continue;
      }
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
  return ok;
#endif
}

bool bag_bounds_ok(const int64_t* s, int64_t nbags, int64_t n) {
  // bad lanes: s[i] > s[i + 1] or s[i + 1] > n, OR-ed over the whole array (no early exit: the
  // caller looks for the first bad pair only to name it)
  int64_t i = 0;
  bool bad = false;
#if defined(QPLUGIN_SIMD_X86)
  constexpr int kQ = simd::kLanes / 2;  // int64 lanes
#if defined(QPLUGIN_ISA_AVX512)
  const __m512i nv = _mm512_set1_epi64(n);
  __mmask8 m = 0;
  for (; i + kQ <= nbags; i += kQ) {
    const __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 1);
    m |= _mm512_cmpgt_epi64_mask(a, b) | _mm512_cmpgt_epi64_mask(b, nv);
  }
  bad = m != 0;
#else
  const __m256i nv = _mm256_set1_epi64x(n);
  __m256i m = _mm256_setzero_si256();
  for (; i + kQ <= nbags; i += kQ) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 1));
    m = _mm256_or_si256(m, _mm256_or_si256(_mm256_cmpgt_epi64(a, b), _mm256_cmpgt_epi64(b, nv)));
  }
  bad = !_mm256_testz_si256(m, m);
#endif
#endif
  for (; i < nbags; ++i) bad |= (s[i] > s[i + 1]) | (s[i + 1] > n);
  return !bad;
}

void index_range(const int64_t* x, int64_t n, int64_t* lo, int64_t* hi) {
  int64_t mn = x[0], mx = x[0], i = 0;
#if defined(QPLUGIN_SIMD_X86)
  constexpr int kQ = simd::kLanes / 2;  // int64 lanes
  alignas(64) int64_t a[2 * kQ], b[2 * kQ];
#if defined(QPLUGIN_ISA_AVX512)
  __m512i vmn = _mm512_set1_epi64(mn), vmx = vmn, vmn1 = vmn, vmx1 = vmn;
  for (; i + 2 * kQ <= n; i += 2 * kQ) {
    const __m512i v = _mm512_loadu_si512(x + i), v1 = _mm512_loadu_si512(x + i + kQ);
    vmn = _mm512_min_epi64(vmn, v);
    vmx = _mm512_max_epi64(vmx, v);
    vmn1 = _mm512_min_epi64(vmn1, v1);
    vmx1 = _mm512_max_epi64(vmx1, v1);
  }
  // (reduced through memory: GCC 12 warns falsely on min / max intrinsics outside a loop)
  _mm512_store_si512(a, vmn);
  _mm512_store_si512(a + kQ, vmn1);
  _mm512_store_si512(b, vmx);
  _mm512_store_si512(b + kQ, vmx1);
#else
  // (no 64-bit min / max in AVX2: compare and blend, four independent chains)
  __m256i vmn[4], vmx[4];
  for (int k = 0; k < 4; ++k) vmn[k] = vmx[k] = _mm256_set1_epi64x(mn);
  for (; i + 4 * kQ <= n; i += 4 * kQ) {
    for (int k = 0; k < 4; ++k) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + k * kQ));
      vmn[k] = _mm256_blendv_epi8(vmn[k], v, _mm256_cmpgt_epi64(vmn[k], v));
      vmx[k] = _mm256_blendv_epi8(vmx[k], v, _mm256_cmpgt_epi64(v, vmx[k]));
    }
  }
  for (int k = 0; k < 2; ++k) {
    vmn[k] = _mm256_blendv_epi8(vmn[k], vmn[k + 2], _mm256_cmpgt_epi64(vmn[k], vmn[k + 2]));
    vmx[k] = _mm256_blendv_epi8(vmx[k], vmx[k + 2], _mm256_cmpgt_epi64(vmx[k + 2], vmx[k]));
    _mm256_store_si256(reinterpret_cast<__m256i*>(a + k * kQ), vmn[k]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(b + k * kQ), vmx[k]);
  }
#endif
  for (int k = 0; k < 2 * kQ; ++k) {
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

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
