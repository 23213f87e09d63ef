"""Measures this machine's u8 x s8 multiply-accumulate peak per core (issue 4).

Compiles a tiny C file (gcc, no -march=native: explicit ISA flags) with loops of
independent register-only chains and times them through ctypes:

  vnni512 : vpdpbusd zmm          (64 u8*s8 MACs / instruction, s32 accumulate)
  vnni256 : vpdpbusd ymm (AVX-VNNI / AVX512VL encoding)
  maddubs : vpmaddubsw + vpmaddwd + vpaddd ymm (32 MACs per triple; what fbgemm's AVX2 path does,
            saturating in int16)
  maddwd  : vpmovsxbw-free vpmaddwd + vpaddd ymm on int16 (16 MACs per pair; our AVX2 path's inner op)

One MAC = 2 ops; GOPS = 2 * MACs / s. Single thread (pin with taskset for stable numbers).

    python scripts/peak_int8.py
"""
import ctypes
import os
import subprocess
import tempfile
import time

SRC = r"""
#include <immintrin.h>
#include <stdint.h>
#define CHAINS 12
__attribute__((target("avx512f,avx512bw,avx512vnni")))
int64_t vnni512(int64_t iters) {
  __m512i acc[CHAINS]; __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x05060708);
  for (int i = 0; i < CHAINS; ++i) acc[i] = _mm512_set1_epi32(i);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < CHAINS; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
    __asm__ volatile("" : "+v"(a), "+v"(b));
  }
  int64_t s = 0; for (int i = 0; i < CHAINS; ++i) s += _mm512_reduce_add_epi32(acc[i]);
  return s;
}
__attribute__((target("avx2,avx512f,avx512vl,avx512vnni")))
int64_t vnni256(int64_t iters) {
  __m256i acc[CHAINS]; __m256i a = _mm256_set1_epi32(0x01020304), b = _mm256_set1_epi32(0x05060708);
  for (int i = 0; i < CHAINS; ++i) acc[i] = _mm256_set1_epi32(i);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < CHAINS; ++i) acc[i] = _mm256_dpbusd_epi32(acc[i], a, b);
    __asm__ volatile("" : "+v"(a), "+v"(b));
  }
  int64_t s = 0; for (int i = 0; i < CHAINS; ++i) s += _mm256_extract_epi32(acc[i], 0);
  return s;
}
__attribute__((target("avx2")))
int64_t maddubs(int64_t iters) {
  __m256i acc[6]; __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(5), one = _mm256_set1_epi16(1);
  for (int i = 0; i < 6; ++i) acc[i] = _mm256_set1_epi32(i);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 6; ++i)
      acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), one));
    __asm__ volatile("" : "+x"(a), "+x"(b));
  }
  int64_t s = 0; for (int i = 0; i < 6; ++i) s += _mm256_extract_epi32(acc[i], 0);
  return s;
}
__attribute__((target("avx2")))
int64_t maddwd(int64_t iters) {
  __m256i acc[CHAINS]; __m256i a = _mm256_set1_epi16(3), b = _mm256_set1_epi16(5);
  for (int i = 0; i < CHAINS; ++i) acc[i] = _mm256_set1_epi32(i);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < CHAINS; ++i) acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(a, b));
    __asm__ volatile("" : "+x"(a), "+x"(b));
  }
  int64_t s = 0; for (int i = 0; i < CHAINS; ++i) s += _mm256_extract_epi32(acc[i], 0);
  return s;
}
"""

# MACs per loop iteration of each kernel
KERNELS = {"vnni512": 12 * 64, "vnni256": 12 * 32, "maddubs": 6 * 32, "maddwd": 12 * 16}


def build():
    d = tempfile.mkdtemp(prefix="qplugin_peak_")
    src = os.path.join(d, "peak.c")
    lib = os.path.join(d, "peak.so")
    with open(src, "w") as f:
        f.write(SRC)
    subprocess.check_call(["gcc", "-O2", "-shared", "-fPIC", src, "-o", lib])
    return ctypes.CDLL(lib)


def cpu_has(flag):
    try:
        with open("/proc/cpuinfo") as f:
            return any(flag in line.split() for line in f if line.startswith("flags"))
    except OSError:
        return False


def measure(fn, macs_per_iter, iters=2_000_000, repeats=7):
    fn.restype = ctypes.c_int64
    fn.argtypes = [ctypes.c_int64]
    fn(iters // 10)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(iters)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * macs_per_iter * iters / best / 1e9


def main():
    lib = build()
    need = {"vnni512": "avx512_vnni", "vnni256": "avx512_vnni", "maddubs": "avx2", "maddwd": "avx2"}
    results = {}
    for name, macs in KERNELS.items():
        if not cpu_has(need[name]):
            print(f"{name:8s}: not supported by this CPU")
            continue
        results[name] = measure(getattr(lib, name), macs)
        print(f"{name:8s}: {results[name]:7.1f} GOPS (u8*s8 MAC = 2 ops), one core")
    return results


if __name__ == "__main__":
    main()
