// How fast one core writes a buffer with 32-byte (AVX2) against 64-byte (AVX-512) stores: the write
// floor under the AVX2 / AVX-512 gap of ops whose output outgrows L2 (dequantize 1M -> 4 MB of float,
// upsample_nearest2d x2 [1,64,112,112] -> 3.2 MB, cat 4x[1,64,56,56] -> 0.8 MB). Nothing of ours is
// called: plain aligned stores of one vector over one buffer, written once untimed and then timed
// (resident in L2 / L3 as far as it fits, as an op's output that the allocator recycles), three
// forms interleaved round by round, best of 30 rounds: 32-byte stores, 64-byte stores, and 32-byte
// stores with a write prefetch (PREFETCHW) 1 KB ahead. Build and run (from the repository root):
//
//   g++ -O2 -std=c++17 -mavx2 -mprfchw scripts/harness/store_width.cpp -o /tmp/store_width
//   taskset -c 0 /tmp/store_width 1 4 16      # buffer sizes, MiB
//
// On Zen 4, AVX2 / AVX-512 / AVX2 + PREFETCHW: 1 MiB 14.3 / 12.9 / 12.1 us, 4 MiB 57-66 /
// 44-52 / 45-51 us, 16 MiB 273 / 235 / 270 us. (The prefetch, tried on buffers last written long
// ago, costs 13% there: not used by the kernels.)
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

__attribute__((noinline)) void store32(uint8_t* p, size_t n, uint8_t b) {
  const __m256i v = _mm256_set1_epi8(static_cast<char>(b));
  for (size_t i = 0; i < n; i += 32) _mm256_store_si256(reinterpret_cast<__m256i*>(p + i), v);
}

__attribute__((noinline, target("avx512f"))) void store64(uint8_t* p, size_t n, uint8_t b) {
  const __m512i z = _mm512_set1_epi32(static_cast<int>(0x01010101u * b));
  for (size_t i = 0; i < n; i += 64) _mm512_store_si512(p + i, z);
}

__attribute__((noinline)) void store32_prefetchw(uint8_t* p, size_t n, uint8_t b) {
  const __m256i v = _mm256_set1_epi8(static_cast<char>(b));
  for (size_t i = 0; i < n; i += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(p + i + 1024), _MM_HINT_ET0);
    _mm256_store_si256(reinterpret_cast<__m256i*>(p + i), v);
    _mm256_store_si256(reinterpret_cast<__m256i*>(p + i + 32), v);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const uint8_t v = 3;
  void (*fs[])(uint8_t*, size_t, uint8_t) = {store32, store64, store32_prefetchw};
  const char* names[] = {"AVX2 32-byte stores", "AVX-512 64-byte stores", "AVX2 + PREFETCHW 1 KB ahead"};
  for (int a = 1; a < std::max(argc, 2); ++a) {
    const size_t mib = argc > 1 ? std::strtoul(argv[a], nullptr, 10) : 4;
    if (mib == 0 || mib > 1024) {
      std::fprintf(stderr, "buffer sizes in MiB: 1 .. 1024\n");
      return 2;
    }
    const size_t n = mib << 20;
    uint8_t* buf = static_cast<uint8_t*>(std::aligned_alloc(4096, n + 2048));  // + the prefetch's reach
    std::memset(buf, 1, n + 2048);
    double best[3] = {1e9, 1e9, 1e9};
    for (int r = 0; r < 30; ++r) {
      for (int f = 0; f < 3; ++f) {
        fs[f](buf, n, v);  // resident before the timed write
        const auto t0 = std::chrono::steady_clock::now();
        fs[f](buf, n, v);
        best[f] = std::min(best[f], std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    }
    std::printf("%zu MiB:", mib);
    for (int f = 0; f < 3; ++f) std::printf("  %s %.1f us", names[f], best[f] * 1e6);
    std::printf("\n");
    std::free(buf);
  }
  return 0;
}
