// The exact AVX2 int8 GEMM microkernel, included by the AVX2 build of
// kernels/gemm/qgemm_kernel.cpp (linear) and kernels/conv_kernel.cpp (conv's im2col GEMM).
//
// Operands are int16: A is a u8 activation (or u8 - zero point) widened once per packed
// block, B an int8 weight widened once at prepack, both in k-pairs. vpmaddwd multiplies int16
// pairs and adds each pair into int32: |a| <= 255 and |b| <= 128, so a pair sum is at most
// 2 * 255 * 128 = 65280 in magnitude (no saturation anywhere; the int32 accumulators wrap
// exactly as the scalar reference's do). One vpmaddwd + one vpaddd per 16 MACs: the same
// multiply-port cost as torch's vpmaddubsw + vpmaddwd(ones) + vpaddd per 32, one more
// ALU op (scripts/peak_int8.py rows maddwd / i16tile measure what that leaves).
//
// Layouts (int16):
//   A: row r, k-pair p at a[r * lda + 2p], a[r * lda + 2p + 1]  (lda even, K padded to even)
//   B: one 16-column panel, k-pair p at b[32p .. 32p + 31]: column j's (B[2p][j], B[2p+1][j])
//      at b[32p + 2j], b[32p + 2j + 1]
//   acc: int32, row r at acc[16 r .. 16 r + 15] (columns of the panel)
#pragma once

#if !defined(QPLUGIN_ISA_AVX2)
#error "tile_i16_avx2.h is for the AVX2 build only"
#endif

#include <cstdint>

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace i16 {

constexpr int kMR = 6;   // rows per register tile
constexpr int kNR = 16;  // columns per panel
// acc[r][0..16) = sum_{p < npairs} A[r][2p..2p+1] . B[2p..2p+1][0..16)   (r < MR <= 6)
// Inline assembly (GCC would spill arrays of __m256i): accumulators ymm(2r), ymm(2r+1);
// B in ymm12-13; the broadcast A pair in ymm14; the product in ymm15 (renamed per use).
template <int MR>
inline void tile(const int16_t* a, int64_t lda, int64_t npairs, const int16_t* b, int32_t* acc) {
  static_assert(MR >= 1 && MR <= kMR, "tile rows");
  const int64_t ldab = lda * 2;  // bytes
  const int16_t* a3 = MR > 3 ? a + 3 * lda : a;
  int64_t n = npairs;
  asm volatile(
      "vpxor %%xmm0, %%xmm0, %%xmm0\n"
      "vpxor %%xmm1, %%xmm1, %%xmm1\n"
      ".if 1 < %c[mr]\n vpxor %%xmm2, %%xmm2, %%xmm2\n vpxor %%xmm3, %%xmm3, %%xmm3\n .endif\n"
      ".if 2 < %c[mr]\n vpxor %%xmm4, %%xmm4, %%xmm4\n vpxor %%xmm5, %%xmm5, %%xmm5\n .endif\n"
      ".if 3 < %c[mr]\n vpxor %%xmm6, %%xmm6, %%xmm6\n vpxor %%xmm7, %%xmm7, %%xmm7\n .endif\n"
      ".if 4 < %c[mr]\n vpxor %%xmm8, %%xmm8, %%xmm8\n vpxor %%xmm9, %%xmm9, %%xmm9\n .endif\n"
      ".if 5 < %c[mr]\n vpxor %%xmm10, %%xmm10, %%xmm10\n vpxor %%xmm11, %%xmm11, %%xmm11\n .endif\n"
      "test %[n], %[n]\n"
      "jz 3f\n"
      ".p2align 5\n"
      "1:\n"
      "vmovdqu (%[b]), %%ymm12\n"
      "vmovdqu 32(%[b]), %%ymm13\n"
      "prefetcht0 768(%[b])\n"
      "vpbroadcastd (%[a]), %%ymm14\n"
      "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm0, %%ymm0\n"
      "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm1, %%ymm1\n"
      ".if 1 < %c[mr]\n"
      "vpbroadcastd (%[a],%[ldab],1), %%ymm14\n"
      "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm2, %%ymm2\n"
      "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm3, %%ymm3\n"
      ".endif\n"
      ".if 2 < %c[mr]\n"
      "vpbroadcastd (%[a],%[ldab],2), %%ymm14\n"
      "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm4, %%ymm4\n"
      "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm5, %%ymm5\n"
      ".endif\n"
      ".if 3 < %c[mr]\n"
      "vpbroadcastd (%[a3]), %%ymm14\n"
      "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm6, %%ymm6\n"
      "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm7, %%ymm7\n"
      ".endif\n"
      ".if 4 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[ldab],1), %%ymm14\n"
      "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm8, %%ymm8\n"
      "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm9, %%ymm9\n"
      ".endif\n"
      ".if 5 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[ldab],2), %%ymm14\n"
      "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm10, %%ymm10\n"
      "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n"
      "vpaddd %%ymm15, %%ymm11, %%ymm11\n"
      ".endif\n"
      "add $4, %[a]\n"
      ".if 3 < %c[mr]\n add $4, %[a3]\n .endif\n"
      "add $64, %[b]\n"
      "dec %[n]\n"
      "jnz 1b\n"
      "3:\n"
      "vmovdqu %%ymm0, 0(%[acc])\n"
      "vmovdqu %%ymm1, 32(%[acc])\n"
      ".if 1 < %c[mr]\n vmovdqu %%ymm2, 64(%[acc])\n vmovdqu %%ymm3, 96(%[acc])\n .endif\n"
      ".if 2 < %c[mr]\n vmovdqu %%ymm4, 128(%[acc])\n vmovdqu %%ymm5, 160(%[acc])\n .endif\n"
      ".if 3 < %c[mr]\n vmovdqu %%ymm6, 192(%[acc])\n vmovdqu %%ymm7, 224(%[acc])\n .endif\n"
      ".if 4 < %c[mr]\n vmovdqu %%ymm8, 256(%[acc])\n vmovdqu %%ymm9, 288(%[acc])\n .endif\n"
      ".if 5 < %c[mr]\n vmovdqu %%ymm10, 320(%[acc])\n vmovdqu %%ymm11, 352(%[acc])\n .endif\n"
      : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [n] "+r"(n)
      : [ldab] "r"(ldab), [acc] "r"(acc), [mr] "i"(MR)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
        "xmm13", "xmm14", "xmm15", "memory", "cc");
}

using TileFn = void (*)(const int16_t*, int64_t, int64_t, const int16_t*, int32_t*);
// The tile for h rows (1 <= h <= kMR).
inline TileFn tile_fn(int h) {
  static constexpr TileFn kFns[kMR] = {&tile<1>, &tile<2>, &tile<3>, &tile<4>, &tile<5>, &tile<6>};
  return kFns[h - 1];
}

}  // namespace i16
}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
