// Compiled once per ISA (kernels/isa.h): the u8 x s8 -> s32 microkernels and the
// requantize epilogue of kernels/gemm/qgemm.h. The scalar path is the reference;
// every path computes the same exact int32 C and the same float epilogue.
#include "kernels/gemm/qgemm.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include <vector>

#if defined(QPLUGIN_ISA_AVX2) || defined(QPLUGIN_ISA_AVX512)
#include <immintrin.h>
#endif
#if defined(QPLUGIN_GEMM_I16)
#include "kernels/gemm/tile_i16_avx2.h"
#endif
#if defined(QPLUGIN_ISA_NEON)
#include <arm_neon.h>

#include "kernels/gemm/tile_neon.h"
#endif
#include "kernels/gemm/requant.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

using gemm::kPanelN;
using gemm::OutKind;
using gemm::QGemmParams;

#if defined(QPLUGIN_ISA_AVX512)
constexpr int kMaxMR = 6;   // rows per tile
constexpr int kMaxNV = 4;   // panels (16 columns each) per tile
constexpr int kTallMR = 8;  // a last tile of 7-8 rows (e.g. M = 8) ...
constexpr int kTallNV = 3;  // ... is at most 3 panels wide
#elif defined(QPLUGIN_ISA_AVX2)
constexpr int kMaxMR = 2;
constexpr int kMaxNV = 1;
constexpr int kTallMR = kMaxMR;
constexpr int kTallNV = kMaxNV;
#elif defined(QPLUGIN_ISA_NEON)
constexpr int kMaxMR = a64::kTileMR;
constexpr int kMaxNV = 1;
constexpr int kTallMR = kMaxMR;
constexpr int kTallNV = kMaxNV;
#else
constexpr int kMaxMR = 4;
constexpr int kMaxNV = 1;
constexpr int kTallMR = kMaxMR;
constexpr int kTallNV = kMaxNV;
#endif
constexpr int kTileN = kMaxNV * kPanelN;
// What the tiles add to a_zp in the a_zp * colsum term: 128 where they multiply A - 128 (the
// s8 x s8 aarch64 tiers, tile_neon.h), 0 where they multiply A itself.
#if defined(QPLUGIN_ISA_NEON)
constexpr int32_t kAFlip = a64::kAFlip;
#else
constexpr int32_t kAFlip = 0;
#endif

// Accumulates acc[r * kTileN + j] += sum_{q < nq} sum_{i < 4} A[r][4q + i] * B[n0 + j][4q + i]
// (r < MR, j < NV * 16) over nq full quads; zero_init (ZI) starts from 0 instead of acc.
// b points at the first panel's quad 0; panel v starts at b + v * pstride.
#if defined(QPLUGIN_ISA_AVX512)
// Inline assembly: GCC keeps arrays of __m512i accumulators in memory, so the
// register tiles are written out with assembler .if blocks on MR / NV.
// vpdpbusd: u8 x s8 products summed in fours into s32 (non-saturating form).
//  - every weight stream is prefetched 8 quads (512 bytes) ahead;
//  - MR 2..6 rows x NV <= 4 panels: accumulators zmm(4r+v) (<= 24), B in zmm24-27,
//    broadcast activations in zmm28-29;
//  - MR 7..8 rows x NV <= 3 panels: accumulators zmm(3r+v) (<= 24), same B / A registers;
//  - MR 1 (GEMV, weight-bandwidth bound): two accumulator sets (even / odd quads) so 8
//    independent chains hide the vpdpbusd latency, and prefetch 8 lines ahead on each of
//    the NV weight streams.
template <int MR, int NV, bool ZI>
inline void tile_loop(const uint8_t* a, int64_t lda, int64_t nq, const int8_t* b, int64_t pstride, int32_t* acc) {
  static_assert(MR >= 1 && MR <= 8 && NV >= 1 && NV <= (MR <= 6 ? 4 : 3), "tile shape");
  static_assert(kTileN == 64, "acc row stride is 256 bytes");
  const int64_t ps3 = 3 * pstride;
  int64_t n = nq;
  if constexpr (MR == 1) {
    int64_t n2 = 0;
    asm volatile(
        // clang-format off
      // BEGIN GENERATED avx512_gemv (scripts/gen_qgemm_asm.py)
      ".if 0 < %c[nv]\n"
      ".if %c[zi]\n"
      "vpxord %%zmm0, %%zmm0, %%zmm0\n"
      ".else\n"
      "vmovdqu64 0(%[acc]), %%zmm0\n"
      ".endif\n"
      "vpxord %%zmm4, %%zmm4, %%zmm4\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      ".if %c[zi]\n"
      "vpxord %%zmm1, %%zmm1, %%zmm1\n"
      ".else\n"
      "vmovdqu64 64(%[acc]), %%zmm1\n"
      ".endif\n"
      "vpxord %%zmm5, %%zmm5, %%zmm5\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      ".if %c[zi]\n"
      "vpxord %%zmm2, %%zmm2, %%zmm2\n"
      ".else\n"
      "vmovdqu64 128(%[acc]), %%zmm2\n"
      ".endif\n"
      "vpxord %%zmm6, %%zmm6, %%zmm6\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      ".if %c[zi]\n"
      "vpxord %%zmm3, %%zmm3, %%zmm3\n"
      ".else\n"
      "vmovdqu64 192(%[acc]), %%zmm3\n"
      ".endif\n"
      "vpxord %%zmm7, %%zmm7, %%zmm7\n"
      ".endif\n"
      "mov %[n], %[n2]\n"
      "shr $1, %[n2]\n"
      "jz 2f\n"
      "1:\n"
      ".if 0 < %c[nv]\n"
      "prefetcht0 2048(%[b])\n"
      "prefetcht0 2112(%[b])\n"
      "prefetcht1 8192(%[b])\n"
      "prefetcht1 8256(%[b])\n"
      "vmovdqu64 (%[b]), %%zmm24\n"
      "vmovdqu64 64(%[b]), %%zmm8\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "prefetcht0 2048(%[b],%[ps],1)\n"
      "prefetcht0 2112(%[b],%[ps],1)\n"
      "prefetcht1 8192(%[b],%[ps],1)\n"
      "prefetcht1 8256(%[b],%[ps],1)\n"
      "vmovdqu64 (%[b],%[ps],1), %%zmm25\n"
      "vmovdqu64 64(%[b],%[ps],1), %%zmm9\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "prefetcht0 2048(%[b],%[ps],2)\n"
      "prefetcht0 2112(%[b],%[ps],2)\n"
      "prefetcht1 8192(%[b],%[ps],2)\n"
      "prefetcht1 8256(%[b],%[ps],2)\n"
      "vmovdqu64 (%[b],%[ps],2), %%zmm26\n"
      "vmovdqu64 64(%[b],%[ps],2), %%zmm10\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "prefetcht0 2048(%[b],%[ps3],1)\n"
      "prefetcht0 2112(%[b],%[ps3],1)\n"
      "prefetcht1 8192(%[b],%[ps3],1)\n"
      "prefetcht1 8256(%[b],%[ps3],1)\n"
      "vmovdqu64 (%[b],%[ps3],1), %%zmm27\n"
      "vmovdqu64 64(%[b],%[ps3],1), %%zmm11\n"
      ".endif\n"
      "vpbroadcastd (%[a]), %%zmm28\n"
      "vpbroadcastd 4(%[a]), %%zmm29\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm28, %%zmm0\n"
      "vpdpbusd %%zmm8, %%zmm29, %%zmm4\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm28, %%zmm1\n"
      "vpdpbusd %%zmm9, %%zmm29, %%zmm5\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm28, %%zmm2\n"
      "vpdpbusd %%zmm10, %%zmm29, %%zmm6\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vpdpbusd %%zmm27, %%zmm28, %%zmm3\n"
      "vpdpbusd %%zmm11, %%zmm29, %%zmm7\n"
      ".endif\n"
      "add $8, %[a]\n"
      "add $128, %[b]\n"
      "dec %[n2]\n"
      "jnz 1b\n"
      "2:\n"
      "test $1, %[n]\n"
      "jz 3f\n"
      ".if 0 < %c[nv]\n"
      "vmovdqu64 (%[b]), %%zmm24\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vmovdqu64 (%[b],%[ps],1), %%zmm25\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vmovdqu64 (%[b],%[ps],2), %%zmm26\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vmovdqu64 (%[b],%[ps3],1), %%zmm27\n"
      ".endif\n"
      "vpbroadcastd (%[a]), %%zmm28\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm28, %%zmm0\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm28, %%zmm1\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm28, %%zmm2\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vpdpbusd %%zmm27, %%zmm28, %%zmm3\n"
      ".endif\n"
      "3:\n"
      ".if 0 < %c[nv]\n"
      "vpaddd %%zmm4, %%zmm0, %%zmm0\n"
      "vmovdqu64 %%zmm0, 0(%[acc])\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpaddd %%zmm5, %%zmm1, %%zmm1\n"
      "vmovdqu64 %%zmm1, 64(%[acc])\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpaddd %%zmm6, %%zmm2, %%zmm2\n"
      "vmovdqu64 %%zmm2, 128(%[acc])\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vpaddd %%zmm7, %%zmm3, %%zmm3\n"
      "vmovdqu64 %%zmm3, 192(%[acc])\n"
      ".endif\n"
      // END GENERATED avx512_gemv
        // clang-format on
        : [a] "+r"(a), [b] "+r"(b), [n] "+r"(n), [n2] "+r"(n2)
        : [ps] "r"(pstride), [ps3] "r"(ps3), [acc] "r"(acc), [nv] "i"(NV), [zi] "i"(ZI ? 1 : 0)
        : "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8", "zmm9", "zmm10", "zmm11", "zmm12",
          "zmm13", "zmm14", "zmm15", "zmm16", "zmm17", "zmm18", "zmm19", "zmm20", "zmm21", "zmm22", "zmm23", "zmm24",
          "zmm25", "zmm26", "zmm27", "zmm28", "zmm29", "memory", "cc");
  } else if constexpr (MR <= 6) {
    const uint8_t* a3 = MR > 3 ? a + 3 * lda : a;
    asm volatile(
        // clang-format off
      // BEGIN GENERATED avx512_tile_s4 (scripts/gen_qgemm_asm.py)
      ".if (0 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm0, %%zmm0, %%zmm0\n"
      ".else\n"
      "vmovdqu64 0(%[acc]), %%zmm0\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm1, %%zmm1, %%zmm1\n"
      ".else\n"
      "vmovdqu64 64(%[acc]), %%zmm1\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm2, %%zmm2, %%zmm2\n"
      ".else\n"
      "vmovdqu64 128(%[acc]), %%zmm2\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (3 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm3, %%zmm3, %%zmm3\n"
      ".else\n"
      "vmovdqu64 192(%[acc]), %%zmm3\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm4, %%zmm4, %%zmm4\n"
      ".else\n"
      "vmovdqu64 256(%[acc]), %%zmm4\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm5, %%zmm5, %%zmm5\n"
      ".else\n"
      "vmovdqu64 320(%[acc]), %%zmm5\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm6, %%zmm6, %%zmm6\n"
      ".else\n"
      "vmovdqu64 384(%[acc]), %%zmm6\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (3 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm7, %%zmm7, %%zmm7\n"
      ".else\n"
      "vmovdqu64 448(%[acc]), %%zmm7\n"
      ".endif\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm8, %%zmm8, %%zmm8\n"
      ".else\n"
      "vmovdqu64 512(%[acc]), %%zmm8\n"
      ".endif\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm9, %%zmm9, %%zmm9\n"
      ".else\n"
      "vmovdqu64 576(%[acc]), %%zmm9\n"
      ".endif\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm10, %%zmm10, %%zmm10\n"
      ".else\n"
      "vmovdqu64 640(%[acc]), %%zmm10\n"
      ".endif\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (3 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm11, %%zmm11, %%zmm11\n"
      ".else\n"
      "vmovdqu64 704(%[acc]), %%zmm11\n"
      ".endif\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm12, %%zmm12, %%zmm12\n"
      ".else\n"
      "vmovdqu64 768(%[acc]), %%zmm12\n"
      ".endif\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm13, %%zmm13, %%zmm13\n"
      ".else\n"
      "vmovdqu64 832(%[acc]), %%zmm13\n"
      ".endif\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm14, %%zmm14, %%zmm14\n"
      ".else\n"
      "vmovdqu64 896(%[acc]), %%zmm14\n"
      ".endif\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (3 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm15, %%zmm15, %%zmm15\n"
      ".else\n"
      "vmovdqu64 960(%[acc]), %%zmm15\n"
      ".endif\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm16, %%zmm16, %%zmm16\n"
      ".else\n"
      "vmovdqu64 1024(%[acc]), %%zmm16\n"
      ".endif\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm17, %%zmm17, %%zmm17\n"
      ".else\n"
      "vmovdqu64 1088(%[acc]), %%zmm17\n"
      ".endif\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm18, %%zmm18, %%zmm18\n"
      ".else\n"
      "vmovdqu64 1152(%[acc]), %%zmm18\n"
      ".endif\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (3 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm19, %%zmm19, %%zmm19\n"
      ".else\n"
      "vmovdqu64 1216(%[acc]), %%zmm19\n"
      ".endif\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm20, %%zmm20, %%zmm20\n"
      ".else\n"
      "vmovdqu64 1280(%[acc]), %%zmm20\n"
      ".endif\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm21, %%zmm21, %%zmm21\n"
      ".else\n"
      "vmovdqu64 1344(%[acc]), %%zmm21\n"
      ".endif\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm22, %%zmm22, %%zmm22\n"
      ".else\n"
      "vmovdqu64 1408(%[acc]), %%zmm22\n"
      ".endif\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (3 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm23, %%zmm23, %%zmm23\n"
      ".else\n"
      "vmovdqu64 1472(%[acc]), %%zmm23\n"
      ".endif\n"
      ".endif\n"
      "test %[n], %[n]\n"
      "jz 3f\n"
      "1:\n"
      ".if 0 < %c[nv]\n"
      "vmovdqu64 (%[b]), %%zmm24\n"
      "prefetcht0 1024(%[b])\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vmovdqu64 (%[b],%[ps],1), %%zmm25\n"
      "prefetcht0 1024(%[b],%[ps],1)\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vmovdqu64 (%[b],%[ps],2), %%zmm26\n"
      "prefetcht0 1024(%[b],%[ps],2)\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vmovdqu64 (%[b],%[ps3],1), %%zmm27\n"
      "prefetcht0 1024(%[b],%[ps3],1)\n"
      ".endif\n"
      ".if 0 < %c[mr]\n"
      "vpbroadcastd (%[a]), %%zmm28\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm28, %%zmm0\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm28, %%zmm1\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm28, %%zmm2\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vpdpbusd %%zmm27, %%zmm28, %%zmm3\n"
      ".endif\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vpbroadcastd (%[a],%[lda],1), %%zmm29\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm29, %%zmm4\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm29, %%zmm5\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm29, %%zmm6\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vpdpbusd %%zmm27, %%zmm29, %%zmm7\n"
      ".endif\n"
      ".endif\n"
      ".if 2 < %c[mr]\n"
      "vpbroadcastd (%[a],%[lda],2), %%zmm28\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm28, %%zmm8\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm28, %%zmm9\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm28, %%zmm10\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vpdpbusd %%zmm27, %%zmm28, %%zmm11\n"
      ".endif\n"
      ".endif\n"
      ".if 3 < %c[mr]\n"
      "vpbroadcastd (%[a3]), %%zmm29\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm29, %%zmm12\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm29, %%zmm13\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm29, %%zmm14\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vpdpbusd %%zmm27, %%zmm29, %%zmm15\n"
      ".endif\n"
      ".endif\n"
      ".if 4 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[lda],1), %%zmm28\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm28, %%zmm16\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm28, %%zmm17\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm28, %%zmm18\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vpdpbusd %%zmm27, %%zmm28, %%zmm19\n"
      ".endif\n"
      ".endif\n"
      ".if 5 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[lda],2), %%zmm29\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm29, %%zmm20\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm29, %%zmm21\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm29, %%zmm22\n"
      ".endif\n"
      ".if 3 < %c[nv]\n"
      "vpdpbusd %%zmm27, %%zmm29, %%zmm23\n"
      ".endif\n"
      ".endif\n"
      "add $4, %[a]\n"
      "add $4, %[a3]\n"
      "add $64, %[b]\n"
      "dec %[n]\n"
      "jnz 1b\n"
      "3:\n"
      ".if (0 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm0, 0(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm1, 64(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm2, 128(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (3 < %c[nv])\n"
      "vmovdqu64 %%zmm3, 192(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm4, 256(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm5, 320(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm6, 384(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (3 < %c[nv])\n"
      "vmovdqu64 %%zmm7, 448(%[acc])\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm8, 512(%[acc])\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm9, 576(%[acc])\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm10, 640(%[acc])\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (3 < %c[nv])\n"
      "vmovdqu64 %%zmm11, 704(%[acc])\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm12, 768(%[acc])\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm13, 832(%[acc])\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm14, 896(%[acc])\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (3 < %c[nv])\n"
      "vmovdqu64 %%zmm15, 960(%[acc])\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm16, 1024(%[acc])\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm17, 1088(%[acc])\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm18, 1152(%[acc])\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (3 < %c[nv])\n"
      "vmovdqu64 %%zmm19, 1216(%[acc])\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm20, 1280(%[acc])\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm21, 1344(%[acc])\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm22, 1408(%[acc])\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (3 < %c[nv])\n"
      "vmovdqu64 %%zmm23, 1472(%[acc])\n"
      ".endif\n"
      // END GENERATED avx512_tile_s4
        // clang-format on
        : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [n] "+r"(n)
        : [lda] "r"(lda), [ps] "r"(pstride), [ps3] "r"(ps3), [acc] "r"(acc), [mr] "i"(MR), [nv] "i"(NV),
          [zi] "i"(ZI ? 1 : 0)
        : "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8", "zmm9", "zmm10", "zmm11", "zmm12",
          "zmm13", "zmm14", "zmm15", "zmm16", "zmm17", "zmm18", "zmm19", "zmm20", "zmm21", "zmm22", "zmm23", "zmm24",
          "zmm25", "zmm26", "zmm27", "zmm28", "zmm29", "memory", "cc");
  } else {
    const uint8_t* a3 = a + 3 * lda;
    const int64_t lda3 = 3 * lda;
    asm volatile(
        // clang-format off
      // BEGIN GENERATED avx512_tile_s3 (scripts/gen_qgemm_asm.py)
      ".if (0 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm0, %%zmm0, %%zmm0\n"
      ".else\n"
      "vmovdqu64 0(%[acc]), %%zmm0\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm1, %%zmm1, %%zmm1\n"
      ".else\n"
      "vmovdqu64 64(%[acc]), %%zmm1\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm2, %%zmm2, %%zmm2\n"
      ".else\n"
      "vmovdqu64 128(%[acc]), %%zmm2\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm3, %%zmm3, %%zmm3\n"
      ".else\n"
      "vmovdqu64 256(%[acc]), %%zmm3\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm4, %%zmm4, %%zmm4\n"
      ".else\n"
      "vmovdqu64 320(%[acc]), %%zmm4\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm5, %%zmm5, %%zmm5\n"
      ".else\n"
      "vmovdqu64 384(%[acc]), %%zmm5\n"
      ".endif\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm6, %%zmm6, %%zmm6\n"
      ".else\n"
      "vmovdqu64 512(%[acc]), %%zmm6\n"
      ".endif\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm7, %%zmm7, %%zmm7\n"
      ".else\n"
      "vmovdqu64 576(%[acc]), %%zmm7\n"
      ".endif\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm8, %%zmm8, %%zmm8\n"
      ".else\n"
      "vmovdqu64 640(%[acc]), %%zmm8\n"
      ".endif\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm9, %%zmm9, %%zmm9\n"
      ".else\n"
      "vmovdqu64 768(%[acc]), %%zmm9\n"
      ".endif\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm10, %%zmm10, %%zmm10\n"
      ".else\n"
      "vmovdqu64 832(%[acc]), %%zmm10\n"
      ".endif\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm11, %%zmm11, %%zmm11\n"
      ".else\n"
      "vmovdqu64 896(%[acc]), %%zmm11\n"
      ".endif\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm12, %%zmm12, %%zmm12\n"
      ".else\n"
      "vmovdqu64 1024(%[acc]), %%zmm12\n"
      ".endif\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm13, %%zmm13, %%zmm13\n"
      ".else\n"
      "vmovdqu64 1088(%[acc]), %%zmm13\n"
      ".endif\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm14, %%zmm14, %%zmm14\n"
      ".else\n"
      "vmovdqu64 1152(%[acc]), %%zmm14\n"
      ".endif\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm15, %%zmm15, %%zmm15\n"
      ".else\n"
      "vmovdqu64 1280(%[acc]), %%zmm15\n"
      ".endif\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm16, %%zmm16, %%zmm16\n"
      ".else\n"
      "vmovdqu64 1344(%[acc]), %%zmm16\n"
      ".endif\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm17, %%zmm17, %%zmm17\n"
      ".else\n"
      "vmovdqu64 1408(%[acc]), %%zmm17\n"
      ".endif\n"
      ".endif\n"
      ".if (6 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm18, %%zmm18, %%zmm18\n"
      ".else\n"
      "vmovdqu64 1536(%[acc]), %%zmm18\n"
      ".endif\n"
      ".endif\n"
      ".if (6 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm19, %%zmm19, %%zmm19\n"
      ".else\n"
      "vmovdqu64 1600(%[acc]), %%zmm19\n"
      ".endif\n"
      ".endif\n"
      ".if (6 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm20, %%zmm20, %%zmm20\n"
      ".else\n"
      "vmovdqu64 1664(%[acc]), %%zmm20\n"
      ".endif\n"
      ".endif\n"
      ".if (7 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm21, %%zmm21, %%zmm21\n"
      ".else\n"
      "vmovdqu64 1792(%[acc]), %%zmm21\n"
      ".endif\n"
      ".endif\n"
      ".if (7 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm22, %%zmm22, %%zmm22\n"
      ".else\n"
      "vmovdqu64 1856(%[acc]), %%zmm22\n"
      ".endif\n"
      ".endif\n"
      ".if (7 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxord %%zmm23, %%zmm23, %%zmm23\n"
      ".else\n"
      "vmovdqu64 1920(%[acc]), %%zmm23\n"
      ".endif\n"
      ".endif\n"
      "test %[n], %[n]\n"
      "jz 3f\n"
      "1:\n"
      ".if 0 < %c[nv]\n"
      "vmovdqu64 (%[b]), %%zmm24\n"
      "prefetcht0 1024(%[b])\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vmovdqu64 (%[b],%[ps],1), %%zmm25\n"
      "prefetcht0 1024(%[b],%[ps],1)\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vmovdqu64 (%[b],%[ps],2), %%zmm26\n"
      "prefetcht0 1024(%[b],%[ps],2)\n"
      ".endif\n"
      ".if 0 < %c[mr]\n"
      "vpbroadcastd (%[a]), %%zmm28\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm28, %%zmm0\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm28, %%zmm1\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm28, %%zmm2\n"
      ".endif\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vpbroadcastd (%[a],%[lda],1), %%zmm29\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm29, %%zmm3\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm29, %%zmm4\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm29, %%zmm5\n"
      ".endif\n"
      ".endif\n"
      ".if 2 < %c[mr]\n"
      "vpbroadcastd (%[a],%[lda],2), %%zmm28\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm28, %%zmm6\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm28, %%zmm7\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm28, %%zmm8\n"
      ".endif\n"
      ".endif\n"
      ".if 3 < %c[mr]\n"
      "vpbroadcastd (%[a3]), %%zmm29\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm29, %%zmm9\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm29, %%zmm10\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm29, %%zmm11\n"
      ".endif\n"
      ".endif\n"
      ".if 4 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[lda],1), %%zmm28\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm28, %%zmm12\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm28, %%zmm13\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm28, %%zmm14\n"
      ".endif\n"
      ".endif\n"
      ".if 5 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[lda],2), %%zmm29\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm29, %%zmm15\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm29, %%zmm16\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm29, %%zmm17\n"
      ".endif\n"
      ".endif\n"
      ".if 6 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[lda3],1), %%zmm28\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm28, %%zmm18\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm28, %%zmm19\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm28, %%zmm20\n"
      ".endif\n"
      ".endif\n"
      ".if 7 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[lda],4), %%zmm29\n"
      ".if 0 < %c[nv]\n"
      "vpdpbusd %%zmm24, %%zmm29, %%zmm21\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "vpdpbusd %%zmm25, %%zmm29, %%zmm22\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "vpdpbusd %%zmm26, %%zmm29, %%zmm23\n"
      ".endif\n"
      ".endif\n"
      "add $4, %[a]\n"
      "add $4, %[a3]\n"
      "add $64, %[b]\n"
      "dec %[n]\n"
      "jnz 1b\n"
      "3:\n"
      ".if (0 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm0, 0(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm1, 64(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm2, 128(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm3, 256(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm4, 320(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm5, 384(%[acc])\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm6, 512(%[acc])\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm7, 576(%[acc])\n"
      ".endif\n"
      ".if (2 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm8, 640(%[acc])\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm9, 768(%[acc])\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm10, 832(%[acc])\n"
      ".endif\n"
      ".if (3 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm11, 896(%[acc])\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm12, 1024(%[acc])\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm13, 1088(%[acc])\n"
      ".endif\n"
      ".if (4 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm14, 1152(%[acc])\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm15, 1280(%[acc])\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm16, 1344(%[acc])\n"
      ".endif\n"
      ".if (5 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm17, 1408(%[acc])\n"
      ".endif\n"
      ".if (6 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm18, 1536(%[acc])\n"
      ".endif\n"
      ".if (6 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm19, 1600(%[acc])\n"
      ".endif\n"
      ".if (6 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm20, 1664(%[acc])\n"
      ".endif\n"
      ".if (7 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu64 %%zmm21, 1792(%[acc])\n"
      ".endif\n"
      ".if (7 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu64 %%zmm22, 1856(%[acc])\n"
      ".endif\n"
      ".if (7 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu64 %%zmm23, 1920(%[acc])\n"
      ".endif\n"
      // END GENERATED avx512_tile_s3
        // clang-format on
        : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [n] "+r"(n)
        : [lda] "r"(lda), [lda3] "r"(lda3), [ps] "r"(pstride), [ps3] "r"(ps3), [acc] "r"(acc), [mr] "i"(MR),
          [nv] "i"(NV), [zi] "i"(ZI ? 1 : 0)
        : "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8", "zmm9", "zmm10", "zmm11", "zmm12",
          "zmm13", "zmm14", "zmm15", "zmm16", "zmm17", "zmm18", "zmm19", "zmm20", "zmm21", "zmm22", "zmm23", "zmm24",
          "zmm25", "zmm26", "zmm27", "zmm28", "zmm29", "memory", "cc");
  }
}
#elif defined(QPLUGIN_ISA_AVX2)
// One panel (16 columns) x up to 2 rows, in inline assembly (GCC spills arrays of
// __m256i accumulators). B bytes widened s8 -> s16 (vpmovsxbw), the activation quad
// u8 -> s16 (vpbroadcastd + vpmovzxbw), then vpmaddwd: int16 pairs -> int32, which never
// saturates for these ranges (|2 * 255 * 128| < 2^31). Lanes hold (column, k-pair) partial
// sums (ymm0-3 row 0, ymm4-7 row 1, one per 4 columns), folded by one hadd + permute.
template <int MR, int NV, bool zero_init>
inline void tile_loop(const uint8_t* a, int64_t lda, int64_t nq, const int8_t* b, int64_t pstride, int32_t* acc) {
  static_assert(NV == 1 && MR >= 1 && MR <= 2, "AVX2 tile is 1-2 rows x one panel");
  alignas(32) int32_t raw[2 * 4 * 8];
  int64_t n = nq;
  asm volatile(
      // clang-format off
      // BEGIN GENERATED avx2_tile (scripts/gen_qgemm_asm.py)
      ".if 0 < %c[mr]\n"
      "vpxor %%xmm0, %%xmm0, %%xmm0\n"
      ".endif\n"
      ".if 0 < %c[mr]\n"
      "vpxor %%xmm1, %%xmm1, %%xmm1\n"
      ".endif\n"
      ".if 0 < %c[mr]\n"
      "vpxor %%xmm2, %%xmm2, %%xmm2\n"
      ".endif\n"
      ".if 0 < %c[mr]\n"
      "vpxor %%xmm3, %%xmm3, %%xmm3\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vpxor %%xmm4, %%xmm4, %%xmm4\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vpxor %%xmm5, %%xmm5, %%xmm5\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vpxor %%xmm6, %%xmm6, %%xmm6\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vpxor %%xmm7, %%xmm7, %%xmm7\n"
      ".endif\n"
      "test %[n], %[n]\n"
      "jz 3f\n"
      "1:\n"
      "vpbroadcastd (%[a]), %%xmm9\n"
      "vpmovzxbw %%xmm9, %%ymm9\n"
      ".if 1 < %c[mr]\n"
      "vpbroadcastd (%[a],%[lda],1), %%xmm10\n"
      "vpmovzxbw %%xmm10, %%ymm10\n"
      ".endif\n"
      "vpmovsxbw 0(%[b]), %%ymm8\n"
      "vpmaddwd %%ymm8, %%ymm9, %%ymm11\n"
      "vpaddd %%ymm11, %%ymm0, %%ymm0\n"
      ".if 1 < %c[mr]\n"
      "vpmaddwd %%ymm8, %%ymm10, %%ymm12\n"
      "vpaddd %%ymm12, %%ymm4, %%ymm4\n"
      ".endif\n"
      "vpmovsxbw 16(%[b]), %%ymm8\n"
      "vpmaddwd %%ymm8, %%ymm9, %%ymm11\n"
      "vpaddd %%ymm11, %%ymm1, %%ymm1\n"
      ".if 1 < %c[mr]\n"
      "vpmaddwd %%ymm8, %%ymm10, %%ymm12\n"
      "vpaddd %%ymm12, %%ymm5, %%ymm5\n"
      ".endif\n"
      "vpmovsxbw 32(%[b]), %%ymm8\n"
      "vpmaddwd %%ymm8, %%ymm9, %%ymm11\n"
      "vpaddd %%ymm11, %%ymm2, %%ymm2\n"
      ".if 1 < %c[mr]\n"
      "vpmaddwd %%ymm8, %%ymm10, %%ymm12\n"
      "vpaddd %%ymm12, %%ymm6, %%ymm6\n"
      ".endif\n"
      "vpmovsxbw 48(%[b]), %%ymm8\n"
      "vpmaddwd %%ymm8, %%ymm9, %%ymm11\n"
      "vpaddd %%ymm11, %%ymm3, %%ymm3\n"
      ".if 1 < %c[mr]\n"
      "vpmaddwd %%ymm8, %%ymm10, %%ymm12\n"
      "vpaddd %%ymm12, %%ymm7, %%ymm7\n"
      ".endif\n"
      "prefetcht0 1024(%[b])\n"
      "prefetcht1 4096(%[b])\n"
      "add $4, %[a]\n"
      "add $64, %[b]\n"
      "dec %[n]\n"
      "jnz 1b\n"
      "3:\n"
      ".if 0 < %c[mr]\n"
      "vmovdqu %%ymm0, 0(%[raw])\n"
      ".endif\n"
      ".if 0 < %c[mr]\n"
      "vmovdqu %%ymm1, 32(%[raw])\n"
      ".endif\n"
      ".if 0 < %c[mr]\n"
      "vmovdqu %%ymm2, 64(%[raw])\n"
      ".endif\n"
      ".if 0 < %c[mr]\n"
      "vmovdqu %%ymm3, 96(%[raw])\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vmovdqu %%ymm4, 128(%[raw])\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vmovdqu %%ymm5, 160(%[raw])\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vmovdqu %%ymm6, 192(%[raw])\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vmovdqu %%ymm7, 224(%[raw])\n"
      ".endif\n"
      // END GENERATED avx2_tile
      // clang-format on
      : [a] "+r"(a), [b] "+r"(b), [n] "+r"(n)
      : [lda] "r"(lda), [raw] "r"(raw), [mr] "i"(MR)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
        "memory", "cc");
  const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
  for (int r = 0; r < MR; ++r) {
    const __m256i* c = reinterpret_cast<const __m256i*>(raw + 32 * r);
    __m256i lo = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(_mm256_load_si256(c), _mm256_load_si256(c + 1)), order);
    __m256i hi =
        _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(_mm256_load_si256(c + 2), _mm256_load_si256(c + 3)), order);
    __m256i* o = reinterpret_cast<__m256i*>(acc + r * kTileN);
    if (!zero_init) {
      lo = _mm256_add_epi32(lo, _mm256_loadu_si256(o));
      hi = _mm256_add_epi32(hi, _mm256_loadu_si256(o + 1));
    }
    _mm256_storeu_si256(o, lo);
    _mm256_storeu_si256(o + 1, hi);
  }
  (void)pstride;
}
#elif defined(QPLUGIN_ISA_NEON)
// tile_neon.h's panel tiles, one per panel (NV is 1 here); they accumulate A' (= A, or A - 128).
template <int MR, int NV, bool zero_init>
inline void tile_loop(const uint8_t* a, int64_t lda, int64_t nq, const int8_t* b, int64_t pstride, int32_t* acc) {
  static constexpr int64_t kNoOffset[1] = {0};
  const uint8_t* rows[MR];
  for (int r = 0; r < MR; ++r) rows[r] = a + r * lda;
  for (int v = 0; v < NV; ++v) {
    a64::tile_panel<MR, zero_init>(rows, kNoOffset, 1, nq, b + v * pstride, acc + v * kPanelN, kTileN);
  }
}
#else
// The reference: the definition, read through the packed layout.
template <int MR, int NV, bool zero_init>
inline void tile_loop(const uint8_t* a, int64_t lda, int64_t nq, const int8_t* b, int64_t pstride, int32_t* acc) {
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NV; ++v) {
      for (int j = 0; j < kPanelN; ++j) {
        int32_t s = zero_init ? 0 : acc[r * kTileN + v * kPanelN + j];
        for (int64_t k = 0; k < 4 * nq; ++k) {
          s += static_cast<int32_t>(a[r * lda + k]) *
               static_cast<int32_t>(b[v * pstride + (k / 4) * (4 * kPanelN) + 4 * j + (k % 4)]);
        }
        acc[r * kTileN + v * kPanelN + j] = s;
      }
    }
  }
}
#endif

// acc[r * kTileN + j] = sum_k A[r][k] * B[n0 + j][k] for r < MR, j < NV * 16. A K tail
// (K % 4 != 0) is copied into a zero-padded quad first, so no byte past a row is read.
template <int MR, int NV>
void tile(const uint8_t* a, int64_t lda, int64_t K, const int8_t* b, int64_t pstride, int32_t* acc) {
  const int64_t nq = K / 4;
  tile_loop<MR, NV, true>(a, lda, nq, b, pstride, acc);
  if (K % 4) {
    uint8_t tail[MR * 4] = {};
    for (int r = 0; r < MR; ++r) std::memcpy(tail + 4 * r, a + r * lda + 4 * nq, static_cast<size_t>(K % 4));
    tile_loop<MR, NV, false>(tail, 4, 1, b + nq * 4 * kPanelN, pstride, acc);
  }
}

using TileFn = void (*)(const uint8_t*, int64_t, int64_t, const int8_t*, int64_t, int32_t*);

template <int MR, int NV>
constexpr TileFn tile_or_null() {
  if constexpr (MR <= kMaxMR || NV <= kTallNV) {
    return &tile<MR, NV>;
  } else {
    return nullptr;
  }
}
template <int MR, int... NVs>
void fill_row(TileFn* row, std::integer_sequence<int, NVs...>) {
  ((row[NVs] = tile_or_null<MR, NVs + 1>()), ...);
}
template <int... MRs>
struct TileTable {
  TileFn fns[kTallMR][kMaxNV];
  TileTable() { (fill_row<MRs + 1>(fns[MRs], std::make_integer_sequence<int, kMaxNV>{}), ...); }
};
template <int... MRs>
TileTable<MRs...> make_table(std::integer_sequence<int, MRs...>) {
  return TileTable<MRs...>();
}

TileFn tile_fn(int mr, int nv) {
  static const auto table = make_table(std::make_integer_sequence<int, kTallMR>{});
  return table.fns[mr - 1][nv - 1];
}

#if defined(QPLUGIN_ISA_AVX2)
// 8 values in [0, 255] stored as 8 bytes: packs 32 -> 16 -> 8 within the 128-bit lanes, then the
// two lanes' first dwords side by side.
inline void store_u8x8(__m256i q, uint8_t* out) {
  const __m256i w8 = _mm256_packus_epi16(_mm256_packs_epi32(q, q), _mm256_setzero_si256());
  const __m128i b = _mm_unpacklo_epi32(_mm256_castsi256_si128(w8), _mm256_extracti128_si256(w8, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), b);
}
#endif

// Epilogue for one row: cols [0, cnt) of acc_row are columns n .. n + cnt - 1.
// t = K * a_zp - rowsum(A[m]); C = acc - (a_zp - kAFlip) * colsum[n] + b_zp[n] * t (int32 wrap).
void epilogue_row(const QGemmParams& p, const int32_t* acc_row, int64_t m, int64_t n, int64_t cnt, int32_t t) {
  const int32_t azp = static_cast<int32_t>(static_cast<uint32_t>(p.a_zero_point) - static_cast<uint32_t>(kAFlip));
  const int32_t* colsum = p.b->col_sums + n;
  const int32_t* bzp = p.b_zero_points + n;
  const float* mult = p.multipliers + n;
  const float* bias = p.bias ? p.bias + n : nullptr;
  auto corrected = [&](int64_t j) {
    const uint32_t c = static_cast<uint32_t>(acc_row[j]) -
                       static_cast<uint32_t>(azp) * static_cast<uint32_t>(colsum[j]) +
                       static_cast<uint32_t>(bzp[j]) * static_cast<uint32_t>(t);
    return static_cast<int32_t>(c);
  };
  int64_t j = 0;
  if (p.kind == OutKind::kS32) {
    int32_t* out = static_cast<int32_t*>(p.out) + m * p.ldc + n;
    for (; j < cnt; ++j) out[j] = corrected(j);
    return;
  }
  if (p.kind == OutKind::kF32) {
    float* out = static_cast<float*>(p.out) + m * p.ldc + n;
    const float fmin = p.out_fmin;
#if defined(QPLUGIN_ISA_AVX512)
    const __m512i vazp = _mm512_set1_epi32(azp), vt = _mm512_set1_epi32(t);
    for (; j + 16 <= cnt; j += 16) {
      __m512i c = _mm512_loadu_si512(acc_row + j);
      c = _mm512_sub_epi32(c, _mm512_mullo_epi32(vazp, _mm512_loadu_si512(colsum + j)));
      c = _mm512_add_epi32(c, _mm512_mullo_epi32(_mm512_loadu_si512(bzp + j), vt));
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(c), _mm512_loadu_ps(mult + j));
      if (bias) f = _mm512_add_ps(f, _mm512_loadu_ps(bias + j));
      _mm512_storeu_ps(out + j, _mm512_max_ps(f, _mm512_set1_ps(fmin)));
    }
#elif defined(QPLUGIN_ISA_AVX2)
    const __m256i vazp = _mm256_set1_epi32(azp), vt = _mm256_set1_epi32(t);
    for (; j + 8 <= cnt; j += 8) {
      __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc_row + j));
      c = _mm256_sub_epi32(c,
                           _mm256_mullo_epi32(vazp, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(colsum + j))));
      c = _mm256_add_epi32(c, _mm256_mullo_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bzp + j)), vt));
      __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(c), _mm256_loadu_ps(mult + j));
      if (bias) f = _mm256_add_ps(f, _mm256_loadu_ps(bias + j));
      _mm256_storeu_ps(out + j, _mm256_max_ps(f, _mm256_set1_ps(fmin)));
    }
#elif defined(QPLUGIN_ISA_NEON)
    const a64::EpiC ec{vdupq_n_s32(azp), vdupq_n_s32(t)};
    const float32x4_t vfmin = vdupq_n_f32(fmin);
    for (; j + 4 <= cnt; j += 4) {
      float32x4_t f =
          vmulq_f32(vcvtq_f32_s32(a64::corrected4(ec, acc_row + j, colsum + j, bzp + j)), vld1q_f32(mult + j));
      if (bias) f = vaddq_f32(f, vld1q_f32(bias + j));
      vst1q_f32(out + j, vbslq_f32(vcgtq_f32(f, vfmin), f, vfmin));  // f > fmin ? f : fmin
    }
#endif
    for (; j < cnt; ++j) {
      float f = static_cast<float>(corrected(j)) * mult[j];
      if (bias) f = f + bias[j];
      out[j] = f > fmin ? f : fmin;  // as MAXPS(f, fmin): NaN -> fmin
    }
    return;
  }
  uint8_t* out = static_cast<uint8_t*>(p.out) + m * p.ldc + n;
  const int32_t yzp = p.out_zero_point;
  const uint8_t* add = p.add != nullptr ? p.add + m * p.ld_add + n : nullptr;
#if QPLUGIN_SIMD && (defined(QPLUGIN_ISA_AVX2) || defined(QPLUGIN_ISA_AVX512))
  const requant::Bounds rb = requant::make_bounds(yzp, p.out_min, p.out_max);
  const simd::VI vazp_r = simd::set1_i(p.add_zp);
  const simd::VF vamul = simd::set1_f(p.add_mult);
#endif
#if defined(QPLUGIN_ISA_AVX512)
  {
    const __m512i vazp = _mm512_set1_epi32(azp), vt = _mm512_set1_epi32(t);
    for (; j + 16 <= cnt; j += 16) {
      __m512i c = _mm512_loadu_si512(acc_row + j);
      c = _mm512_sub_epi32(c, _mm512_mullo_epi32(vazp, _mm512_loadu_si512(colsum + j)));
      c = _mm512_add_epi32(c, _mm512_mullo_epi32(_mm512_loadu_si512(bzp + j), vt));
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(c), _mm512_loadu_ps(mult + j));
      if (bias) f = _mm512_add_ps(f, _mm512_loadu_ps(bias + j));
      if (add) f = _mm512_add_ps(f, _mm512_mul_ps(simd::to_f(simd::sub_i(simd::load_u8(add + j), vazp_r)), vamul));
      const __m512i q = requant::requantize(f, rb);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm512_cvtepi32_epi8(q));
    }
  }
#elif defined(QPLUGIN_ISA_AVX2)
  {
    const __m256i vazp = _mm256_set1_epi32(azp), vt = _mm256_set1_epi32(t);
    for (; j + 8 <= cnt; j += 8) {
      __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc_row + j));
      c = _mm256_sub_epi32(c,
                           _mm256_mullo_epi32(vazp, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(colsum + j))));
      c = _mm256_add_epi32(c, _mm256_mullo_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bzp + j)), vt));
      __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(c), _mm256_loadu_ps(mult + j));
      if (bias) f = _mm256_add_ps(f, _mm256_loadu_ps(bias + j));
      if (add) f = _mm256_add_ps(f, _mm256_mul_ps(simd::to_f(simd::sub_i(simd::load_u8(add + j), vazp_r)), vamul));
      store_u8x8(requant::requantize(f, rb), out + j);
    }
  }
#elif defined(QPLUGIN_ISA_NEON)
  {
    const a64::EpiC ec{vdupq_n_s32(azp), vdupq_n_s32(t)};
    const requant::Bounds rb = requant::make_bounds(yzp, p.out_min, p.out_max);
    const int32x4_t vadd_zp = vdupq_n_s32(p.add_zp);
    const float32x4_t vamul = vdupq_n_f32(p.add_mult);
    auto value4 = [&](int64_t i) {
      float32x4_t f =
          vmulq_f32(vcvtq_f32_s32(a64::corrected4(ec, acc_row + i, colsum + i, bzp + i)), vld1q_f32(mult + i));
      if (bias) f = vaddq_f32(f, vld1q_f32(bias + i));
      return f;
    };
    for (; j + 8 <= cnt; j += 8) {
      float32x4_t f0 = value4(j), f1 = value4(j + 4);
      if (add) {
        const uint16x8_t a16 = vmovl_u8(vld1_u8(add + j));
        const int32x4_t a0 = vsubq_s32(vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(a16))), vadd_zp);
        const int32x4_t a1 = vsubq_s32(vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(a16))), vadd_zp);
        f0 = vaddq_f32(f0, vmulq_f32(vcvtq_f32_s32(a0), vamul));
        f1 = vaddq_f32(f1, vmulq_f32(vcvtq_f32_s32(a1), vamul));
      }
      // both halves lie in [out_min, out_max] within [0, 255]: plain narrowing
      const simd::VI q = requant::requantize(simd::VF{{f0, f1}}, rb);
      const int16x8_t q16 = vcombine_s16(vmovn_s32(q.v[0]), vmovn_s32(q.v[1]));
      vst1_u8(out + j, vmovn_u16(vreinterpretq_u16_s16(q16)));
    }
  }
#endif
  for (; j < cnt; ++j) {
    float f = static_cast<float>(corrected(j)) * mult[j];
    if (bias) f = f + bias[j];
    if (add) f = f + static_cast<float>(static_cast<int32_t>(add[j]) - p.add_zp) * p.add_mult;
    out[j] = static_cast<uint8_t>(requantize<float>(f, yzp, p.out_min, p.out_max));
  }
}

#if defined(QPLUGIN_ISA_AVX512)
// The same epilogue for all h rows of a tile at once (kU8 / kF32), columns in vectors of 16 outer
// and rows inner, so the per-column constants (a_zp * colsum, b_zp, multiplier, bias) are loaded
// and multiplied once per tile instead of once per row. Integer terms are exact (wrap-around,
// any order); the float steps are those of epilogue_row in the same order (residual of
// conv2d_add included), so results are bit-identical. Columns past the last full vector go
// through epilogue_row. acc: row stride kTileN; t[r] as in epilogue_row.
//
// kU8 rows of 64 (or 32) columns leave narrowed in registers: only the upper clamp runs in float
// (MINPS(NaN, hi) = hi, so cvtps2dq sees no NaN and returns INT_MIN only for v < -2^31), then
// packs_epi32 (saturating to int16), + out_zero_point in int16 (cannot wrap), packus_epi16
// (clamps at 0), max_epu8(out_min) and one dword permute (the packs work per 128-bit lane: lane L
// of the packed vector holds columns 4L.. of each source vector): one 64-byte store per row.
// Same bytes as requant::requantize (clamp to [lo - zp, hi - zp], round, + zp): rounding is
// monotonic and the bounds are integers with 0 <= lo <= hi <= 255.
//
// Pieces shared with the register-tile epilogue (epilogue_regs) below: tile_value (v of one
// accumulator vector) and the U8Narrow stores. The callers keep every constant in local variables
// (a struct holding a reference to p makes GCC reload and spill them: 1x1 conv 11% slower on
// Zen 5).
struct U8Narrow {
  __m512 hi;
  __m512i zp16, lo8, perm;
};
inline U8Narrow u8_narrow(const QGemmParams& p) {
  return {_mm512_set1_ps(static_cast<float>(p.out_max - p.out_zero_point)),
          _mm512_set1_epi16(static_cast<int16_t>(p.out_zero_point)), _mm512_set1_epi8(static_cast<char>(p.out_min)),
          _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)};
}
inline __m512i u8_top(const U8Narrow& k, __m512 v) { return _mm512_cvtps_epi32(_mm512_min_ps(v, k.hi)); }
// 64 columns of one kU8 row from their 4 vectors of v.
inline void u8_store64(const U8Narrow& k, __m512 v0, __m512 v1, __m512 v2, __m512 v3, uint8_t* out) {
  const __m512i s01 = _mm512_add_epi16(_mm512_packs_epi32(u8_top(k, v0), u8_top(k, v1)), k.zp16);
  const __m512i s23 = _mm512_add_epi16(_mm512_packs_epi32(u8_top(k, v2), u8_top(k, v3)), k.zp16);
  const __m512i o = _mm512_max_epu8(_mm512_packus_epi16(s01, s23), k.lo8);
  _mm512_storeu_si512(out, _mm512_permutexvar_epi32(k.perm, o));
}
// 32 columns: dwords 4L + k (k = 0, 1) hold columns 16k + 4L ..: the first 8 permute entries.
inline void u8_store32(const U8Narrow& k, __m512 v0, __m512 v1, uint8_t* out) {
  const __m512i s01 = _mm512_add_epi16(_mm512_packs_epi32(u8_top(k, v0), u8_top(k, v1)), k.zp16);
  const __m512i o = _mm512_max_epu8(_mm512_packus_epi16(s01, s01), k.lo8);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_castsi512_si256(_mm512_permutexvar_epi32(k.perm, o)));
}
// v = float(c - off) * mult (+ bias) (+ float(add[0..16) - add_zp) * add_mult when add != nullptr),
// c already holding the b_zp * t term when there is one: epilogue_row's steps in its order.
// with_off false: off (a_zp * colsum) is 0 (a_zp == 0), not subtracted. acnt: the residual bytes
// read (a column tail reads only its own).
inline __m512 tile_value(__m512i c, bool with_off, __m512i off, __m512 mult, __m512 bias, bool with_bias,
                         const uint8_t* add, __m512i addzp, __m512 addmul, int acnt = 16) {
  if (with_off) c = _mm512_sub_epi32(c, off);
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(c), mult);
  if (with_bias) f = _mm512_add_ps(f, bias);
  if (add != nullptr) {
    const __m512i a = simd::load_u8_n(add, acnt);
    f = _mm512_add_ps(f, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(a, addzp)), addmul));
  }
  return f;
}

void epilogue_tile(const QGemmParams& p, const int32_t* acc, int h, int64_t m, int64_t n, int64_t cnt,
                   const int32_t* t) {
  const int64_t full = p.kind == OutKind::kS32 ? 0 : cnt / 16 * 16;
  const int32_t* colsum = p.b->col_sums + n;
  const int32_t* bzp = p.b_zero_points + n;
  const float* mult = p.multipliers + n;
  const float* bias = p.bias ? p.bias + n : nullptr;
  const bool zp_terms = !p.b_zero_points_all_zero;
  const __m512i vazp = _mm512_set1_epi32(p.a_zero_point);
  const uint8_t* add = p.add != nullptr ? p.add + m * p.ld_add + n : nullptr;
  const int64_t ld_add = p.ld_add;
  const __m512i vaddzp = _mm512_set1_epi32(p.add_zp);
  const __m512 vaddmul = _mm512_set1_ps(p.add_mult);
  struct Col {
    __m512i off, bzp;
    __m512 mult, bias;
  };
  auto col = [&](int64_t j) {
    return Col{_mm512_mullo_epi32(vazp, _mm512_loadu_si512(colsum + j)), _mm512_loadu_si512(bzp + j),
               _mm512_loadu_ps(mult + j), bias ? _mm512_loadu_ps(bias + j) : _mm512_setzero_ps()};
  };
  // v of row r, columns j .. j + 15.
  auto value = [&](const Col& c, int r, int64_t j) {
    __m512i v = _mm512_loadu_si512(acc + r * kTileN + j);
    if (zp_terms) v = _mm512_add_epi32(v, _mm512_mullo_epi32(c.bzp, _mm512_set1_epi32(t[r])));
    return tile_value(v, true, c.off, c.mult, c.bias, bias != nullptr, add ? add + r * ld_add + j : nullptr, vaddzp,
                      vaddmul);
  };
  int64_t j = 0;
  if (p.kind == OutKind::kU8) {
    uint8_t* out = static_cast<uint8_t*>(p.out) + m * p.ldc + n;
    const int64_t ldc = p.ldc;
    const U8Narrow nk = u8_narrow(p);
    for (; j + 64 <= full; j += 64) {
      const Col c[4] = {col(j), col(j + 16), col(j + 32), col(j + 48)};
      for (int r = 0; r < h; ++r) {
        u8_store64(nk, value(c[0], r, j), value(c[1], r, j + 16), value(c[2], r, j + 32), value(c[3], r, j + 48),
                   out + r * ldc + j);
      }
    }
    if (j + 32 <= full) {
      const Col c[2] = {col(j), col(j + 16)};
      for (int r = 0; r < h; ++r) u8_store32(nk, value(c[0], r, j), value(c[1], r, j + 16), out + r * ldc + j);
      j += 32;
    }
    const requant::Bounds rb = requant::make_bounds(p.out_zero_point, p.out_min, p.out_max);
    for (; j < full; j += 16) {
      const Col c = col(j);
      for (int r = 0; r < h; ++r) {
        const __m512i q = requant::requantize(value(c, r, j), rb);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + r * ldc + j), _mm512_cvtepi32_epi8(q));
      }
    }
  } else if (p.kind == OutKind::kF32) {
    float* out = static_cast<float*>(p.out) + m * p.ldc + n;
    const __m512 vfmin = _mm512_set1_ps(p.out_fmin);
    const int64_t ldc = p.ldc;
    for (; j < full; j += 16) {
      const Col c = col(j);
      for (int r = 0; r < h; ++r) {  // value() without the residual (kU8 only)
        __m512i v = _mm512_sub_epi32(_mm512_loadu_si512(acc + r * kTileN + j), c.off);
        if (zp_terms) v = _mm512_add_epi32(v, _mm512_mullo_epi32(c.bzp, _mm512_set1_epi32(t[r])));
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), c.mult);
        if (bias) f = _mm512_add_ps(f, c.bias);
        _mm512_storeu_ps(out + r * ldc + j, _mm512_max_ps(f, vfmin));
      }
    }
  }
  if (j < cnt) {
    for (int r = 0; r < h; ++r) epilogue_row(p, acc + r * kTileN + j, m + r, n + j, cnt - j, t[r]);
  }
}

// The kU8 constants of one column strip of the register tiles (ncols <= NV * 16 columns from n),
// built once per strip by reg_strip rather than per tile: a_zp * colsum, multiplier and bias per
// vector (masked loads past the last column: the multipliers and bias end there; zero lanes are
// never stored), and the narrowing / requantize bounds.
template <int NV>
struct RegEpi {
  __m512i off[NV];
  __m512 mu[NV], bi[NV];
  U8Narrow nk;
  requant::Bounds rb;
  __m512i addzp;
  __m512 addmul;
};
// The epilogue constants of columns [n, n + ncols): col_sums(v, cnt) gives the col sums of
// vector v's cnt columns (the a_zp * col sum terms), multipliers and bias come from p.
template <int NV, class ColSums>
inline RegEpi<NV> reg_epi_with(const QGemmParams& p, int64_t n, int64_t ncols, ColSums col_sums) {
  RegEpi<NV> e;
  const __m512i vazp = _mm512_set1_epi32(p.a_zero_point);
  for (int v = 0; v < NV; ++v) {
    const int cnt = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(16, ncols - 16 * v)));
    e.off[v] = _mm512_mullo_epi32(vazp, col_sums(v, cnt));
    e.mu[v] = simd::loadu_f_n(p.multipliers + n + 16 * v, cnt);
    e.bi[v] = p.bias != nullptr ? simd::loadu_f_n(p.bias + n + 16 * v, cnt) : _mm512_setzero_ps();
  }
  e.nk = u8_narrow(p);
  e.rb = requant::make_bounds(p.out_zero_point, p.out_min, p.out_max);
  e.addzp = _mm512_set1_epi32(p.add_zp);
  e.addmul = _mm512_set1_ps(p.add_mult);
  return e;
}
template <int NV>
inline RegEpi<NV> reg_epi(const QGemmParams& p, int64_t n, int64_t ncols) {
  return reg_epi_with<NV>(p, n, ncols, [&](int v, int cnt) {
    return simd::loadu_i_n(p.b->col_sums + n + 16 * v, cnt);
  });
}

// The epilogue of an MR x NV register tile without row-sum terms (the register tiles below): kU8
// straight from the registers (rows of all NV * 16 columns narrowed and stored whole; a column
// tail per 16-column vector with a masked store), anything else through epilogue_tile (the
// accumulators stored first). The same pieces, so the same bytes. Branch free in the row loop:
// a_zp * colsum is subtracted and the bias added even when 0 (exact in int32; v + 0.0f differs
// from v only for v = -0.0, which rounds to the same integer), the residual is a compile-time
// choice (HasAdd). Tile row r goes to output row m + r, or orow[r] when Sel (IndirectA::out_rows).
template <bool HasAdd, bool Sel, int MR, int NV>
__attribute__((always_inline)) inline void epilogue_regs_u8(const QGemmParams& p, const RegEpi<NV>& e,
                                                            const __m512i (&acc)[MR][NV], int64_t m,
                                                            const int64_t* orow, int64_t n, int64_t ncols) {
  const int64_t ldc = p.ldc, ld_add = p.ld_add;
  uint8_t* out = static_cast<uint8_t*>(p.out) + (Sel ? 0 : m * ldc) + n;
  const uint8_t* add = HasAdd ? p.add + (Sel ? 0 : m * ld_add) + n : nullptr;
  auto out_row = [&](int r) {
    return out + (Sel ? orow[r] : r) * ldc;
  };
  auto add_row = [&](int r) {
    return add + (Sel ? orow[r] : r) * ld_add;
  };
  if (ncols == NV * kPanelN) {
    auto value = [&](int r, int v) {
      return tile_value(acc[r][v], true, e.off[v], e.mu[v], e.bi[v], true, HasAdd ? add_row(r) + 16 * v : nullptr,
                        e.addzp, e.addmul);
    };
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      if constexpr (NV == 4) {
        u8_store64(e.nk, value(r, 0), value(r, 1), value(r, 2), value(r, 3), out_row(r));
      } else if constexpr (NV == 2) {
        u8_store32(e.nk, value(r, 0), value(r, 1), out_row(r));
      } else {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out_row(r)),
                         _mm512_cvtepi32_epi8(requant::requantize(value(r, 0), e.rb)));
      }
    }
    return;
  }
  // A column tail: vector v holds min(16, ncols - 16 v) columns (the residual ends at the last
  // column too: masked loads).
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int cnt = static_cast<int>(std::min<int64_t>(16, ncols - 16 * v));
    if (cnt <= 0) break;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 f = tile_value(acc[r][v], true, e.off[v], e.mu[v], e.bi[v], true,
                                  HasAdd ? add_row(r) + 16 * v : nullptr, e.addzp, e.addmul, cnt);
      simd::store_u8_n(out_row(r) + 16 * v, requant::requantize(f, e.rb), cnt);
    }
  }
}
// Always inlined into its tile: as a call, the accumulators would leave the registers for memory
// (GCC passes the array by address), the round trip this epilogue exists to avoid.
template <bool Sel, int MR, int NV>
__attribute__((always_inline)) inline void epilogue_regs(const QGemmParams& p, const RegEpi<NV>& e,
                                                         const __m512i (&acc)[MR][NV], int64_t m, const int64_t* orow,
                                                         int64_t n, int64_t ncols) {
  if (p.kind == OutKind::kU8) {
    if (p.add != nullptr) {
      epilogue_regs_u8<true, Sel>(p, e, acc, m, orow, n, ncols);
    } else {
      epilogue_regs_u8<false, Sel>(p, e, acc, m, orow, n, ncols);
    }
    return;
  }
  alignas(64) int32_t c[MR * kTileN];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) _mm512_store_si512(c + r * kTileN + j * 16, acc[r][j]);
  const int32_t t0[MR] = {};
  if constexpr (Sel) {
    for (int r = 0; r < MR; ++r) epilogue_tile(p, c + r * kTileN, 1, orow[r], n, ncols, t0);
  } else {
    epilogue_tile(p, c, MR, m, n, ncols, t0);
  }
}

// ---- Register tiles (intrinsics; qgemm_block_indirect, and qgemm_block's small-K kU8 blocks) ----
// Row r of a tile is the concatenation over taps t of seg bytes at row(r) + tap_off[t]. Three row
// sources: RowsInd (conv's indirect A: MR independent row pointers, which the asm tiles' base +
// lda addressing cannot express), RowsSel (the same with IndirectA's tap_b and out_rows: tap t
// against B's K range of tap tap_b[t], row r written to output row out_rows[r]; conv's pixels
// next to the padding with their padded taps left out) and RowsDense (a + r * lda, one tap of K
// bytes). The choice is a template parameter: RowsInd's tiles carry no selection code. The tiles are
// fully unrolled (the MR x NV accumulators stay in registers) and requantize from the registers
// (epilogue_regs), which is what small K needs: with K = 16-96 a tile is 4-24 quads, and the asm
// tiles' round trip of the accumulators through memory costs as much as the multiply-adds.
// Taps may come in chunks (a B chunk stays in L1): partial sums go through cbuf (MR x NV * 16
// int32 per tile); `first` starts from zero, `last` runs the epilogue.
// at(i): the rows from row i on; from_tap(t0): the taps from tap t0 on (a chunk of taps);
// out_rows(): the output row of each tile row (nullptr: row m + r); tap_b(t) (RowsSel only): the
// position in B of tap t.
struct RowsInd {
  static constexpr bool kOneTap = false;
  static constexpr bool kSel = false;
  const uint8_t* const* rows;
  const uint8_t* row(int r) const { return rows[r]; }
  RowsInd at(int64_t i) const { return {rows + i}; }
  RowsInd from_tap(int64_t) const { return *this; }
  const int64_t* out_rows() const { return nullptr; }
};
struct RowsSel {
  static constexpr bool kOneTap = false;
  static constexpr bool kSel = true;
  const uint8_t* const* rows;
  const int64_t* orows;
  const int64_t* tapb;
  const uint8_t* row(int r) const { return rows[r]; }
  RowsSel at(int64_t i) const { return {rows + i, orows + i, tapb}; }
  RowsSel from_tap(int64_t t0) const { return {rows, orows, tapb + t0}; }
  const int64_t* out_rows() const { return orows; }
  int64_t tap_b(int64_t t) const { return tapb[t]; }
};
struct RowsDense {
  static constexpr bool kOneTap = true;  // tap_off = {0}, seg = K
  static constexpr bool kSel = false;
  const uint8_t* a;
  int64_t lda;
  const uint8_t* row(int r) const { return a + r * lda; }
  RowsDense at(int64_t i) const { return {a + i * lda, lda}; }
  RowsDense from_tap(int64_t) const { return *this; }
  const int64_t* out_rows() const { return nullptr; }
};

// Always inlined into reg_strip: as a call per tile (its arguments through the stack, p's fields
// reloaded after every tile's byte stores) 1x1 16->96 runs 15% slower than inlined (Zen 5;
// docs/design/gemm.md).
template <int MR, int NV, class Rows>
__attribute__((always_inline)) inline void tile_reg(Rows rows, const int64_t* tap_off, int64_t ntaps, int64_t seg,
                                                    const int8_t* b, int64_t pstride, int32_t* cbuf, bool first,
                                                    bool last, const QGemmParams& p, const RegEpi<NV>& e, int64_t m,
                                                    int64_t n, int64_t ncols) {
  __m512i acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j)
      acc[r][j] = first ? _mm512_setzero_si512() : _mm512_loadu_si512(cbuf + (r * NV + j) * 16);
  const int8_t* bk = b;
  if constexpr (Rows::kOneTap) ntaps = 1;
  for (int64_t t = 0; t < ntaps; ++t) {
    const int64_t off = Rows::kOneTap ? 0 : tap_off[t];
    if constexpr (Rows::kSel) bk = b + rows.tap_b(t) * seg * kPanelN;
    const uint8_t* rp[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) rp[r] = rows.row(r) + off;
    for (int64_t k = 0; k < seg; k += 4, bk += 4 * kPanelN) {
      __m512i bv[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) bv[j] = _mm512_loadu_si512(bk + j * pstride);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        int32_t av;
        std::memcpy(&av, rp[r] + k, 4);
        const __m512i avv = _mm512_set1_epi32(av);
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], avv, bv[j]);
      }
    }
  }
  if (last) {
    epilogue_regs<Rows::kSel, MR, NV>(p, e, acc, m, rows.out_rows(), n, ncols);  // no row-sum terms (all b_zp 0)
  } else {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) _mm512_storeu_si512(cbuf + (r * NV + j) * 16, acc[r][j]);
  }
}

// A last tile of R < MR rows: tile_reg<R, NV>.
template <int NV, int R, class Rows, typename... Args>
void tile_reg_rows(int rows, Rows src, const Args&... args) {
  if constexpr (R >= 1) {
    if (rows == R) {
      tile_reg<R, NV>(src, args...);
    } else {
      tile_reg_rows<NV, R - 1>(rows, src, args...);
    }
  }
}

// Rows [m0, m1) x columns [n, n + ncols) (ncols <= NV * 16) in MR-row tiles; src: row m0.
template <int NV, int MR, class Rows>
void reg_strip(const QGemmParams& p, Rows src, const int64_t* tap_off, int64_t ntaps, int64_t seg, int64_t m0,
               int64_t m1, int64_t n, int64_t ncols) {
  const int64_t pstride = gemm::padded_k(p.b->K) * kPanelN;
  const int8_t* b = p.b->data + (n / kPanelN) * pstride;
  // Many taps (3-d kernels, large 2-d kernels) with a B strip beyond L1: split the taps in
  // balanced chunks of ~16 KiB of B each. Measured: 3x3x3 x 32 channels 257 -> 322 GOPS; 3x3
  // kernels run unchunked (fewer partial-sum round trips).
  const int64_t per_tap = seg * kPanelN * NV;
  int64_t chunk = ntaps;
  if (ntaps > 9 && ntaps * per_tap > 32 * 1024) {
    const int64_t nchunks = (ntaps * per_tap + 16 * 1024 - 1) / (16 * 1024);
    chunk = (ntaps + nchunks - 1) / nchunks;
  }
  const int64_t mcount = m1 - m0;
  const RegEpi<NV> e = reg_epi<NV>(p, n, ncols);
  std::vector<int32_t> cbuf(ntaps > chunk ? static_cast<size_t>(((mcount + MR - 1) / MR) * MR * NV * 16) : 0);
  for (int64_t t0 = 0; t0 < ntaps; t0 += chunk) {
    const int64_t nt = std::min(chunk, ntaps - t0);
    const bool first = t0 == 0;
    const bool last = t0 + nt == ntaps;
    const int8_t* bt = Rows::kSel ? b : b + t0 * seg * kPanelN;  // RowsSel: B positions per tap
    int64_t i = 0;
    if (first && last) {  // unchunked (the common case): first / last known here
      for (; i + MR <= mcount; i += MR) {
        tile_reg<MR, NV>(src.at(i), tap_off, nt, seg, bt, pstride, nullptr, true, true, p, e, m0 + i, n, ncols);
      }
    }
    for (; i < mcount; i += MR) {
      int32_t* cb = cbuf.empty() ? nullptr : cbuf.data() + i * NV * 16;
      const int rows = static_cast<int>(std::min<int64_t>(MR, mcount - i));
      if (rows == MR) {
        tile_reg<MR, NV>(src.at(i).from_tap(t0), tap_off + t0, nt, seg, bt, pstride, cb, first, last, p, e, m0 + i, n,
                         ncols);
      } else {
        tile_reg_rows<NV, MR - 1>(rows, src.at(i).from_tap(t0), tap_off + t0, nt, seg, bt, pstride, cb, first, last, p,
                                  e, m0 + i, n, ncols);
      }
    }
  }
}

// Whether qgemm_block runs a dense block on the register tiles rather than the asm tiles: kU8 out,
// no row-sum terms (every b_zp 0), whole quads (the tiles read A in 4-byte steps), K up to
// kRegMaxK and more than one row (one row is the asm GEMV's). kRegMaxK is a choice, not a measured
// crossover: small K is where the memory epilogue costs as much as the multiply-adds, and linear's
// measured rows (K >= 768) keep the asm tiles with their weight prefetching.
constexpr int64_t kRegMaxK = 512;
inline bool use_reg_tiles(const QGemmParams& p, int64_t K, int64_t rows) {
  return p.kind == OutKind::kU8 && p.b_zero_points_all_zero && K % 4 == 0 && K <= kRegMaxK && rows > 1;
}

// Rows [m0, m1) x columns [n0, n1) on the register tiles: 64-column strips in 6 x 64 tiles (24
// accumulators), then 32 in 14 x 32 (28 accumulators + 2 B vectors + 1 broadcast; conv3d 3x3x3
// 32->32: 1.16 of torch with 8 x 32, 1.09 with 14 x 32), then 16 in 8 x 16 (dense rows: 12 x 16,
// one B vector per 12 multiply-adds, as the pre-engine conv tiles).
template <class Rows>
void reg_block(const QGemmParams& p, Rows src, const int64_t* tap_off, int64_t ntaps, int64_t seg, int64_t m0,
               int64_t m1, int64_t n0, int64_t n1) {
  int64_t n = n0;
  for (; n + 3 * kPanelN < n1; n += 4 * kPanelN) {
    reg_strip<4, 6>(p, src, tap_off, ntaps, seg, m0, m1, n, std::min<int64_t>(4 * kPanelN, n1 - n));
  }
  for (; n + kPanelN < n1; n += 2 * kPanelN) {
    reg_strip<2, 14>(p, src, tap_off, ntaps, seg, m0, m1, n, std::min<int64_t>(2 * kPanelN, n1 - n));
  }
  if (n < n1) reg_strip<1, Rows::kOneTap ? 12 : 8>(p, src, tap_off, ntaps, seg, m0, m1, n, n1 - n);
}

// ---- A grouped conv's small groups side by side (qgemm_block_groups) ----
// Groups of OCG = 8 or 16 output channels (every b_zp 0), each with its own PackedB of one
// panel. A tile vector holds 16 output channels: one group's (OCG 16) or two groups' (OCG 8:
// lanes 0-7 group 2v, lanes 8-15 group 2v + 1, each half's B from its group's first 8 columns and
// its A bytes broadcast into its own 8 lanes), so no lane multiplies a padding column and a tile
// covers NV * 16 / OCG groups: one pass over the taps and row pointers for all of them, where a
// group at a time ran an 8 x 16 tile half empty (OCG 8) over 2-4 quads a tap. The sums are the
// same int32 sums in another order, the epilogue is epilogue_regs: the same bytes.
// Group j of the block reads row + tap_off[t] + j * icg, its B from bs[j]; output column
// j * OCG + c is the group's column c.

// The epilogue constants of columns [n, n + ncols) (n a multiple of 16): the a_zp * col sum terms
// from each column's group, multipliers and bias from p (one per output channel).
template <int OCG, int NV>
RegEpi<NV> reg_epi_groups(const QGemmParams& p, const gemm::PackedB* bs, int64_t n, int64_t ncols) {
  return reg_epi_with<NV>(p, n, ncols, [&](int v, int cnt) {
    alignas(64) int32_t cs[16] = {};
    for (int l = 0; l < cnt; ++l) {
      const int64_t col = n + 16 * v + l;
      cs[l] = bs[col / OCG].col_sums[col % OCG];
    }
    return _mm512_load_si512(cs);
  });
}

// An MR x NV tile of the groups from group g (the first of the tile; ngroups in the block) on,
// rows rows[0 .. MR). Full: the tile's NV * 16 / OCG groups all exist (else the missing ones'
// halves stay zero and their A bytes are not read).
template <int MR, int NV, int OCG, bool Full>
__attribute__((always_inline)) inline void tile_groups(const uint8_t* const* rows, const int64_t* tap_off,
                                                       int64_t ntaps, int64_t icg, const gemm::PackedB* bs, int64_t g,
                                                       int64_t ngroups, const QGemmParams& p, const RegEpi<NV>& e,
                                                       int64_t m, int64_t ncols) {
  constexpr int kPer = 16 / OCG;  // groups per vector
  __m512i acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_setzero_si512();
  // B of group g + kPer * j + h at quad offset k: bp[j][h] + k * kPanelN (a missing group of an
  // odd count reads nothing: its half stays zero)
  const int8_t* bp[NV][kPer];
  bool has[NV][kPer];
  for (int j = 0; j < NV; ++j)
    for (int h = 0; h < kPer; ++h) {
      const int64_t gi = g + kPer * j + h;
      has[j][h] = Full || gi < ngroups;
      bp[j][h] = has[j][h] ? bs[gi].data : nullptr;
    }
  int64_t kb = 0;  // byte offset of this quad in a group's panel
  for (int64_t t = 0; t < ntaps; ++t) {
    const uint8_t* rp[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) rp[r] = rows[r] + tap_off[t] + g * icg;
    for (int64_t k = 0; k < icg; k += 4, kb += 4 * kPanelN) {
      __m512i bv[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) {
        if constexpr (OCG == 16) {
          bv[j] = _mm512_loadu_si512(bp[j][0] + kb);
        } else {
          const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp[j][0] + kb));
          const __m256i hi = Full || has[j][1] ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp[j][1] + kb))
                                               : _mm256_setzero_si256();
          bv[j] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
        }
      }
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
          const uint8_t* a = rp[r] + kPer * j * icg + k;
          int32_t a0;
          std::memcpy(&a0, a, 4);
          __m512i av = _mm512_set1_epi32(a0);
          if constexpr (OCG == 8) {
            int32_t a1 = 0;
            if (Full || has[j][1]) std::memcpy(&a1, a + icg, 4);
            av = _mm512_mask_set1_epi32(av, 0xFF00, a1);
          }
          acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], av, bv[j]);
        }
      }
    }
  }
  epilogue_regs<false, MR, NV>(p, e, acc, m, nullptr, g * OCG, ncols);
}

template <int NV, int OCG, bool Full, int R, typename... Args>
void tile_groups_rows(int rows, const uint8_t* const* src, const Args&... args) {
  if constexpr (R >= 1) {
    if (rows == R) {
      tile_groups<R, NV, OCG, Full>(src, args...);
    } else {
      tile_groups_rows<NV, OCG, Full, R - 1>(rows, src, args...);
    }
  }
}

// Rows [m0, m1) of groups [g, g + NV * 16 / OCG) (fewer at the end of the block).
template <int NV, int OCG, bool Full>
void groups_strip_rows(const QGemmParams& p, const gemm::IndirectA& a, const gemm::PackedB* bs, int64_t ngroups,
                       int64_t g, int64_t m0, int64_t m1) {
  constexpr int MR = 6;
  const int64_t ncols = std::min<int64_t>(NV * 16, (ngroups - g) * OCG);
  const RegEpi<NV> e = reg_epi_groups<OCG, NV>(p, bs, g * OCG, ncols);
  int64_t m = m0;
  for (; m + MR <= m1; m += MR) {
    tile_groups<MR, NV, OCG, Full>(a.rows + (m - m0), a.tap_off, a.ntaps, a.seg, bs, g, ngroups, p, e, m, ncols);
  }
  if (m < m1) {
    tile_groups_rows<NV, OCG, Full, MR - 1>(static_cast<int>(m1 - m), a.rows + (m - m0), a.tap_off, a.ntaps, a.seg, bs,
                                            g, ngroups, p, e, m, ncols);
  }
}

template <int NV, int OCG>
void groups_strip(const QGemmParams& p, const gemm::IndirectA& a, const gemm::PackedB* bs, int64_t ngroups, int64_t g,
                  int64_t m0, int64_t m1) {
  if (g + NV * (16 / OCG) <= ngroups) {
    groups_strip_rows<NV, OCG, true>(p, a, bs, ngroups, g, m0, m1);
  } else {
    groups_strip_rows<NV, OCG, false>(p, a, bs, ngroups, g, m0, m1);
  }
}

// The k4 tiles (gemm::pack_groups_k4's layout; groups of 8 input and output channels): per
// tap, one 16-byte broadcast of a pixel's 16-channel block (two groups) feeds the block's 2
// vectors, whose lanes are (output 4 h + m, input dword i: group i / 2, quad i % 2); the epilogue
// adds each output's two dwords. An MR x NBLK tile: MR rows x NBLK blocks (16 output channels
// each) from block cb on. (Groups of 16 channels: the same scheme with 4 vectors a block and a
// 4-way sum measured no faster than the broadcast tiles above, so they run those.)
template <int MR, int NBLK>
__attribute__((always_inline)) inline void tile_k4(const uint8_t* const* rows, const int64_t* tap_off, int64_t ntaps,
                                                   const int8_t* k4, int64_t cb, const QGemmParams& p,
                                                   const RegEpi<NBLK>& e, int64_t m) {
  constexpr int V = 2;  // vectors a block
  __m512i acc[MR][NBLK * V];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int bi = 0; bi < NBLK; ++bi)
#pragma GCC unroll 4
      for (int h = 0; h < V; ++h) acc[r][bi * V + h] = _mm512_setzero_si512();
  for (int64_t t = 0; t < ntaps; ++t) {
    __m512i bv[NBLK][V];
#pragma GCC unroll 4
    for (int bi = 0; bi < NBLK; ++bi)
#pragma GCC unroll 4
      for (int h = 0; h < V; ++h) bv[bi][h] = _mm512_loadu_si512(k4 + (((cb + bi) * ntaps + t) * V + h) * 64);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const uint8_t* rp = rows[r] + tap_off[t] + cb * 16;
#pragma GCC unroll 4
      for (int bi = 0; bi < NBLK; ++bi) {
        const __m512i av = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rp + bi * 16)));
#pragma GCC unroll 4
        for (int h = 0; h < V; ++h) acc[r][bi * V + h] = _mm512_dpbusd_epi32(acc[r][bi * V + h], av, bv[bi][h]);
      }
    }
  }
  // Each output's dword sums in the natural channel order (group, output) of the block.
  __m512i out[MR][NBLK];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int bi = 0; bi < NBLK; ++bi) {
      const __m512i* v = acc[r] + bi * V;
      // lanes (m, 2 s + q) of vector h: group s, output 4 h + m, quad q
      const __m512i w0 = _mm512_add_epi32(v[0], _mm512_shuffle_epi32(v[0], _MM_PERM_CDAB));
      const __m512i w1 = _mm512_add_epi32(v[1], _mm512_shuffle_epi32(v[1], _MM_PERM_CDAB));
      // channel 8 s + 4 h + m from lane 4 m + 2 s of w_h
      const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 2, 6, 10, 14, 18, 22, 26, 30);
      out[r][bi] = _mm512_permutex2var_epi32(w0, idx, w1);
    }
  }
  epilogue_regs<false, MR, NBLK>(p, e, out, m, nullptr, cb * 16, NBLK * 16);
}

template <int NBLK, int R, typename... Args>
void tile_k4_rows(int rows, const uint8_t* const* src, const Args&... args) {
  if constexpr (R >= 1) {
    if (rows == R) {
      tile_k4<R, NBLK>(src, args...);
    } else {
      tile_k4_rows<NBLK, R - 1>(rows, src, args...);
    }
  }
}

template <int NBLK>
void k4_strip(const QGemmParams& p, const gemm::IndirectA& a, const gemm::PackedB* bs, const int8_t* k4, int64_t cb,
              int64_t m0, int64_t m1) {
  constexpr int MR = 4;  // 16 accumulators: with 24 GCC keeps them in memory across the taps
  const RegEpi<NBLK> e = reg_epi_groups<8, NBLK>(p, bs, cb * 16, NBLK * 16);
  int64_t m = m0;
  for (; m + MR <= m1; m += MR) tile_k4<MR, NBLK>(a.rows + (m - m0), a.tap_off, a.ntaps, k4, cb, p, e, m);
  if (m < m1) {
    tile_k4_rows<NBLK, MR - 1>(static_cast<int>(m1 - m), a.rows + (m - m0), a.tap_off, a.ntaps, k4, cb, p, e, m);
  }
}

void k4_block(const QGemmParams& p, const gemm::IndirectA& a, const gemm::PackedB* bs, int64_t ngroups,
              const int8_t* k4, int64_t m0, int64_t m1) {
  constexpr int kBlk = 2;  // blocks a tile: 4 vectors
  const int64_t nb = ngroups / 2;
  int64_t cb = 0;
  for (; cb + kBlk <= nb; cb += kBlk) k4_strip<kBlk>(p, a, bs, k4, cb, m0, m1);
  if (cb < nb) k4_strip<1>(p, a, bs, k4, cb, m0, m1);
}

template <int OCG>
void groups_block(const QGemmParams& p, const gemm::IndirectA& a, const gemm::PackedB* bs, int64_t ngroups, int64_t m0,
                  int64_t m1) {
  constexpr int kPer = 16 / OCG;
  int64_t g = 0;
  for (; g + 3 * kPer < ngroups; g += 4 * kPer) groups_strip<4, OCG>(p, a, bs, ngroups, g, m0, m1);
  for (; g + kPer < ngroups; g += 2 * kPer) groups_strip<2, OCG>(p, a, bs, ngroups, g, m0, m1);
  if (g < ngroups) groups_strip<1, OCG>(p, a, bs, ngroups, g, m0, m1);
}
#endif

#if defined(QPLUGIN_ISA_AVX2)
// The kU8 epilogue for a full 16-column panel and h rows of a one-panel tile (acc row stride 16):
// the per-column constants (a_zp * colsum, b_zp, multiplier, bias) are loaded once per tile, not
// once per row, and each row's 16 bytes leave in one store. The integer terms are epilogue_row's
// (wrap-around, any order gives the same int32), the float steps the same in the same order, so
// the bytes are identical.
struct PanelU8 {
  __m256i off[2], bzp[2];
  __m256 mult[2], bias[2];
  requant::Bounds rb;
  __m256i add_zp;
  __m256 add_mult;
  bool zp_terms, has_bias;
};
// The constants of nv (1 or 2) vectors of 8 columns from column n; col_sums[v]: vector v's 8
// column sums.
inline PanelU8 panel_u8_of(const QGemmParams& p, const int32_t* const* col_sums, int64_t n, int nv) {
  PanelU8 e{};
  const __m256i vazp = _mm256_set1_epi32(p.a_zero_point);
  for (int v = 0; v < nv; ++v) {
    const int64_t j = n + 8 * v;
    e.off[v] = _mm256_mullo_epi32(vazp, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_sums[v])));
    e.bzp[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.b_zero_points + j));
    e.mult[v] = _mm256_loadu_ps(p.multipliers + j);
    e.bias[v] = p.bias ? _mm256_loadu_ps(p.bias + j) : _mm256_setzero_ps();
  }
  e.rb = requant::make_bounds(p.out_zero_point, p.out_min, p.out_max);
  e.add_zp = _mm256_set1_epi32(p.add_zp);
  e.add_mult = _mm256_set1_ps(p.add_mult);
  e.zp_terms = !p.b_zero_points_all_zero;
  e.has_bias = p.bias != nullptr;
  return e;
}
inline PanelU8 panel_u8(const QGemmParams& p, int64_t n) {
  const int32_t* cs[2] = {p.b->col_sums + n, p.b->col_sums + n + 8};
  return panel_u8_of(p, cs, n, 2);
}
// Vector v (columns n + 8 v ..) of row m: the requantized values (in [0, 255]) of accumulators c,
// t the row's term (epilogue_row).
inline __m256i panel_u8_vec(const QGemmParams& p, const PanelU8& e, int v, __m256i c, int32_t t, int64_t m, int64_t n) {
  c = _mm256_sub_epi32(c, e.off[v]);
  if (e.zp_terms) c = _mm256_add_epi32(c, _mm256_mullo_epi32(e.bzp[v], _mm256_set1_epi32(t)));
  __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(c), e.mult[v]);
  if (e.has_bias) f = _mm256_add_ps(f, e.bias[v]);
  if (p.add != nullptr) {
    const __m256i a = simd::load_u8(p.add + m * p.ld_add + n + 8 * v);
    f = _mm256_add_ps(f, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(a, e.add_zp)), e.add_mult));
  }
  return requant::requantize(f, e.rb);
}
// 16 values in [0, 255] (q0: columns 0-7, q1: 8-15) stored as 16 bytes: packs (per 128-bit lane)
// then packus, one permute restores the order.
inline void store_u8x16(__m256i q0, __m256i q1, uint8_t* out) {
  const __m256i w16 = _mm256_packs_epi32(q0, q1);  // lane L: q0[4L..4L+3], q1[4L..4L+3]
  const __m256i w8 = _mm256_permute4x64_epi64(_mm256_packus_epi16(w16, w16), 0xD8);
  // w8 64-bit words: [q0 0-3 q1 0-3 | q0 0-3 q1 0-3 ...]: reorder the dwords to q0 0-7, q1 0-7
  const __m128i lo = _mm256_castsi256_si128(w8);  // dwords: q0[0..3], q1[0..3], q0[4..7], q1[4..7]
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi32(lo, 0xD8));
}
inline void panel_u8_rows(const QGemmParams& p, const PanelU8& e, const int32_t* acc, int h, int64_t m, int64_t n,
                          const int32_t* t) {
  uint8_t* out = static_cast<uint8_t*>(p.out);
  for (int r = 0; r < h; ++r) {
    __m256i q[2];
    for (int v = 0; v < 2; ++v) {
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + r * kPanelN + 8 * v));
      q[v] = panel_u8_vec(p, e, v, c, t[r], m + r, n);
    }
    store_u8x16(q[0], q[1], out + (m + r) * p.ldc + n);
  }
}

#if defined(QPLUGIN_GEMM_I16)
// ---- A grouped conv's small groups on AVX2 (qgemm_block_groups) ----
// Groups of OCG = 8 or 16 output channels with icg % 4 == 0, or of 4 input and 4 output channels
// (tile_group_halves_i16), every b_zp 0. A is read through the row
// pointers (no im2col, no int16 copy of A), B from each group's int16 layout (PackedB::data16, one
// panel) and only its first OCG columns are multiplied, where the im2col tiles ran a 16-column
// panel half empty for OCG 8 and gathered every tap of every group into a buffer first. Per
// pixel, tap and 8 input channels: one 8-byte broadcast (a load); per channel pair one byte
// shuffle widens the pair to int16 and spreads it over the 8 lanes, and one vpmaddwd per 8 output
// channels multiplies it with B's k-pair. The sums are the im2col tiles' int32 sums (exact,
// wrap-around) and the epilogue is panel_u8's: the same bytes.

// A byte shuffle mask: int16 pair (bytes lo, lo + 1) zero-extended into each of the low 4 dword
// lanes, (hi, hi + 1) into each of the high 4 (byte indexes within a 128-bit half).
inline __m256i pair_pick(uint32_t lo, uint32_t hi) {
  return _mm256_setr_m128i(_mm_set1_epi32(static_cast<int32_t>(0x80008000u | lo | ((lo + 1) << 16))),
                           _mm_set1_epi32(static_cast<int32_t>(0x80008000u | hi | ((hi + 1) << 16))));
}
// [the 8 int16 at a | the 8 at b]
inline __m256i halves(const int16_t* a, const int16_t* b) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a))),
                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)), 1);
}
// x[r]: the Bytes (4, 8 or 16) bytes at rows[r] + off, repeated over the vector.
template <int MR, int Bytes>
inline void broadcast_rows(const uint8_t* const* rows, int64_t off, __m256i* x) {
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const uint8_t* a = rows[r] + off;
    if constexpr (Bytes == 16) {
      x[r] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
    } else if constexpr (Bytes == 8) {
      int64_t q;
      std::memcpy(&q, a, 8);
      x[r] = _mm256_set1_epi64x(q);
    } else {
      int32_t d;
      std::memcpy(&d, a, 4);
      x[r] = _mm256_set1_epi32(d);
    }
  }
}

// f(std::integral_constant<int, R>{}) for R = rows (1 <= rows <= MaxR): a tile of rows rows.
template <int MaxR, class F>
inline void with_rows(int rows, const F& f) {
  if constexpr (MaxR >= 1) {
    if (rows == MaxR) {
      f(std::integral_constant<int, MaxR>{});
    } else {
      with_rows<MaxR - 1>(rows, f);
    }
  }
}

// MR rows x one group (NV vectors of 8 output channels): rows[r] + tap_off[t] + goff holds the
// group's icg input bytes of row r at tap t; b16: the group's int16 panel (k-pair p at b16 + 32 p,
// the taps in order, icg / 2 pairs each); output columns col .. ICG: icg when it is 8 or 16, else 0.
template <int MR, int NV, int ICG>
__attribute__((always_inline)) inline void tile_group_i16(const uint8_t* const* rows, const int64_t* tap_off,
                                                          int64_t ntaps, int64_t icg, int64_t goff, const int16_t* b16,
                                                          const QGemmParams& p, const PanelU8& e, int64_t m,
                                                          int64_t col) {
  // pair pp of a broadcast qword (or dword: pairs 0 and 1) as int16 in every dword lane:
  // bytes 2 pp, 2 pp + 1 with zero high bytes
  __m256i pick[4];
#pragma GCC unroll 4
  for (int pp = 0; pp < 4; ++pp) pick[pp] = pair_pick(2u * pp, 2u * pp);
  __m256i acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_si256();
  // Channel pair pp of the rows' broadcasts x against B's k-pair at b + 32 pp (its first 8 NV
  // columns): the pair's B and shuffle in registers across the rows. (The empty asm stops GCC from
  // summing a tap's products in a tree, which spilled every accumulator within the tap; it may
  // still keep some accumulators in memory from one tap to the next.)
  auto pair = [&](const __m256i* x, const int16_t* b, int pp) {
    __m256i w[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) w[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32 * pp + 16 * v));
    const __m256i mk = pick[pp];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256i s = _mm256_shuffle_epi8(x[r], mk);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(s, w[v]));
        asm("" : "+x"(acc[r][v]));
      }
    }
  };
  const int64_t ic = ICG > 0 ? ICG : icg;
  const int16_t* b = b16;
  for (int64_t t = 0; t < ntaps; ++t) {
    const int64_t off = tap_off[t] + goff;
    int64_t c = 0;
#pragma GCC unroll 2
    for (; c + 8 <= ic; c += 8, b += 4 * 32) {
      __m256i x[MR];
      broadcast_rows<MR, 8>(rows, off + c, x);
#pragma GCC unroll 4
      for (int pp = 0; pp < 4; ++pp) pair(x, b, pp);
    }
    if (c < ic) {
      __m256i x[MR];
      broadcast_rows<MR, 4>(rows, off + c, x);
      pair(x, b, 0);
      pair(x, b, 1);
      b += 2 * 32;
    }
  }
  uint8_t* out = static_cast<uint8_t*>(p.out);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    uint8_t* o = out + (m + r) * p.ldc + col;
    if constexpr (NV == 2) {
      store_u8x16(panel_u8_vec(p, e, 0, acc[r][0], 0, m + r, col), panel_u8_vec(p, e, 1, acc[r][1], 0, m + r, col), o);
    } else {
      store_u8x8(panel_u8_vec(p, e, 0, acc[r][0], 0, m + r, col), o);
    }
  }
}

// MR rows x groups side by side whose 16 input bytes of a pixel and tap are contiguous at
// rows[r] + tap_off[t] + goff: one 16-byte broadcast per row and tap, two accumulators a row.
//  - Quad false: groups g and g + 1 of 8 input and output channels (b: their two int16 panels).
//    Per channel pair one shuffle spreads g's pair over the low 4 lanes and g + 1's over the high
//    4, against B vectors [g's columns 4 h .. 4 h + 3 | g + 1's] (h = 0, 1): one shuffle per 16
//    multiply-adds, where a group of 8 alone spent one per 8. The epilogue puts each group's 8
//    columns back in order.
//  - Quad true: groups g .. g + 3 of 4 input and output channels (ResNeXt-50 32x4d's and
//    ResNeXt-101 64x4d's first stage; b: their four panels). Accumulator v holds groups g + 2 v
//    (low 4 lanes) and g + 2 v + 1 (high 4): output columns col + 8 v .. col + 8 v + 7 in order.
//    Per channel pair and v one shuffle (each half's group's pair in its 4 lanes) against
//    [g + 2 v's 4 columns | g + 2 v + 1's].
// Output columns col .. col + 15.
template <int MR, bool Quad>
__attribute__((always_inline)) inline void tile_group_halves_i16(const uint8_t* const* rows, const int64_t* tap_off,
                                                                 int64_t ntaps, int64_t goff, const int16_t* const* b,
                                                                 const QGemmParams& p, const PanelU8& e, int64_t m,
                                                                 int64_t col) {
  // step j of a tap: Quad: v = j / 2, pair j % 2; else pair j
  __m256i pick[4];
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    pick[j] = Quad ? pair_pick(8u * (j / 2) + 2u * (j % 2), 8u * (j / 2) + 4u + 2u * (j % 2))
                   : pair_pick(2u * j, 8u + 2u * j);
  }
  __m256i acc[MR][2];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  auto madd = [&](int r, int v, __m256i sh, __m256i w) {
    acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(sh, w));
    asm("" : "+x"(acc[r][v]));
  };
  for (int64_t t = 0; t < ntaps; ++t) {
    const int64_t off = tap_off[t] + goff;
    __m256i x[MR];
    broadcast_rows<MR, 16>(rows, off, x);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256i mk = pick[j];
      if constexpr (Quad) {
        const int v = j / 2;
        const int64_t k = (2 * t + j % 2) * 32;  // the k-pair in each panel
        const __m256i w = halves(b[2 * v] + k, b[2 * v + 1] + k);
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) madd(r, v, _mm256_shuffle_epi8(x[r], mk), w);
      } else {
        const int64_t k = (4 * t + j) * 32;
        const __m256i w0 = halves(b[0] + k, b[1] + k), w1 = halves(b[0] + k + 8, b[1] + k + 8);
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          const __m256i sh = _mm256_shuffle_epi8(x[r], mk);
          madd(r, 0, sh, w0);
          madd(r, 1, sh, w1);
        }
      }
    }
  }
  uint8_t* out = static_cast<uint8_t*>(p.out);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    __m256i c0 = acc[r][0], c1 = acc[r][1];
    if constexpr (!Quad) {  // acc[r][h] = [g's columns 4 h .. | g + 1's]: each group's 8 in order
      c0 = _mm256_permute2x128_si256(acc[r][0], acc[r][1], 0x20);
      c1 = _mm256_permute2x128_si256(acc[r][0], acc[r][1], 0x31);
    }
    store_u8x16(panel_u8_vec(p, e, 0, c0, 0, m + r, col), panel_u8_vec(p, e, 1, c1, 0, m + r, col),
                out + (m + r) * p.ldc + col);
  }
}

// Rows [m0, m1) of every group. The groups run in sets whose input channels share a 64-byte line
// of a pixel (8 groups of 8 channels): a row tile's lines are read from L2 once for the set, and
// the set's weights (2.3 KiB a group for 8 channels and 3 x 3 taps) stay in L1 across the tiles.
template <int NV, int ICG>
void groups_block_i16(const QGemmParams& p, const gemm::PackedB* bs, int64_t ngroups, const gemm::IndirectA& a,
                      int64_t m0, int64_t m1) {
  constexpr int OCG = 8 * NV;
  constexpr int MR = NV == 1 ? 6 : 4;
  constexpr int64_t kSet = 16;
  const int64_t icg = a.seg;
  const int64_t set = std::min<int64_t>(kSet, std::max<int64_t>(1, 64 / icg));
  // Groups of 8 input and output channels run two at a time (tile_group_halves_i16), an odd last
  // one alone.
  constexpr bool kPairs = NV == 1 && ICG == 8;
  constexpr int kPairMR = 4;  // registers: 4 x + 8 accumulators + 2 B + shuffle + product
  PanelU8 e[kSet];
  for (int64_t g0 = 0; g0 < ngroups; g0 += set) {
    const int64_t g1 = std::min(ngroups, g0 + set);
    for (int64_t g = g0; g < g1; ++g) {
      const bool pair = kPairs && (g - g0) % 2 == 0 && g + 1 < g1;
      const int32_t* cs[2] = {bs[g].col_sums, pair ? bs[g + 1].col_sums : bs[g].col_sums + 8};
      e[g - g0] = panel_u8_of(p, cs, g * OCG, pair ? 2 : NV);
    }
    const int64_t np = kPairs ? (g1 - g0) / 2 : 0;  // pairs of the set: groups g0 .. g0 + 2 np
    for (int64_t m = m0; kPairs && m < m1; m += kPairMR) {
      const int h = static_cast<int>(std::min<int64_t>(kPairMR, m1 - m));
      const uint8_t* const* rows = a.rows + (m - m0);
      for (int64_t g = g0; g < g0 + 2 * np; g += 2) {
        const int16_t* b2[2] = {bs[g].data16, bs[g + 1].data16};
        with_rows<kPairMR>(h, [&](auto R) {
          tile_group_halves_i16<R.value, false>(rows, a.tap_off, a.ntaps, g * icg, b2, p, e[g - g0], m, g * OCG);
        });
      }
    }
    for (int64_t m = m0; m < m1 && g0 + 2 * np < g1; m += MR) {
      const int h = static_cast<int>(std::min<int64_t>(MR, m1 - m));
      const uint8_t* const* rows = a.rows + (m - m0);
      for (int64_t g = g0 + 2 * np; g < g1; ++g) {
        with_rows<MR>(h, [&](auto R) {
          tile_group_i16<R.value, NV, ICG>(rows, a.tap_off, a.ntaps, icg, g * icg, bs[g].data16, p, e[g - g0], m,
                                           g * OCG);
        });
      }
    }
  }
}

// Rows [m0, m1) of every group of 4 input and output channels (ngroups % 4 == 0), in sets of 16
// groups (a pixel's 64-byte line).
void groups_block_quad_i16(const QGemmParams& p, const gemm::PackedB* bs, int64_t ngroups, const gemm::IndirectA& a,
                           int64_t m0, int64_t m1) {
  constexpr int MR = 4;  // registers: 4 x + 8 accumulators + B + shuffle + product
  constexpr int64_t kSet = 16;
  PanelU8 e[kSet / 4];
  for (int64_t g0 = 0; g0 < ngroups; g0 += kSet) {
    const int64_t g1 = std::min(ngroups, g0 + kSet);
    for (int64_t g = g0; g < g1; g += 4) {
      int32_t cs[16];  // the four groups' column sums, in output column order
      for (int j = 0; j < 4; ++j) std::memcpy(cs + 4 * j, bs[g + j].col_sums, 4 * sizeof(int32_t));
      const int32_t* csv[2] = {cs, cs + 8};
      e[(g - g0) / 4] = panel_u8_of(p, csv, g * 4, 2);
    }
    for (int64_t m = m0; m < m1; m += MR) {
      const int h = static_cast<int>(std::min<int64_t>(MR, m1 - m));
      const uint8_t* const* rows = a.rows + (m - m0);
      for (int64_t g = g0; g < g1; g += 4) {
        const int16_t* b4[4] = {bs[g].data16, bs[g + 1].data16, bs[g + 2].data16, bs[g + 3].data16};
        with_rows<MR>(h, [&](auto R) {
          tile_group_halves_i16<R.value, true>(rows, a.tap_off, a.ntaps, g * 4, b4, p, e[(g - g0) / 4], m, g * 4);
        });
      }
    }
  }
}

template <int NV>
void groups_block_i16(const QGemmParams& p, const gemm::PackedB* bs, int64_t ngroups, const gemm::IndirectA& a,
                      int64_t m0, int64_t m1) {
  if (a.seg == 8) {
    groups_block_i16<NV, 8>(p, bs, ngroups, a, m0, m1);
  } else if (a.seg == 16) {
    groups_block_i16<NV, 16>(p, bs, ngroups, a, m0, m1);
  } else {
    groups_block_i16<NV, 0>(p, bs, ngroups, a, m0, m1);
  }
}
#endif

#endif

// t[r] = K * a_zp - rowsum(A[m0 + r]) for r < rows (the rowsum only when some b_zp != 0): the
// term of the zero-point algebra that depends on the row (epilogue_row).
#if defined(QPLUGIN_ISA_AVXVNNI)
void row_terms(const QGemmParams& p, int64_t m0, int64_t rows, int32_t* t) {
  const int64_t K = p.b->K;
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t s = 0;
    if (!p.b_zero_points_all_zero) {
      const uint8_t* src = p.a + (m0 + r) * p.lda;
      int64_t k = 0;
      __m256i vsum = _mm256_setzero_si256();
      for (; k + 32 <= K; k += 32) {
        vsum = _mm256_add_epi64(vsum, _mm256_sad_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k)),
                                                      _mm256_setzero_si256()));
      }
      alignas(32) uint64_t part[4];
      _mm256_store_si256(reinterpret_cast<__m256i*>(part), vsum);
      s = static_cast<uint32_t>(part[0] + part[1] + part[2] + part[3]);
      for (; k < K; ++k) s += src[k];
    }
    t[r] = static_cast<int32_t>(static_cast<uint32_t>(K) * static_cast<uint32_t>(p.a_zero_point) - s);
  }
}

// The AVX-VNNI tiles: vpdpbusd on ymm (VEX), u8 activations against the packed int8 quads
// directly (no int16 copy of either side), accumulators in registers, inline assembly
// (GCC spills arrays of __m256i).
//  - tall: up to 6 rows x one panel, 12 accumulators; per quad 2 weight loads and one
//    activation broadcast per row for 12 dot products. Rows of 3 or more.
//  - wide: 1-2 rows x up to 3 panels (batch 1-2 linear, the RNN step): 6 independent
//    accumulator chains per row hide vpdpbusd's latency; the weights stream once.
// acc row r at acc[r * ldacc] (ldacc = 16 tall, 48 wide); zero_init (ZI) starts from 0.
namespace vnni {
constexpr int kTallMR = 6;
constexpr int kWideMR = 2;
constexpr int kWideNV = 3;
constexpr int64_t kWideN = kWideNV * kPanelN;

// The tall tile: for each of nt taps, the MR rows start at base + tap_off[t], lda apart, nq quads
// each; b runs on through the taps. Dense rows are one tap at offset 0; rows read by address
// (conv's indirect A side) one tap per kernel position.
template <int MR, bool ZI>
inline void tall_taps_loop(const uint8_t* base, int64_t lda, const int64_t* tap_off, int64_t nt, int64_t nq,
                           const int8_t* b, int32_t* acc) {
  static_assert(MR >= 1 && MR <= kTallMR, "tall tile rows");
  // a, a3, n: set per tap inside (early-clobbered outputs, never sharing base's register)
  const uint8_t* a;
  const uint8_t* a3;
  const int64_t* tp = tap_off;
  int64_t n;
  asm volatile(
      // clang-format off
      // BEGIN GENERATED avxvnni_tall_taps (scripts/gen_qgemm_asm.py)
      ".if 0 < %c[mr]\n"
      ".if %c[zi]\n"
      "vpxor %%xmm0, %%xmm0, %%xmm0\n"
      "vpxor %%xmm1, %%xmm1, %%xmm1\n"
      ".else\n"
      "vmovdqu 0(%[acc]), %%ymm0\n"
      "vmovdqu 32(%[acc]), %%ymm1\n"
      ".endif\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      ".if %c[zi]\n"
      "vpxor %%xmm2, %%xmm2, %%xmm2\n"
      "vpxor %%xmm3, %%xmm3, %%xmm3\n"
      ".else\n"
      "vmovdqu 64(%[acc]), %%ymm2\n"
      "vmovdqu 96(%[acc]), %%ymm3\n"
      ".endif\n"
      ".endif\n"
      ".if 2 < %c[mr]\n"
      ".if %c[zi]\n"
      "vpxor %%xmm4, %%xmm4, %%xmm4\n"
      "vpxor %%xmm5, %%xmm5, %%xmm5\n"
      ".else\n"
      "vmovdqu 128(%[acc]), %%ymm4\n"
      "vmovdqu 160(%[acc]), %%ymm5\n"
      ".endif\n"
      ".endif\n"
      ".if 3 < %c[mr]\n"
      ".if %c[zi]\n"
      "vpxor %%xmm6, %%xmm6, %%xmm6\n"
      "vpxor %%xmm7, %%xmm7, %%xmm7\n"
      ".else\n"
      "vmovdqu 192(%[acc]), %%ymm6\n"
      "vmovdqu 224(%[acc]), %%ymm7\n"
      ".endif\n"
      ".endif\n"
      ".if 4 < %c[mr]\n"
      ".if %c[zi]\n"
      "vpxor %%xmm8, %%xmm8, %%xmm8\n"
      "vpxor %%xmm9, %%xmm9, %%xmm9\n"
      ".else\n"
      "vmovdqu 256(%[acc]), %%ymm8\n"
      "vmovdqu 288(%[acc]), %%ymm9\n"
      ".endif\n"
      ".endif\n"
      ".if 5 < %c[mr]\n"
      ".if %c[zi]\n"
      "vpxor %%xmm10, %%xmm10, %%xmm10\n"
      "vpxor %%xmm11, %%xmm11, %%xmm11\n"
      ".else\n"
      "vmovdqu 320(%[acc]), %%ymm10\n"
      "vmovdqu 352(%[acc]), %%ymm11\n"
      ".endif\n"
      ".endif\n"
      "test %[nt], %[nt]\n"
      "jz 3f\n"
      "4:\n"
      "mov (%[tp]), %[a]\n"
      "add %[base], %[a]\n"
      "lea (%[a],%[lda],2), %[a3]\n"
      "add %[lda], %[a3]\n"
      "mov %[nq], %[n]\n"
      "test %[n], %[n]\n"
      "jz 5f\n"
      ".p2align 5\n"
      "1:\n"
      "vmovdqu (%[b]), %%ymm12\n"
      "vmovdqu 32(%[b]), %%ymm13\n"
      "prefetcht0 2048(%[b])\n"
      ".if 0 < %c[mr]\n"
      "vpbroadcastd (%[a]), %%ymm14\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm14, %%ymm0\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm14, %%ymm1\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vpbroadcastd (%[a],%[lda],1), %%ymm15\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm15, %%ymm2\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm15, %%ymm3\n"
      ".endif\n"
      ".if 2 < %c[mr]\n"
      "vpbroadcastd (%[a],%[lda],2), %%ymm14\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm14, %%ymm4\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm14, %%ymm5\n"
      ".endif\n"
      ".if 3 < %c[mr]\n"
      "vpbroadcastd (%[a3]), %%ymm15\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm15, %%ymm6\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm15, %%ymm7\n"
      ".endif\n"
      ".if 4 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[lda],1), %%ymm14\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm14, %%ymm8\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm14, %%ymm9\n"
      ".endif\n"
      ".if 5 < %c[mr]\n"
      "vpbroadcastd (%[a3],%[lda],2), %%ymm15\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm15, %%ymm10\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm15, %%ymm11\n"
      ".endif\n"
      "add $4, %[a]\n"
      "add $4, %[a3]\n"
      "add $64, %[b]\n"
      "dec %[n]\n"
      "jnz 1b\n"
      "5:\n"
      "add $8, %[tp]\n"
      "dec %[nt]\n"
      "jnz 4b\n"
      "3:\n"
      ".if 0 < %c[mr]\n"
      "vmovdqu %%ymm0, 0(%[acc])\n"
      "vmovdqu %%ymm1, 32(%[acc])\n"
      ".endif\n"
      ".if 1 < %c[mr]\n"
      "vmovdqu %%ymm2, 64(%[acc])\n"
      "vmovdqu %%ymm3, 96(%[acc])\n"
      ".endif\n"
      ".if 2 < %c[mr]\n"
      "vmovdqu %%ymm4, 128(%[acc])\n"
      "vmovdqu %%ymm5, 160(%[acc])\n"
      ".endif\n"
      ".if 3 < %c[mr]\n"
      "vmovdqu %%ymm6, 192(%[acc])\n"
      "vmovdqu %%ymm7, 224(%[acc])\n"
      ".endif\n"
      ".if 4 < %c[mr]\n"
      "vmovdqu %%ymm8, 256(%[acc])\n"
      "vmovdqu %%ymm9, 288(%[acc])\n"
      ".endif\n"
      ".if 5 < %c[mr]\n"
      "vmovdqu %%ymm10, 320(%[acc])\n"
      "vmovdqu %%ymm11, 352(%[acc])\n"
      ".endif\n"
      // END GENERATED avxvnni_tall_taps
      // clang-format on
      : [a] "=&r"(a), [a3] "=&r"(a3), [b] "+r"(b), [n] "=&r"(n), [tp] "+r"(tp), [nt] "+r"(nt)
      : [base] "r"(base), [lda] "r"(lda), [nq] "r"(nq), [acc] "r"(acc), [mr] "i"(MR), [zi] "i"(ZI ? 1 : 0)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
        "xmm13", "xmm14", "xmm15", "memory", "cc");
}

template <int MR, int NV, bool ZI>
inline void wide_loop(const uint8_t* a, int64_t lda, int64_t nq, const int8_t* b, int64_t pstride, int32_t* acc) {
  static_assert(MR >= 1 && MR <= kWideMR && NV >= 1 && NV <= kWideNV, "wide tile shape");
  int64_t n = nq;
  asm volatile(
      // clang-format off
      // BEGIN GENERATED avxvnni_wide (scripts/gen_qgemm_asm.py)
      ".if (0 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm0, %%xmm0, %%xmm0\n"
      ".else\n"
      "vmovdqu 0(%[acc]), %%ymm0\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm1, %%xmm1, %%xmm1\n"
      ".else\n"
      "vmovdqu 32(%[acc]), %%ymm1\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm2, %%xmm2, %%xmm2\n"
      ".else\n"
      "vmovdqu 64(%[acc]), %%ymm2\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm3, %%xmm3, %%xmm3\n"
      ".else\n"
      "vmovdqu 96(%[acc]), %%ymm3\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm4, %%xmm4, %%xmm4\n"
      ".else\n"
      "vmovdqu 128(%[acc]), %%ymm4\n"
      ".endif\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm5, %%xmm5, %%xmm5\n"
      ".else\n"
      "vmovdqu 160(%[acc]), %%ymm5\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm6, %%xmm6, %%xmm6\n"
      ".else\n"
      "vmovdqu 192(%[acc]), %%ymm6\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (0 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm7, %%xmm7, %%xmm7\n"
      ".else\n"
      "vmovdqu 224(%[acc]), %%ymm7\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm8, %%xmm8, %%xmm8\n"
      ".else\n"
      "vmovdqu 256(%[acc]), %%ymm8\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (1 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm9, %%xmm9, %%xmm9\n"
      ".else\n"
      "vmovdqu 288(%[acc]), %%ymm9\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm10, %%xmm10, %%xmm10\n"
      ".else\n"
      "vmovdqu 320(%[acc]), %%ymm10\n"
      ".endif\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (2 < %c[nv])\n"
      ".if %c[zi]\n"
      "vpxor %%xmm11, %%xmm11, %%xmm11\n"
      ".else\n"
      "vmovdqu 352(%[acc]), %%ymm11\n"
      ".endif\n"
      ".endif\n"
      "test %[n], %[n]\n"
      "jz 3f\n"
      ".p2align 5\n"
      "1:\n"
      "vpbroadcastd (%[a]), %%ymm14\n"
      ".if 1 < %c[mr]\n"
      "vpbroadcastd (%[a],%[lda],1), %%ymm15\n"
      ".endif\n"
      ".if 0 < %c[nv]\n"
      "prefetcht0 1024(%[b])\n"
      "prefetcht1 4096(%[b])\n"
      ".if %c[mr] == 1\n"
      "%{vex%} vpdpbusd (%[b]), %%ymm14, %%ymm0\n"
      "%{vex%} vpdpbusd 32(%[b]), %%ymm14, %%ymm1\n"
      ".else\n"
      "vmovdqu (%[b]), %%ymm12\n"
      "vmovdqu 32(%[b]), %%ymm13\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm14, %%ymm0\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm14, %%ymm1\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm15, %%ymm6\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm15, %%ymm7\n"
      ".endif\n"
      ".endif\n"
      ".if 1 < %c[nv]\n"
      "prefetcht0 1024(%[b],%[ps],1)\n"
      "prefetcht1 4096(%[b],%[ps],1)\n"
      ".if %c[mr] == 1\n"
      "%{vex%} vpdpbusd (%[b],%[ps],1), %%ymm14, %%ymm2\n"
      "%{vex%} vpdpbusd 32(%[b],%[ps],1), %%ymm14, %%ymm3\n"
      ".else\n"
      "vmovdqu (%[b],%[ps],1), %%ymm12\n"
      "vmovdqu 32(%[b],%[ps],1), %%ymm13\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm14, %%ymm2\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm14, %%ymm3\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm15, %%ymm8\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm15, %%ymm9\n"
      ".endif\n"
      ".endif\n"
      ".if 2 < %c[nv]\n"
      "prefetcht0 1024(%[b],%[ps],2)\n"
      "prefetcht1 4096(%[b],%[ps],2)\n"
      ".if %c[mr] == 1\n"
      "%{vex%} vpdpbusd (%[b],%[ps],2), %%ymm14, %%ymm4\n"
      "%{vex%} vpdpbusd 32(%[b],%[ps],2), %%ymm14, %%ymm5\n"
      ".else\n"
      "vmovdqu (%[b],%[ps],2), %%ymm12\n"
      "vmovdqu 32(%[b],%[ps],2), %%ymm13\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm14, %%ymm4\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm14, %%ymm5\n"
      "%{vex%} vpdpbusd %%ymm12, %%ymm15, %%ymm10\n"
      "%{vex%} vpdpbusd %%ymm13, %%ymm15, %%ymm11\n"
      ".endif\n"
      ".endif\n"
      "add $4, %[a]\n"
      "add $64, %[b]\n"
      "dec %[n]\n"
      "jnz 1b\n"
      "3:\n"
      ".if (0 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu %%ymm0, 0(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu %%ymm1, 32(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu %%ymm2, 64(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu %%ymm3, 96(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu %%ymm4, 128(%[acc])\n"
      ".endif\n"
      ".if (0 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu %%ymm5, 160(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu %%ymm6, 192(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (0 < %c[nv])\n"
      "vmovdqu %%ymm7, 224(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu %%ymm8, 256(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (1 < %c[nv])\n"
      "vmovdqu %%ymm9, 288(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu %%ymm10, 320(%[acc])\n"
      ".endif\n"
      ".if (1 < %c[mr]) && (2 < %c[nv])\n"
      "vmovdqu %%ymm11, 352(%[acc])\n"
      ".endif\n"
      // END GENERATED avxvnni_wide
      // clang-format on
      : [a] "+r"(a), [b] "+r"(b), [n] "+r"(n)
      : [lda] "r"(lda), [ps] "r"(pstride), [acc] "r"(acc), [mr] "i"(MR), [nv] "i"(NV), [zi] "i"(ZI ? 1 : 0)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
        "xmm13", "xmm14", "xmm15", "memory", "cc");
}

// acc (= or += with zero_init false) the tiles over columns [k0, k1) of A (a: row 0's column
// k0, k0 % 4 == 0) and of the weight (b: its panel's quad 0): the full quads in place, a tail
// ((k1 - k0) % 4 != 0, only at k1 = K) from a zero-padded copy, so no byte past a row is read (the
// packed weight is zero past K).
template <int MR>
void tall(const uint8_t* a, int64_t lda, int64_t k0, int64_t k1, const int8_t* b, int64_t pstride, bool zero_init,
          int32_t* acc) {
  const int64_t nq = (k1 - k0) / 4;
  const int8_t* bq = b + (k0 / 4) * 4 * kPanelN;
  static constexpr int64_t kOneTap[1] = {0};
  if (zero_init) {
    tall_taps_loop<MR, true>(a, lda, kOneTap, 1, nq, bq, acc);
  } else {
    tall_taps_loop<MR, false>(a, lda, kOneTap, 1, nq, bq, acc);
  }
  if ((k1 - k0) % 4) {
    uint8_t tail[MR * 4] = {};
    for (int r = 0; r < MR; ++r) std::memcpy(tail + 4 * r, a + r * lda + 4 * nq, static_cast<size_t>((k1 - k0) % 4));
    tall_taps_loop<MR, false>(tail, 4, kOneTap, 1, 1, bq + nq * 4 * kPanelN, acc);
  }
  (void)pstride;
}
template <int MR, int NV>
void wide(const uint8_t* a, int64_t lda, int64_t k0, int64_t k1, const int8_t* b, int64_t pstride, bool zero_init,
          int32_t* acc) {
  const int64_t nq = (k1 - k0) / 4;
  const int8_t* bq = b + (k0 / 4) * 4 * kPanelN;
  if (zero_init) {
    wide_loop<MR, NV, true>(a, lda, nq, bq, pstride, acc);
  } else {
    wide_loop<MR, NV, false>(a, lda, nq, bq, pstride, acc);
  }
  if ((k1 - k0) % 4) {
    uint8_t tail[MR * 4] = {};
    for (int r = 0; r < MR; ++r) std::memcpy(tail + 4 * r, a + r * lda + 4 * nq, static_cast<size_t>((k1 - k0) % 4));
    wide_loop<MR, NV, false>(tail, 4, 1, bq + nq * 4 * kPanelN, pstride, acc);
  }
}

// acc (= or += with zero_init false) the tall tile over taps [0, nt) of rows read by address
// (tall_taps_loop; seg % 4 == 0 bytes per tap), b at the first tap's quad 0.
template <int MR>
void tall_taps(const uint8_t* base, int64_t lda, const int64_t* tap_off, int64_t nt, int64_t seg, const int8_t* b,
               bool zero_init, int32_t* acc) {
  if (zero_init) {
    tall_taps_loop<MR, true>(base, lda, tap_off, nt, seg / 4, b, acc);
  } else {
    tall_taps_loop<MR, false>(base, lda, tap_off, nt, seg / 4, b, acc);
  }
}
using TapsFn = void (*)(const uint8_t*, int64_t, const int64_t*, int64_t, int64_t, const int8_t*, bool, int32_t*);
inline TapsFn tall_taps_fn(int h) {
  static constexpr TapsFn kFns[kTallMR] = {&tall_taps<1>, &tall_taps<2>, &tall_taps<3>,
                                           &tall_taps<4>, &tall_taps<5>, &tall_taps<6>};
  return kFns[h - 1];
}

using Fn = void (*)(const uint8_t*, int64_t, int64_t, int64_t, const int8_t*, int64_t, bool, int32_t*);
inline Fn tall_fn(int h) {
  static constexpr Fn kFns[kTallMR] = {&tall<1>, &tall<2>, &tall<3>, &tall<4>, &tall<5>, &tall<6>};
  return kFns[h - 1];
}
inline Fn wide_fn(int h, int nv) {
  static constexpr Fn kFns[kWideMR][kWideNV] = {{&wide<1, 1>, &wide<1, 2>, &wide<1, 3>},
                                                {&wide<2, 1>, &wide<2, 2>, &wide<2, 3>}};
  return kFns[h - 1][nv - 1];
}

// Cache blocking of the tall tiles (the GotoBLAS loop order: rows chunk > panel > K chunk > row
// tile): a chunk of kRowBytes of A stays in L2 across the panels, a panel's K chunk (about
// kKChunk * 16 bytes) stays in L1 across the chunk's row tiles.
constexpr int64_t kRowBytes = 384 * 1024;
constexpr int64_t kKChunk = 1024;

// The row tile heights over `rows` rows: 6-row tiles, 7-11 rows left as two near-equal tiles
// (M = 8: 4 + 4, not 6 + a 2-row tile that loads as many weights per quad as it multiplies).
inline int tall_height(int64_t rem) {
  return static_cast<int>(rem > kTallMR && rem < 2 * kTallMR ? (rem + 1) / 2 : std::min<int64_t>(kTallMR, rem));
}

// Where the tall tiles read A: run(m, h, k0, k1, b, pstride, zero_init, acc) runs the h-row tile
// at row m (counted from the GEMM's row 0) over columns [k0, k1) (tall()'s contract).
// Dense rows: A[m][k] at a[m * lda + k].
struct DenseA {
  const uint8_t* a;
  int64_t lda;
  int64_t chunk() const { return kKChunk; }
  void run(int64_t m, int h, int64_t k0, int64_t k1, const int8_t* b, int64_t pstride, bool zero_init,
           int32_t* acc) const {
    tall_fn(h)(a + m * lda + k0, lda, k0, k1, b, pstride, zero_init, acc);
  }
};
// Rows by address (gemm::IndirectA; K chunks are whole taps). Consecutive output pixels of one
// output row are equally far apart in the input, so a tile within one output row reads its taps
// in place; a tile across two rows gathers its h rows of the chunk's taps first.
struct IndirectRows {
  const gemm::IndirectA& ia;
  int64_t m0;       // the block's first row: ia.rows[0] is row m0
  uint8_t* gather;  // kTallMR * chunk() bytes
  int64_t chunk() const { return std::max<int64_t>(1, kKChunk / ia.seg) * ia.seg; }
  void run(int64_t m, int h, int64_t k0, int64_t k1, const int8_t* b, int64_t pstride, bool zero_init,
           int32_t* acc) const {
    const uint8_t* const* r = ia.rows + (m - m0);
    const std::ptrdiff_t d = h > 1 ? r[1] - r[0] : 0;
    bool even = true;
    for (int i = 2; i < h; ++i) even = even && r[i] - r[i - 1] == d;
    const int64_t t0 = k0 / ia.seg, nt = (k1 - k0) / ia.seg;
    if (even) {
      tall_taps_fn(h)(r[0], static_cast<int64_t>(d), ia.tap_off + t0, nt, ia.seg, b + (k0 / 4) * 4 * kPanelN, zero_init,
                      acc);
      return;
    }
    for (int i = 0; i < h; ++i) {
      for (int64_t t = 0; t < nt; ++t) {
        std::memcpy(gather + i * (k1 - k0) + t * ia.seg, r[i] + ia.tap_off[t0 + t], static_cast<size_t>(ia.seg));
      }
    }
    tall_fn(h)(gather, k1 - k0, k0, k1, b, pstride, zero_init, acc);
  }
};
}  // namespace vnni

// Rows [m0, m1) x columns [n0, n1) on the AVX-VNNI tall tiles (vnni::kRowBytes, vnni::kKChunk), A
// read through `src` (vnni::DenseA / vnni::IndirectRows); t: the rows' zero-point terms.
template <class Src>
void tall_block(const QGemmParams& p, const Src& src, const int32_t* t, int64_t m0, int64_t m1, int64_t n0,
                int64_t n1) {
  const gemm::PackedB& B = *p.b;
  const int64_t K = B.K;
  const int64_t pstride = gemm::padded_k(K) * kPanelN;
  const int64_t rows = m1 - m0;
  const int64_t kc = src.chunk();
  // rows per chunk: a multiple of the 6-row tile, at least one 12-row pair
  const int64_t mc = std::max<int64_t>(12, vnni::kRowBytes / std::max<int64_t>(K, 1) / 6 * 6);
  // accumulators of a whole row chunk (row stride 16) when K runs in chunks; else one tile's
  const int64_t acc_rows = K > kc ? std::min(mc, rows) + vnni::kTallMR : vnni::kTallMR;
  thread_local std::vector<int32_t> accbuf;
  if (static_cast<int64_t>(accbuf.size()) < acc_rows * kPanelN) accbuf.resize(static_cast<size_t>(acc_rows * kPanelN));
  const bool full_u8 = p.kind == OutKind::kU8;
  for (int64_t c0 = m0; c0 < m1; c0 += mc) {
    const int64_t c1 = std::min(m1, c0 + mc);
    for (int64_t n = n0; n < n1; n += kPanelN) {
      const int64_t ncols = std::min<int64_t>(kPanelN, n1 - n);
      const int8_t* bp = B.data + (n / kPanelN) * pstride;
      PanelU8 pe{};
      if (full_u8 && ncols == kPanelN) pe = panel_u8(p, n);
      auto finish = [&](const int32_t* acc, int h, int64_t m) {
        if (full_u8 && ncols == kPanelN) {
          panel_u8_rows(p, pe, acc, h, m, n, t + (m - m0));
        } else {
          for (int r = 0; r < h; ++r) epilogue_row(p, acc + r * kPanelN, m + r, n, ncols, t[m - m0 + r]);
        }
      };
      // K in one chunk: each tile finishes at once; else the chunk's accumulators persist
      const bool one = K <= kc;
      for (int64_t k0 = 0; k0 < K; k0 += kc) {
        const int64_t k1 = std::min(K, k0 + kc);
        for (int64_t m = c0; m < c1;) {
          const int h = vnni::tall_height(c1 - m);
          int32_t* acc = accbuf.data() + (one ? 0 : (m - c0) * kPanelN);
          src.run(m, h, k0, k1, bp, pstride, k0 == 0, acc);
          if (one) finish(acc, h, m);
          m += h;
        }
      }
      if (one) continue;
      for (int64_t m = c0; m < c1;) {
        const int h = vnni::tall_height(c1 - m);
        finish(accbuf.data() + (m - c0) * kPanelN, h, m);
        m += h;
      }
    }
  }
}

// Rows [m0, m1) x columns [n0, n1) on the AVX-VNNI tiles: three or more rows on the tall tiles,
// fewer on wide tiles over 48 columns at a time.
void block_vnni(const QGemmParams& p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const gemm::PackedB& B = *p.b;
  const int64_t K = B.K;
  const int64_t rows = m1 - m0;
  thread_local std::vector<int32_t> tbuf;
  if (static_cast<int64_t>(tbuf.size()) < rows) tbuf.resize(static_cast<size_t>(rows));
  int32_t* t = tbuf.data();
  row_terms(p, m0, rows, t);
  if (rows > vnni::kWideMR) {
    tall_block(p, vnni::DenseA{p.a, p.lda}, t, m0, m1, n0, n1);
    return;
  }
  const int64_t pstride = gemm::padded_k(K) * kPanelN;
  alignas(64) int32_t acc[vnni::kWideMR * vnni::kWideN];
  const int h = static_cast<int>(rows);
  for (int64_t n = n0; n < n1; n += vnni::kWideN) {
    const int64_t ncols = std::min<int64_t>(vnni::kWideN, n1 - n);
    const int nv = static_cast<int>((ncols + kPanelN - 1) / kPanelN);
    vnni::wide_fn(h, nv)(p.a + m0 * p.lda, p.lda, 0, K, B.data + (n / kPanelN) * pstride, pstride, true, acc);
    for (int r = 0; r < h; ++r) epilogue_row(p, acc + r * vnni::kWideN, m0 + r, n, ncols, t[r]);
  }
}

// The same with A given by address (conv's indirect A side; every b_zp 0: no row sums).
void block_vnni_indirect(const QGemmParams& p, const gemm::IndirectA& a, int64_t m0, int64_t m1, int64_t n0,
                         int64_t n1) {
  const int64_t rows = m1 - m0;
  thread_local std::vector<int32_t> tbuf;
  thread_local std::vector<uint8_t> gather;
  if (static_cast<int64_t>(tbuf.size()) < rows) tbuf.resize(static_cast<size_t>(rows));
  vnni::IndirectRows src{a, m0, nullptr};
  if (static_cast<int64_t>(gather.size()) < vnni::kTallMR * src.chunk()) {
    gather.resize(static_cast<size_t>(vnni::kTallMR * src.chunk()));
  }
  src.gather = gather.data();
  const int32_t tk = static_cast<int32_t>(static_cast<uint32_t>(p.b->K) * static_cast<uint32_t>(p.a_zero_point));
  std::fill(tbuf.begin(), tbuf.begin() + rows, tk);
  tall_block(p, src, tbuf.data(), m0, m1, n0, n1);
}
#endif

#if defined(QPLUGIN_GEMM_I16)
// Rows [m0, m1) x columns [n0, n1) on the int16 register tiles (tile_i16_avx2.h): the rows of
// A are widened to int16 once (a per-thread buffer, K padded to even with a zero), then each
// 16-column panel of B's int16 layout runs under every 6-row tile of them (the panel, K * 32
// bytes, stays in L1 / L2 across the tiles).
void block_i16(const QGemmParams& p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const gemm::PackedB& B = *p.b;
  const int64_t K = B.K;
  const int64_t K2 = gemm::padded_k2(K);
  const int64_t rows = m1 - m0;
  thread_local std::vector<int16_t> abuf;
  thread_local std::vector<int32_t> tbuf;
  if (static_cast<int64_t>(tbuf.size()) < rows) tbuf.resize(static_cast<size_t>(rows));
  int32_t* t = tbuf.data();
  // t[r] = K * a_zp - rowsum(A[m0 + r]) (the rowsum only matters when some b_zp != 0)
  auto set_t = [&](int64_t r, uint32_t rowsum) {
    t[r] = static_cast<int32_t>(static_cast<uint32_t>(K) * static_cast<uint32_t>(p.a_zero_point) -
                                (p.b_zero_points_all_zero ? 0u : rowsum));
  };
  const int16_t* a16;
  int64_t lda16;
  if (p.a16 != nullptr) {  // rows already widened by the caller (conv's im2col)
    a16 = p.a16 + m0 * p.lda;
    lda16 = p.lda;
    for (int64_t r = 0; r < rows; ++r) {
      uint32_t s = 0;
      if (!p.b_zero_points_all_zero) {
        for (int64_t k = 0; k < K; ++k) s += static_cast<uint32_t>(a16[r * lda16 + k]);
      }
      set_t(r, s);
    }
  } else {
    if (static_cast<int64_t>(abuf.size()) < rows * K2) abuf.resize(static_cast<size_t>(rows * K2));
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* src = p.a + (m0 + r) * p.lda;
      int16_t* dst = abuf.data() + r * K2;
      int64_t k = 0;
      __m256i vsum = _mm256_setzero_si256();
      for (; k + 16 <= K; k += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k));
        vsum = _mm256_add_epi64(vsum, _mm256_castsi128_si256(_mm_sad_epu8(v, _mm_setzero_si128())));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + k), _mm256_cvtepu8_epi16(v));
      }
      uint32_t s = static_cast<uint32_t>(_mm256_extract_epi64(vsum, 0) + _mm256_extract_epi64(vsum, 1));
      for (; k < K; ++k) {
        dst[k] = src[k];
        s += src[k];
      }
      if (K2 > K) dst[K] = 0;
      set_t(r, s);
    }
    a16 = abuf.data();
    lda16 = K2;
  }
  alignas(64) int32_t acc[i16::kMR * i16::kNR];
  const bool full_u8 = p.kind == OutKind::kU8;
  for (int64_t n = n0; n < n1; n += kPanelN) {
    const int64_t ncols = std::min<int64_t>(kPanelN, n1 - n);
    const int16_t* bp = B.data16 + (n / kPanelN) * K2 * kPanelN;
    PanelU8 pe{};
    if (full_u8 && n1 - n >= kPanelN) pe = panel_u8(p, n);
    for (int64_t m = m0; m < m1;) {
      // 7-11 rows left: two tiles of near-equal height (M = 8: 4 + 4, not 6 + a 2-row tile
      // that loads as many B vectors per k-pair as it has multiply-adds)
      const int64_t rem = m1 - m;
      const int h =
          static_cast<int>(rem > i16::kMR && rem < 2 * i16::kMR ? (rem + 1) / 2 : std::min<int64_t>(i16::kMR, rem));
      i16::tile_fn(h)(a16 + (m - m0) * lda16, lda16, K2 / 2, bp, acc);
      if (full_u8 && ncols == kPanelN) {
        panel_u8_rows(p, pe, acc, h, m, n, t + (m - m0));
      } else {
        for (int r = 0; r < h; ++r) epilogue_row(p, acc + r * i16::kNR, m + r, n, ncols, t[m - m0 + r]);
      }
      m += h;
    }
  }
}
#endif

#if defined(QPLUGIN_ISA_NEON)
// conv's indirect A on the panel tiles (tile_neon.h): the row pointers and tap offsets go to the
// tiles as they are, no gathering; the epilogue is epilogue_row's. Row sums are never needed
// here (b_zero_points_all_zero holds), so t = K * a_zp.
using PanelFn = void (*)(const uint8_t* const*, const int64_t*, int64_t, int64_t, const int8_t*, int32_t*, int64_t);
template <int... I>
constexpr std::array<PanelFn, sizeof...(I)> panel_fns(std::integer_sequence<int, I...>) {
  return {&a64::tile_panel<I + 1, true>...};
}

void block_indirect_a64(const QGemmParams& p, const gemm::IndirectA& ia, int64_t m0, int64_t m1, int64_t n0,
                        int64_t n1) {
  static constexpr std::array<PanelFn, kMaxMR> kFns = panel_fns(std::make_integer_sequence<int, kMaxMR>{});
  const gemm::PackedB& B = *p.b;
  const int64_t pstride = gemm::padded_k(B.K) * kPanelN;
  const int64_t nq = ia.seg / 4;
  const int32_t t = static_cast<int32_t>(static_cast<uint32_t>(B.K) * static_cast<uint32_t>(p.a_zero_point));
  alignas(64) int32_t acc[kTallMR * kTileN];
  for (int64_t n = n0; n < n1; n += kPanelN) {
    const int64_t ncols = std::min<int64_t>(kPanelN, n1 - n);
    const int8_t* b = B.data + (n / kPanelN) * pstride;
    for (int64_t m = m0; m < m1;) {
      const int h = static_cast<int>(std::min<int64_t>(kMaxMR, m1 - m));
      kFns[static_cast<size_t>(h - 1)](ia.rows + (m - m0), ia.tap_off, ia.ntaps, nq, b, acc, kTileN);
      for (int r = 0; r < h; ++r) epilogue_row(p, acc + r * kTileN, m + r, n, ncols, t);
      m += h;
    }
  }
}
#endif

}  // namespace

void qgemm_block(const QGemmParams& p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const gemm::PackedB& B = *p.b;
#if defined(QPLUGIN_ISA_AVXVNNI)
  block_vnni(p, m0, m1, n0, n1);
  return;
#elif defined(QPLUGIN_GEMM_I16)
  if (p.a16 != nullptr || (B.data16 != nullptr && m1 - m0 >= gemm::kI16MinM)) {
    block_i16(p, m0, m1, n0, n1);
    return;
  }
#endif
  const int64_t K = B.K;
#if defined(QPLUGIN_ISA_AVX512)
  if (use_reg_tiles(p, K, m1 - m0)) {
    static constexpr int64_t kNoOffset[1] = {0};
    reg_block(p, RowsDense{p.a + m0 * p.lda, p.lda}, kNoOffset, 1, K, m0, m1, n0, n1);
    return;
  }
#endif
  const int64_t pstride = gemm::padded_k(K) * kPanelN;
  const int32_t azp = p.a_zero_point;
  alignas(64) int32_t acc[kTallMR * kTileN];
  auto run = [&](int64_t m, int h, int64_t n, int64_t ncols) {
    const int nv = static_cast<int>((ncols + kPanelN - 1) / kPanelN);
    const uint8_t* a = p.a + m * p.lda;
    tile_fn(h, nv)(a, p.lda, K, B.data + (n / kPanelN) * pstride, pstride, acc);
    int32_t t[kTallMR];  // K * a_zp - rowsum(A[m + r]) (only used when some b_zp != 0)
    for (int r = 0; r < h; ++r) {
      uint32_t tr = static_cast<uint32_t>(K) * static_cast<uint32_t>(azp);
      if (!p.b_zero_points_all_zero) {
        const uint8_t* row = a + r * p.lda;
#if defined(QPLUGIN_ISA_NEON)
        const uint32_t s = a64::row_sum(row, K);
#else
        uint32_t s = 0;
        for (int64_t k = 0; k < K; ++k) s += row[k];
#endif
        tr -= s;
      }
      t[r] = static_cast<int32_t>(tr);
    }
#if defined(QPLUGIN_ISA_AVX512)
    epilogue_tile(p, acc, h, m, n, ncols, t);
#else
    for (int r = 0; r < h; ++r) epilogue_row(p, acc + r * kTileN, m + r, n, ncols, t[r]);
#endif
  };
  if (m1 - m0 > kMaxMR && m1 - m0 <= kTallMR) {
    // The rows are one tall tile (e.g. M = 8): step through the columns in its own width
    // (48 on AVX-512), so no narrow 8 x 16 remainder tile per 64 columns (its loads are
    // mostly activation broadcasts: 9 loads per 8 dot products).
    constexpr int64_t kTallN = kTallNV * kPanelN;
    for (int64_t n = n0; n < n1; n += kTallN) run(m0, static_cast<int>(m1 - m0), n, std::min<int64_t>(kTallN, n1 - n));
    return;
  }
  for (int64_t n = n0; n < n1; n += kTileN) {
    const int64_t ncols = std::min<int64_t>(kTileN, n1 - n);
    // A strip of at most kTallNV panels (the last one of an N that is no multiple of 64, e.g. a
    // conv with 32 or 96 output channels) runs tall tiles: 8 x 32 is 16 accumulators and 10
    // loads per 16 vpdpbusd, 6 x 32 only 12 and 8 per 12.
    const bool narrow = ncols <= kTallNV * kPanelN;
    for (int64_t m = m0; m < m1;) {
      const int64_t rem = m1 - m;
      // 6-row tiles; a remainder of up to 8 rows is one tall tile, so B is read once more
      // instead of twice (M = 8 runs as one 8-row tile).
      const int h = static_cast<int>(rem <= kTallMR ? rem : narrow ? kTallMR : kMaxMR);
      if (h <= kMaxMR || narrow) {
        run(m, h, n, ncols);
      } else {
        for (int64_t c = 0; c < ncols; c += kTallNV * kPanelN) {
          run(m, h, n + c, std::min<int64_t>(kTallNV * kPanelN, ncols - c));
        }
      }
      m += h;
    }
  }
}

bool qgemm_has_indirect() {
#if defined(QPLUGIN_ISA_AVX512) || defined(QPLUGIN_ISA_AVXVNNI) || defined(QPLUGIN_ISA_NEON)
  return true;
#else
  return false;
#endif
}

bool qgemm_indirect_selects() {
#if defined(QPLUGIN_ISA_AVX512)
  return true;
#else
  return false;
#endif
}

void qgemm_block_indirect(const QGemmParams& p, const gemm::IndirectA& a, int64_t m0, int64_t m1, int64_t n0,
                          int64_t n1) {
#if defined(QPLUGIN_ISA_AVX512)
  if (a.out_rows == nullptr && a.tap_b == nullptr) {
    reg_block(p, RowsInd{a.rows}, a.tap_off, a.ntaps, a.seg, m0, m1, n0, n1);
    return;
  }
  // Selected taps or scattered rows (the one absent filled in as the identity).
  std::vector<int64_t> ident;
  if (a.out_rows == nullptr || a.tap_b == nullptr) {
    ident.resize(static_cast<size_t>(std::max(m1, a.ntaps)));
    for (size_t i = 0; i < ident.size(); ++i) ident[i] = static_cast<int64_t>(i);
  }
  const int64_t* orows = a.out_rows != nullptr ? a.out_rows : ident.data() + m0;
  const int64_t* tapb = a.tap_b != nullptr ? a.tap_b : ident.data();
  reg_block(p, RowsSel{a.rows, orows, tapb}, a.tap_off, a.ntaps, a.seg, m0, m1, n0, n1);
#elif defined(QPLUGIN_ISA_AVXVNNI)
  block_vnni_indirect(p, a, m0, m1, n0, n1);
#elif defined(QPLUGIN_ISA_NEON)
  block_indirect_a64(p, a, m0, m1, n0, n1);
#else
  (void)p;
  (void)a;
  (void)m0;
  (void)m1;
  (void)n0;
  (void)n1;
#endif
}

bool qgemm_has_groups(int64_t groups, int64_t icg, int64_t ocg) {
#if defined(QPLUGIN_ISA_AVX512)
  (void)groups;
  return icg % 4 == 0 && (ocg == 8 || ocg == 16);
#elif defined(QPLUGIN_GEMM_I16)
  return (icg % 4 == 0 && (ocg == 8 || ocg == 16)) || (icg == 4 && ocg == 4 && groups % 4 == 0);
#else
  (void)groups;
  (void)icg;
  (void)ocg;
  return false;
#endif
}

bool qgemm_groups_k4() {
#if defined(QPLUGIN_ISA_AVX512)
  return true;
#else
  return false;
#endif
}

void qgemm_block_groups(const QGemmParams& p, const gemm::PackedB* bs, int64_t ngroups, int64_t ocg, const int8_t* k4,
                        const gemm::IndirectA& a, int64_t m0, int64_t m1) {
#if defined(QPLUGIN_ISA_AVX512)
  if (k4 != nullptr) {
    k4_block(p, a, bs, ngroups, k4, m0, m1);
  } else if (ocg == 8) {
    groups_block<8>(p, a, bs, ngroups, m0, m1);
  } else {
    groups_block<16>(p, a, bs, ngroups, m0, m1);
  }
#elif defined(QPLUGIN_GEMM_I16)
  (void)k4;
  if (ocg == 4) {
    groups_block_quad_i16(p, bs, ngroups, a, m0, m1);
  } else if (ocg == 8) {
    groups_block_i16<1>(p, bs, ngroups, a, m0, m1);
  } else {
    groups_block_i16<2>(p, bs, ngroups, a, m0, m1);
  }
#else
  (void)p;
  (void)bs;
  (void)ngroups;
  (void)ocg;
  (void)k4;
  (void)a;
  (void)m0;
  (void)m1;
#endif
}

void minmax_f32(const float* x, int64_t n, float* mn, float* mx) {
  int64_t i = 0;
  bool nan = false;
  float lo = x[0], hi = x[0];
#if defined(QPLUGIN_ISA_AVX512)
  if (n >= 16) {
    __m512 vlo = _mm512_loadu_ps(x), vhi = vlo;
    __mmask16 bad = 0;
    for (; i + 16 <= n; i += 16) {
      const __m512 v = _mm512_loadu_ps(x + i);
      bad |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      vlo = _mm512_min_ps(vlo, v);
      vhi = _mm512_max_ps(vhi, v);
    }
    nan = bad != 0;
    lo = _mm512_reduce_min_ps(vlo);
    hi = _mm512_reduce_max_ps(vhi);
  }
#elif defined(QPLUGIN_ISA_NEON)
  if (n >= 4) {
    float32x4_t vlo = vld1q_f32(x), vhi = vlo;
    uint32x4_t ordered = vdupq_n_u32(~0u);
    for (; i + 4 <= n; i += 4) {
      const float32x4_t v = vld1q_f32(x + i);
      ordered = vandq_u32(ordered, vceqq_f32(v, v));
      vlo = vminq_f32(vlo, v);
      vhi = vmaxq_f32(vhi, v);
    }
    nan = vminvq_u32(ordered) == 0;
    lo = vminvq_f32(vlo);  // (NaN lanes: the result is NaN below anyway)
    hi = vmaxvq_f32(vhi);
  }
#elif defined(QPLUGIN_ISA_AVX2)
  if (n >= 8) {
    __m256 vlo = _mm256_loadu_ps(x), vhi = vlo, bad = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      vlo = _mm256_min_ps(vlo, v);
      vhi = _mm256_max_ps(vhi, v);
    }
    nan = _mm256_movemask_ps(bad) != 0;
    alignas(32) float l[8], h[8];
    _mm256_store_ps(l, vlo);
    _mm256_store_ps(h, vhi);
    lo = l[0];
    hi = h[0];
    for (int j = 1; j < 8; ++j) {
      lo = l[j] < lo ? l[j] : lo;
      hi = h[j] > hi ? h[j] : hi;
    }
  }
#endif
  for (; i < n; ++i) {
    const float v = x[i];
    if (v != v) nan = true;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  if (nan) lo = hi = __builtin_nanf("");
  *mn = lo;
  *mx = hi;
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
