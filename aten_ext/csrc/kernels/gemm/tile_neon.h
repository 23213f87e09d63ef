// The aarch64 register tiles of the GEMM engine (kernels/gemm/qgemm_kernel.cpp, NEON builds only):
// MR rows x one 16-column panel of the packed B layout (kernels/gemm/qgemm.h), int32
// accumulators in registers, written to acc[r * ldacc + j] (j < 16) at the end. Row r of A is
// read by address: taps t < ntaps of 4 * nq bytes at a[r] + off[t] (dense rows: one tap at
// offset 0; conv's indirect A: one tap per kernel position), against the panel's quads in order:
//
//   acc[r][j] (+)= sum_{t < ntaps} sum_{q < nq} sum_{i < 4} A'[r][t][4q + i] * B[j][4 (t nq + q) + i]
//
// where A' is what the tier multiplies (kAFlip):
//  - i8mm: SUDOT by element (vsudotq_laneq_s32: the B quad of 4 columns as the signed full
//    vector, 4 bytes of A as the unsigned indexed element): A' = A, exact u8 x s8.
//  - dotprod: SDOT by element (vdotq_laneq_s32) is s8 x s8, so A is flipped: A' = A ^ 0x80 =
//    A - 128 as s8, and the caller adds 128 * colsum[j] (kAFlip = 128; the engine folds it into
//    its a_zp * colsum term).
//  - neon (ARMv8.0, no dot product): the same flipped A, s8 x s8 products widened exactly:
//    SMULL / SMULL2 (|A' * B| <= 128 * 128 = 16384 fits int16) then SADALP (adjacent int16
//    pairs added into int32 lanes); one accumulator holds two partial sums per column, added
//    with ADDP at the end. No 16-bit accumulation anywhere.
// In the 16 bytes of a panel quad for columns 4c .. 4c + 3, column 4c + i's 4 K-bytes are bytes
// 4i .. 4i + 3: SDOT / SUDOT by element's layout (each int32 lane dots its own 4 bytes with the
// 4 indexed bytes of A), so B is read as packed, with no shuffles.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace a64 {

#if defined(QPLUGIN_ISA_I8MM)
constexpr int32_t kAFlip = 0;
constexpr int kTileMR = 4;  // 16 accumulators + 4 A vectors + B
#elif defined(QPLUGIN_ISA_DOTPROD)
constexpr int32_t kAFlip = 128;
constexpr int kTileMR = 4;
#else
constexpr int32_t kAFlip = 128;
constexpr int kTileMR = 2;  // 16 accumulators (two partial sums per column) + 4 B + A + product
#endif

// 4 bytes of A (one quad of one row) in every 32-bit lane.
inline uint8x16_t load_a4(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return vreinterpretq_u8_u32(vdupq_n_u32(v));
}

#if defined(QPLUGIN_ISA_DOTPROD)
#if defined(QPLUGIN_ISA_I8MM)
using AVec = uint8x16_t;
inline AVec prep_a(uint8x16_t a) { return a; }
template <int L>
inline int32x4_t dot(int32x4_t c, int8x16_t b, AVec a) {
  return vsudotq_laneq_s32(c, b, a, L);
}
#else
using AVec = int8x16_t;
inline AVec prep_a(uint8x16_t a) { return vreinterpretq_s8_u8(veorq_u8(a, vdupq_n_u8(0x80))); }
template <int L>
inline int32x4_t dot(int32x4_t c, int8x16_t b, AVec a) {
  return vdotq_laneq_s32(c, b, a, L);
}
#endif

// One quad (64 bytes of B at b) against lane L (quad L of the 16 bytes in a[r]) of every row.
template <int MR, int L>
inline void dot_quad(int32x4_t (&c)[MR][4], const int8_t* b, const AVec (&a)[MR]) {
  // Compiler barrier: keeps the scheduler from hoisting the next quads' B loads above this
  // quad's dot products (16 B registers live at once spilled accumulators of the 4-row tile).
  asm volatile("" ::: "memory");
  const int8x16_t b0 = vld1q_s8(b), b1 = vld1q_s8(b + 16), b2 = vld1q_s8(b + 32), b3 = vld1q_s8(b + 48);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    c[r][0] = dot<L>(c[r][0], b0, a[r]);
    c[r][1] = dot<L>(c[r][1], b1, a[r]);
    c[r][2] = dot<L>(c[r][2], b2, a[r]);
    c[r][3] = dot<L>(c[r][3], b3, a[r]);
  }
}

// Four quads at a time read 16 bytes of each A row (one vector, indexed by lane), the rest of
// a tap 4 bytes at a time.
template <int MR, bool ZI>
inline void tile_panel(const uint8_t* const* a, const int64_t* off, int64_t ntaps, int64_t nq, const int8_t* b,
                       int32_t* acc, int64_t ldacc) {
  int32x4_t c[MR][4];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < 4; ++v) c[r][v] = ZI ? vdupq_n_s32(0) : vld1q_s32(acc + r * ldacc + 4 * v);
  }
  for (int64_t t = 0; t < ntaps; ++t) {
    const uint8_t* ar[MR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) ar[r] = a[r] + off[t];
    int64_t q = 0;
    for (; q + 4 <= nq; q += 4) {
      AVec av[MR];
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) av[r] = prep_a(vld1q_u8(ar[r] + 4 * q));
      dot_quad<MR, 0>(c, b, av);
      dot_quad<MR, 1>(c, b + 64, av);
      dot_quad<MR, 2>(c, b + 128, av);
      dot_quad<MR, 3>(c, b + 192, av);
      b += 256;
    }
    for (; q < nq; ++q) {
      AVec av[MR];
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) av[r] = prep_a(load_a4(ar[r] + 4 * q));
      dot_quad<MR, 0>(c, b, av);
      b += 64;
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < 4; ++v) vst1q_s32(acc + r * ldacc + 4 * v, c[r][v]);
  }
}

#else  // neon: ARMv8.0

// Accumulator h of a row (h < 8) covers columns 2h, 2h + 1: lanes (col 2h: k0 + k1, k2 + k3;
// col 2h + 1: k0 + k1, k2 + k3), summed over the quads.
// c += pairwise sums of the int16 products of bytes 0..7 (lo) or 8..15 (hi) of b and a: SMULL /
// SMULL2 then SADALP as one asm statement, so each product is consumed as it is made (GCC's
// scheduler otherwise issues every product of a quad first and spills accumulators).
inline int32x4_t mull_acc_lo(int32x4_t c, int8x16_t b, int8x16_t a) {
  int16x8_t t;
  asm("smull %1.8h, %2.8b, %3.8b\n\tsadalp %0.4s, %1.8h" : "+w"(c), "=&w"(t) : "w"(b), "w"(a));
  return c;
}
inline int32x4_t mull_acc_hi(int32x4_t c, int8x16_t b, int8x16_t a) {
  int16x8_t t;
  asm("smull2 %1.8h, %2.16b, %3.16b\n\tsadalp %0.4s, %1.8h" : "+w"(c), "=&w"(t) : "w"(b), "w"(a));
  return c;
}

template <int MR>
inline void mull_quad(int32x4_t (&c)[MR][8], const int8_t* b, const uint8_t* const (&ar)[MR], int64_t q) {
  const int8x16_t b0 = vld1q_s8(b), b1 = vld1q_s8(b + 16), b2 = vld1q_s8(b + 32), b3 = vld1q_s8(b + 48);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const int8x16_t av = vreinterpretq_s8_u8(veorq_u8(load_a4(ar[r] + 4 * q), vdupq_n_u8(0x80)));
    c[r][0] = mull_acc_lo(c[r][0], b0, av);
    c[r][1] = mull_acc_hi(c[r][1], b0, av);
    c[r][2] = mull_acc_lo(c[r][2], b1, av);
    c[r][3] = mull_acc_hi(c[r][3], b1, av);
    c[r][4] = mull_acc_lo(c[r][4], b2, av);
    c[r][5] = mull_acc_hi(c[r][5], b2, av);
    c[r][6] = mull_acc_lo(c[r][6], b3, av);
    c[r][7] = mull_acc_hi(c[r][7], b3, av);
  }
}

template <int MR, bool ZI>
inline void tile_panel(const uint8_t* const* a, const int64_t* off, int64_t ntaps, int64_t nq, const int8_t* b,
                       int32_t* acc, int64_t ldacc) {
  int32x4_t c[MR][8];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    for (int h = 0; h < 8; ++h) c[r][h] = vdupq_n_s32(0);
  }
  for (int64_t t = 0; t < ntaps; ++t) {
    const uint8_t* ar[MR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) ar[r] = a[r] + off[t];
    for (int64_t q = 0; q < nq; ++q, b += 64) mull_quad<MR>(c, b, ar, q);
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < 4; ++v) {
      int32x4_t s = vpaddq_s32(c[r][2 * v], c[r][2 * v + 1]);  // columns 4v .. 4v + 3
      if (!ZI) s = vaddq_s32(s, vld1q_s32(acc + r * ldacc + 4 * v));
      vst1q_s32(acc + r * ldacc + 4 * v, s);
    }
  }
}

#endif

// The epilogue's vector steps (qgemm_kernel.cpp's epilogue_row, 4 columns at a time, lane by
// lane its scalar float steps).
struct EpiC {
  int32x4_t azp;  // a_zp - kAFlip
  int32x4_t t;    // K * a_zp - rowsum(A[m])
};
// acc - azp * colsum + bzp * t (int32 wrap-around).
inline int32x4_t corrected4(const EpiC& e, const int32_t* acc, const int32_t* colsum, const int32_t* bzp) {
  return vmlaq_s32(vmlsq_s32(vld1q_s32(acc), e.azp, vld1q_s32(colsum)), vld1q_s32(bzp), e.t);
}
// sum_{k < K} row[k] (exact for K < 2^24).
inline uint32_t row_sum(const uint8_t* row, int64_t K) {
  int64_t k = 0;
  uint32x4_t s = vdupq_n_u32(0);
  for (; k + 16 <= K; k += 16) s = vpadalq_u16(s, vpaddlq_u8(vld1q_u8(row + k)));
  uint32_t t = vaddvq_u32(s);
  for (; k < K; ++k) t += row[k];
  return t;
}

}  // namespace a64
}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
