"""Measures this machine's u8 x s8 multiply-accumulate peak per core, and read bandwidth.

Compiles a tiny C file (gcc, no -march=native: the loops are inline assembly, with per-function
target attributes only so the asm may name zmm16-31) and times it through ctypes. Every loop keeps its accumulators in
registers by construction (inline asm, no arrays the compiler could spill) and has many
independent dependency chains, so the number is the instruction throughput, not latency:

  vnni512 : vpdpbusd zmm, 16 independent accumulators zmm0-15 (64 u8*s8 MACs / instruction)
  vnni256 : vpdpbusd ymm, 16 independent accumulators (AVX512VL encoding; 32 MACs / instruction)
  avxvnni : vpdpbusd ymm in the VEX encoding of AVX-VNNI (the avxvnni path's instruction; Intel
            Core 12th gen and later, Zen 5), 14 independent accumulators ymm0-13
  maddubs : vpmaddubsw + vpmaddwd(ones) + vpaddd ymm, 6 chains (32 MACs per triple; fbgemm's AVX2
            path, saturating in int16)
  maddwd  : vpmaddwd + vpaddd ymm on int16, 12 chains (16 MACs per pair): the instruction mix of
            our exact AVX2 path, with no loads (its ceiling)
  i16tile : our exact AVX2 register tile itself (kernels/gemm/tile_i16_avx2.h, 6 rows x 16
            columns, int16 operands from L1, broadcasts and loads included; compiled from the
            header with g++ -mavx2): the peak the AVX2 linear / conv rows are measured against

(An earlier version written with intrinsics over arrays of __m512i read 236-343 GOPS for
vnni512 while our GEMM measured 420-474 on one core: GCC's code was not the peak.)

One MAC = 2 ops; GOPS = 2 * MACs / s; best of many short runs on one thread (the least
disturbed slice on a shared machine).

  read    : a plain streaming read (vmovdqu64 loads, 4 independent vpaddq sums) of a buffer of
            the given size, once per thread (1 thread, then 2 threads on disjoint halves):
            the bandwidth a weight-streaming GEMV (batch 1) can reach at best.
  gemv    : the GEMV inner loop of our kernel (same asm text) over 16.8 MB, next to that read.

    python scripts/peak_int8.py            # all of the above
    from peak_int8 import peak_gops        # peak_gops("vnni512") -> GOPS of one core
"""

import atexit
import ctypes
import os
import shutil
import subprocess
import tempfile
import time

SRC = r"""
#include <stdint.h>
#define R16(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define ZDP(i) "vpdpbusd %%zmm17, %%zmm16, %%zmm" #i "\n\t"
#define YDP(i) "vpdpbusd %%ymm17, %%ymm16, %%ymm" #i "\n\t"
#define ZXOR(i) "vpxord %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"
#define ZSUM(i) "vpaddd %%zmm" #i ", %%zmm18, %%zmm18\n\t"

/* 16 independent vpdpbusd chains (zmm0-15 or their ymm halves), a = zmm16, b = zmm17. */
#define VNNI_LOOP(name, DP)                                                                    \
  __attribute__((target("avx512f"))) int64_t name(int64_t iters) {                             \
    int32_t out[16];                                                                           \
    __asm__ volatile(                                                                          \
      "vpbroadcastd %[ca], %%zmm16\n\t"                                                        \
      "vpbroadcastd %[cb], %%zmm17\n\t"                                                        \
      R16(ZXOR)                                                                                \
      "1:\n\t"                                                                                 \
      R16(DP)                                                                                  \
      "dec %[n]\n\t"                                                                           \
      "jnz 1b\n\t"                                                                             \
      "vpxord %%zmm18, %%zmm18, %%zmm18\n\t"                                                   \
      R16(ZSUM)                                                                                \
      "vmovdqu32 %%zmm18, %[o]\n\t"                                                            \
      "vzeroupper\n\t"                                                                         \
      : [n] "+r"(iters), [o] "=m"(out)                                                         \
      : [ca] "r"(0x01020304), [cb] "r"(0x05060708)                                             \
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "cc");         \
    return out[0];                                                                             \
  }
VNNI_LOOP(vnni512, ZDP)
VNNI_LOOP(vnni256, YDP)

/* 14 independent VEX vpdpbusd chains (AVX-VNNI), acc ymm0-13, a = ymm14, b = ymm15 */
#define R14(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
#define VDP(i) "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm" #i "\n\t"
#define YXOR(i) "vpxor %%ymm" #i ", %%ymm" #i ", %%ymm" #i "\n\t"
int64_t avxvnni(int64_t iters) {
  int32_t out[8];
  __asm__ volatile(
    "vmovd %[ca], %%xmm14\n\t" "vpbroadcastd %%xmm14, %%ymm14\n\t"
    "vmovd %[cb], %%xmm15\n\t" "vpbroadcastd %%xmm15, %%ymm15\n\t"
    R14(YXOR)
    "1:\n\t"
    R14(VDP)
    "dec %[n]\n\t"
    "jnz 1b\n\t"
    "vpaddd %%ymm1, %%ymm2, %%ymm1\n\t"
    "vpaddd %%ymm1, %%ymm0, %%ymm0\n\t"
    "vmovdqu %%ymm0, %[o]\n\t"
    "vzeroupper\n\t"
    : [n] "+r"(iters), [o] "=m"(out)
    : [ca] "r"(0x00030003), [cb] "r"(0x00050005)
    : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc");
  return out[0];
}

/* 6 chains: acc ymm0-5, temporaries ymm6-11, a = ymm12, b = ymm13, ones (int16) = ymm14 */
#define MUB(i, t) "vpmaddubsw %%ymm13, %%ymm12, %%ymm" #t "\n\t" \
                  "vpmaddwd %%ymm14, %%ymm" #t ", %%ymm" #t "\n\t" \
                  "vpaddd %%ymm" #t ", %%ymm" #i ", %%ymm" #i "\n\t"
__attribute__((target("avx2"))) int64_t maddubs(int64_t iters) {
  int32_t out[8];
  __asm__ volatile(
    "vmovd %[ca], %%xmm12\n\t" "vpbroadcastd %%xmm12, %%ymm12\n\t"
    "vmovd %[cb], %%xmm13\n\t" "vpbroadcastd %%xmm13, %%ymm13\n\t"
    "vmovd %[c1], %%xmm14\n\t" "vpbroadcastd %%xmm14, %%ymm14\n\t"
    "vpxor %%ymm0, %%ymm0, %%ymm0\n\t" "vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
    "vpxor %%ymm2, %%ymm2, %%ymm2\n\t" "vpxor %%ymm3, %%ymm3, %%ymm3\n\t"
    "vpxor %%ymm4, %%ymm4, %%ymm4\n\t" "vpxor %%ymm5, %%ymm5, %%ymm5\n\t"
    "1:\n\t"
    MUB(0, 6) MUB(1, 7) MUB(2, 8) MUB(3, 9) MUB(4, 10) MUB(5, 11)
    "dec %[n]\n\t"
    "jnz 1b\n\t"
    "vpaddd %%ymm1, %%ymm0, %%ymm0\n\t" "vpaddd %%ymm2, %%ymm0, %%ymm0\n\t"
    "vpaddd %%ymm3, %%ymm0, %%ymm0\n\t" "vpaddd %%ymm4, %%ymm0, %%ymm0\n\t"
    "vpaddd %%ymm5, %%ymm0, %%ymm0\n\t"
    "vmovdqu %%ymm0, %[o]\n\t"
    "vzeroupper\n\t"
    : [n] "+r"(iters), [o] "=m"(out)
    : [ca] "r"(0x03030303), [cb] "r"(0x05050505), [c1] "r"(0x00010001)
    : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
      "xmm11", "xmm12", "xmm13", "xmm14", "cc");
  return out[0];
}

/* 12 chains: acc ymm0-11, temporaries ymm12-13 (renamed), a = ymm14, b = ymm15 */
#define MWD(i, t) "vpmaddwd %%ymm15, %%ymm14, %%ymm" #t "\n\t" \
                  "vpaddd %%ymm" #t ", %%ymm" #i ", %%ymm" #i "\n\t"
__attribute__((target("avx2"))) int64_t maddwd(int64_t iters) {
  int32_t out[8];
  __asm__ volatile(
    "vmovd %[ca], %%xmm14\n\t" "vpbroadcastd %%xmm14, %%ymm14\n\t"
    "vmovd %[cb], %%xmm15\n\t" "vpbroadcastd %%xmm15, %%ymm15\n\t"
    "vpxor %%ymm0, %%ymm0, %%ymm0\n\t" "vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
    "vpxor %%ymm2, %%ymm2, %%ymm2\n\t" "vpxor %%ymm3, %%ymm3, %%ymm3\n\t"
    "vpxor %%ymm4, %%ymm4, %%ymm4\n\t" "vpxor %%ymm5, %%ymm5, %%ymm5\n\t"
    "vpxor %%ymm6, %%ymm6, %%ymm6\n\t" "vpxor %%ymm7, %%ymm7, %%ymm7\n\t"
    "vpxor %%ymm8, %%ymm8, %%ymm8\n\t" "vpxor %%ymm9, %%ymm9, %%ymm9\n\t"
    "vpxor %%ymm10, %%ymm10, %%ymm10\n\t" "vpxor %%ymm11, %%ymm11, %%ymm11\n\t"
    "1:\n\t"
    MWD(0, 12) MWD(1, 13) MWD(2, 12) MWD(3, 13) MWD(4, 12) MWD(5, 13)
    MWD(6, 12) MWD(7, 13) MWD(8, 12) MWD(9, 13) MWD(10, 12) MWD(11, 13)
    "dec %[n]\n\t"
    "jnz 1b\n\t"
    "vpaddd %%ymm1, %%ymm0, %%ymm0\n\t" "vpaddd %%ymm2, %%ymm0, %%ymm0\n\t"
    "vpaddd %%ymm3, %%ymm0, %%ymm0\n\t" "vpaddd %%ymm4, %%ymm0, %%ymm0\n\t"
    "vpaddd %%ymm5, %%ymm0, %%ymm0\n\t" "vpaddd %%ymm6, %%ymm0, %%ymm0\n\t"
    "vpaddd %%ymm7, %%ymm0, %%ymm0\n\t" "vpaddd %%ymm8, %%ymm0, %%ymm0\n\t"
    "vpaddd %%ymm9, %%ymm0, %%ymm0\n\t" "vpaddd %%ymm10, %%ymm0, %%ymm0\n\t"
    "vpaddd %%ymm11, %%ymm0, %%ymm0\n\t"
    "vmovdqu %%ymm0, %[o]\n\t"
    "vzeroupper\n\t"
    : [n] "+r"(iters), [o] "=m"(out)
    : [ca] "r"(0x00030003), [cb] "r"(0x00050005)
    : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc");
  return out[0];
}

/* Streams `bytes` (a multiple of 256) from p, reps times: 4 x 64-byte loads per iteration
   into 4 independent sums. */
__attribute__((target("avx512f"))) int64_t readbw(const void* p, int64_t bytes, int64_t reps) {
  int64_t out[8];
  __asm__ volatile(
    "vpxorq %%zmm0, %%zmm0, %%zmm0\n\t" "vpxorq %%zmm1, %%zmm1, %%zmm1\n\t"
    "vpxorq %%zmm2, %%zmm2, %%zmm2\n\t" "vpxorq %%zmm3, %%zmm3, %%zmm3\n\t"
    "2:\n\t"
    "mov %[p], %%rax\n\t"
    "mov %[b], %%rcx\n\t"
    "shr $8, %%rcx\n\t"
    "1:\n\t"
    "vpaddq (%%rax), %%zmm0, %%zmm0\n\t"
    "vpaddq 64(%%rax), %%zmm1, %%zmm1\n\t"
    "vpaddq 128(%%rax), %%zmm2, %%zmm2\n\t"
    "vpaddq 192(%%rax), %%zmm3, %%zmm3\n\t"
    "add $256, %%rax\n\t"
    "dec %%rcx\n\t"
    "jnz 1b\n\t"
    "dec %[r]\n\t"
    "jnz 2b\n\t"
    "vpaddq %%zmm1, %%zmm0, %%zmm0\n\t" "vpaddq %%zmm3, %%zmm2, %%zmm2\n\t"
    "vpaddq %%zmm2, %%zmm0, %%zmm0\n\t"
    "vmovdqu64 %%zmm0, %[o]\n\t"
    "vzeroupper\n\t"
    : [r] "+r"(reps), [o] "=m"(out)
    : [p] "r"(p), [b] "r"(bytes)
    : "rax", "rcx", "xmm0", "xmm1", "xmm2", "xmm3", "cc", "memory");
  return out[0];
}

/* The batch-1 GEMV inner loop of kernels/gemm/qgemm_kernel.cpp (avx512_gemv, 4 panels = 4 weight
   streams K * 16 bytes apart, 2 quads per step, prefetch 2 KB ahead into L1 and 8 KB into L2),
   over a whole packed K x N weight (K % 8 == 0, N % 64 == 0): its bandwidth next to readbw's. */
__attribute__((target("avx512f"))) int64_t gemv_stream(const char* w, const unsigned char* x, int64_t K, int64_t N) {
  int64_t ps1 = K * 16, ps2 = 2 * ps1, ps3 = 3 * ps1;
  for (int64_t n0 = 0; n0 < N; n0 += 64) {
    const char* b = w + (n0 / 16) * ps1;
    const unsigned char* a = x;
    int64_t n = K / 8;
    __asm__ volatile(
    "1:\n\t"
    "prefetcht0 2048(%[b])\n\t"
    "prefetcht0 2112(%[b])\n\t"
    "prefetcht1 8192(%[b])\n\t"
    "prefetcht1 8256(%[b])\n\t"
    "vmovdqu64 (%[b]), %%zmm24\n\t"
    "vmovdqu64 64(%[b]), %%zmm8\n\t"
    "prefetcht0 2048(%[b],%[ps1],1)\n\t"
    "prefetcht0 2112(%[b],%[ps1],1)\n\t"
    "prefetcht1 8192(%[b],%[ps1],1)\n\t"
    "prefetcht1 8256(%[b],%[ps1],1)\n\t"
    "vmovdqu64 (%[b],%[ps1],1), %%zmm25\n\t"
    "vmovdqu64 64(%[b],%[ps1],1), %%zmm9\n\t"
    "prefetcht0 2048(%[b],%[ps2],1)\n\t"
    "prefetcht0 2112(%[b],%[ps2],1)\n\t"
    "prefetcht1 8192(%[b],%[ps2],1)\n\t"
    "prefetcht1 8256(%[b],%[ps2],1)\n\t"
    "vmovdqu64 (%[b],%[ps2],1), %%zmm26\n\t"
    "vmovdqu64 64(%[b],%[ps2],1), %%zmm10\n\t"
    "prefetcht0 2048(%[b],%[ps3],1)\n\t"
    "prefetcht0 2112(%[b],%[ps3],1)\n\t"
    "prefetcht1 8192(%[b],%[ps3],1)\n\t"
    "prefetcht1 8256(%[b],%[ps3],1)\n\t"
    "vmovdqu64 (%[b],%[ps3],1), %%zmm27\n\t"
    "vmovdqu64 64(%[b],%[ps3],1), %%zmm11\n\t"
    "vpbroadcastd (%[a]), %%zmm28\n\t"
    "vpbroadcastd 4(%[a]), %%zmm29\n\t"
    "vpdpbusd %%zmm24, %%zmm28, %%zmm0\n\t"
    "vpdpbusd %%zmm8, %%zmm29, %%zmm4\n\t"
    "vpdpbusd %%zmm25, %%zmm28, %%zmm1\n\t"
    "vpdpbusd %%zmm9, %%zmm29, %%zmm5\n\t"
    "vpdpbusd %%zmm26, %%zmm28, %%zmm2\n\t"
    "vpdpbusd %%zmm10, %%zmm29, %%zmm6\n\t"
    "vpdpbusd %%zmm27, %%zmm28, %%zmm3\n\t"
    "vpdpbusd %%zmm11, %%zmm29, %%zmm7\n\t"
    "add $8, %[a]\n\t"
    "add $128, %[b]\n\t"
    "dec %[n]\n\t"
    "jnz 1b\n\t"
      : [a] "+r"(a), [b] "+r"(b), [n] "+r"(n) : [ps1] "r"(ps1), [ps2] "r"(ps2), [ps3] "r"(ps3)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "cc", "memory");
  }
  return 0;
}

#include <pthread.h>
struct rb_arg { const char* p; int64_t bytes; int64_t reps; };
static void* rb_run(void* v) {
  struct rb_arg* a = (struct rb_arg*)v;
  readbw(a->p, a->bytes, a->reps);
  return 0;
}
/* readbw on `threads` (<= 16) disjoint parts of p at once (threads created in C: a Python
   thread start would cost more than reading a few MB) */
int64_t readbw_mt(const char* p, int64_t bytes, int64_t reps, int64_t threads) {
  pthread_t th[16];
  struct rb_arg args[16];
  int64_t part = bytes / threads / 256 * 256;
  for (int64_t i = 0; i < threads; ++i) {
    args[i].p = p + i * part; args[i].bytes = part; args[i].reps = reps;
    if (i > 0) pthread_create(&th[i], 0, rb_run, &args[i]);
  }
  rb_run(&args[0]);
  for (int64_t i = 1; i < threads; ++i) pthread_join(th[i], 0);
  return 0;
}
"""

# The exact AVX2 tile, compiled from the kernel header (C++): one call = 6 x 16 x 128 MACs
# from L1-resident operands.
SRC_I16 = r"""
#define QPLUGIN_ISA_AVX2 1
#include <stdint.h>
#include "kernels/isa.h"
#include "kernels/gemm/tile_i16_avx2.h"
extern "C" int64_t i16tile(int64_t iters) {
  alignas(64) static int16_t a[6 * 128], b[128 * 16];
  alignas(64) int32_t acc[6 * 16];
  for (int i = 0; i < 6 * 128; ++i) a[i] = (int16_t)(i % 255);
  for (int i = 0; i < 128 * 16; ++i) b[i] = (int16_t)(i % 256 - 128);
  int64_t s = 0;
  for (int64_t i = 0; i < iters; ++i) {
    qplugin::kernels::avx2::i16::tile<6>(a, 128, 64, b, acc);
    s += acc[i & 63];
  }
  return s;
}
"""
CSRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "aten_ext", "csrc")

# MACs per loop iteration of each kernel
KERNELS = {
    "vnni512": 16 * 64,
    "vnni256": 16 * 32,
    "avxvnni": 14 * 32,
    "maddubs": 6 * 32,
    "maddwd": 12 * 16,
    "i16tile": 6 * 16 * 128,
}
ITERS = {"i16tile": 3000}  # ~0.5 ms per timed run, as the others
NEEDS = {
    "vnni512": "avx512_vnni",
    "vnni256": "avx512_vnni",
    "avxvnni": "avx_vnni",
    "maddubs": "avx2",
    "maddwd": "avx2",
    "i16tile": "avx2",
}

_lib = None
_cache = {}


def build():
    global _lib
    if _lib is None:
        d = tempfile.mkdtemp(prefix="qplugin_peak_")
        atexit.register(shutil.rmtree, d, True)  # the library stays mapped; the files can go
        src = os.path.join(d, "peak.c")
        lib = os.path.join(d, "peak.so")
        with open(src, "w") as f:
            f.write(SRC)
        src16 = os.path.join(d, "i16tile.cpp")
        with open(src16, "w") as f:
            f.write(SRC_I16)
        obj16 = os.path.join(d, "i16tile.o")
        subprocess.check_call(["g++", "-O2", "-std=c++17", "-fPIC", "-mavx2", "-I", CSRC, "-c", src16, "-o", obj16])
        subprocess.check_call(["gcc", "-O2", "-shared", "-fPIC", "-pthread", src, obj16, "-o", lib])
        _lib = ctypes.CDLL(lib)
        for name in list(KERNELS) + ["readbw"]:
            fn = getattr(_lib, name)
            fn.restype = ctypes.c_int64
        for name in KERNELS:
            getattr(_lib, name).argtypes = [ctypes.c_int64]
        _lib.readbw.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
        _lib.gemv_stream.restype = ctypes.c_int64
        _lib.gemv_stream.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
        _lib.readbw_mt.restype = ctypes.c_int64
        _lib.readbw_mt.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    return _lib


def cpu_has(flag):
    try:
        with open("/proc/cpuinfo") as f:
            return any(flag in line.split() for line in f if line.startswith("flags"))
    except OSError:
        return False


def measure(fn, macs_per_iter, iters=20_000, repeats=40):
    # short repeats (~1 ms), best of many: on a shared machine the best slice is the closest
    # to the uncontended core
    fn(iters)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(iters)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * macs_per_iter * iters / best / 1e9


def peak_gops(name="vnni512", repeats=40):
    """One core's measured peak of `name` in GOPS (cached per process); None if unsupported."""
    if name not in _cache:
        if not cpu_has(NEEDS[name]):
            _cache[name] = None
        else:
            _cache[name] = measure(
                getattr(build(), name), KERNELS[name], iters=ITERS.get(name, 20_000), repeats=repeats
            )
    return _cache[name]


def read_bandwidth(nbytes, threads=1, repeats=15):
    """GB/s of a plain streaming read of an nbytes buffer (split over `threads` threads), best of
    `repeats` passes; a pass reads the buffer `reps` times (>= ~8 MB in all, so a thread start
    is noise) and the buffer stays cache-resident if it fits, as the weights of a GEMV called
    in a loop do."""
    lib = build()
    nbytes = nbytes // (256 * threads) * 256 * threads
    buf = ctypes.create_string_buffer(nbytes + 64)
    base = (ctypes.addressof(buf) + 63) // 64 * 64
    part = nbytes // threads
    reps = max(1, (8 << 20) // nbytes)
    ctypes.memset(base, 1, nbytes)
    best = float("inf")
    for _ in range(repeats + 1):
        t0 = time.perf_counter()
        if threads == 1:
            lib.readbw(base, part, reps)
        else:
            lib.readbw_mt(base, nbytes, reps, threads)
        best = min(best, time.perf_counter() - t0)
    return nbytes * reps / best / 1e9


def gemv_vs_read(K=4096, N=4096, rounds=15):
    """GB/s of the GEMV inner loop (gemv_stream) and of readbw over two K x N weight buffers used
    in turns (33.6 MB for 4096 x 4096: more than this L3, as when ours and torch's weights
    alternate in a benchmark), best of `rounds`."""
    lib = build()
    nbytes = K * N
    bufs = []
    for _ in range(2):
        b = ctypes.create_string_buffer(nbytes + 64)
        base = (ctypes.addressof(b) + 63) // 64 * 64
        ctypes.memset(base, 1, nbytes)
        bufs.append((b, base))
    x = ctypes.create_string_buffer(K + 64)
    best = {"gemv": float("inf"), "read": float("inf")}
    for _ in range(rounds):
        for _, base in bufs:
            t0 = time.perf_counter()
            lib.gemv_stream(base, ctypes.addressof(x), K, N)
            best["gemv"] = min(best["gemv"], time.perf_counter() - t0)
            t0 = time.perf_counter()
            lib.readbw(base, nbytes, 1)
            best["read"] = min(best["read"], time.perf_counter() - t0)
    return {k: nbytes / v / 1e9 for k, v in best.items()}


def main():
    results = {}
    for name in KERNELS:
        g = peak_gops(name)
        if g is None:
            print(f"{name:8s}: not supported by this CPU")
            continue
        results[name] = g
        print(f"{name:8s}: {g:7.1f} GOPS (u8*s8 MAC = 2 ops), one core")
    if cpu_has("avx512f"):
        for size in (590_000, 16 << 20):
            for th in (1, 2):
                bw = read_bandwidth(size, th)
                results[f"read_{size}_{th}t"] = bw
                print(f"read    : {bw:7.1f} GB/s, {size / 1e6:.1f} MB buffer, {th} thread(s)")
        g = gemv_vs_read()
        results["gemv_stream"] = g
        print(
            f"gemv    : {g['gemv']:7.1f} GB/s (batch-1 GEMV inner loop, 4096x4096 int8, two buffers in "
            f"turns) vs plain read {g['read']:.1f} GB/s, 1 thread"
        )
    return results


if __name__ == "__main__":
    main()
