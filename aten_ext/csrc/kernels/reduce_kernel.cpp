// Compiled once per ISA (kernels/isa.h). argmax scans rows with vector max +
// a vector search for the first index holding it; sums of 8-bit rows use
// SAD (sum of absolute differences against zero) into 64-bit lanes.
#include "kernels/reduce_kernel.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/bytes_simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

// Column sums: 8-bit rows are added into int32 lanes (exact for up to 2^23
// rows per batch), then folded into the int64 sums.
template <typename T>
void sum_mid_plain(const T* x, int64_t n, int64_t len, int64_t stride, int64_t* sums) {
  constexpr int64_t kBatch = sizeof(T) == 1 ? (int64_t{1} << 23) : 1;
  constexpr int64_t kCols = 1024;
  for (int64_t j0 = 0; j0 < len; j0 += kCols) {
    const int64_t w = std::min<int64_t>(kCols, len - j0);
    int64_t total[kCols];
    for (int64_t j = 0; j < w; ++j) total[j] = 0;
    if constexpr (sizeof(T) == 1) {
      int32_t acc[kCols];
      for (int64_t i0 = 0; i0 < n; i0 += kBatch) {
        const int64_t i1 = std::min(n, i0 + kBatch);
        for (int64_t j = 0; j < w; ++j) acc[j] = 0;
        for (int64_t i = i0; i < i1; ++i) {
          const T* row = x + i * stride + j0;
          for (int64_t j = 0; j < w; ++j) acc[j] += row[j];
        }
        for (int64_t j = 0; j < w; ++j) total[j] += acc[j];
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const T* row = x + i * stride + j0;
        for (int64_t j = 0; j < w; ++j) total[j] += row[j];
      }
    }
    for (int64_t j = 0; j < w; ++j) sums[j0 + j] = total[j];
  }
}

// Column sums of 8-bit data in blocks of 8 * kLanes columns (64 on AVX2, 128 on AVX-512) summed in
// 16-bit lanes held in registers across the rows, folded into int32 every 256 rows (256 * 255 <
// 2^16; 256 * [-128, 127] inside int16), where the plain loop kept int32 sums in memory (four bytes
// of L1 traffic each way per input byte). emit(j, a) takes block j's sums as 8 int32 vectors.
// Returns the first column not done (the rest, and everything for n >= 2^23, take the plain loop).
template <typename T, typename Emit>
int64_t mid_blocks(const T* x, int64_t n, int64_t len, int64_t stride, const Emit& emit) {
  int64_t j = 0;
#if QPLUGIN_SIMD
  if constexpr (sizeof(T) == 1) {
    using simd::kLanes;
    constexpr int64_t kB = 8 * kLanes;
    if (n < (int64_t{1} << 23)) {
      for (; j + kB <= len; j += kB) {
        simd::VI a[8];
        bytes::W16 w[4];
        for (int u = 0; u < 4; ++u) w[u] = bytes::zero16(), a[2 * u] = a[2 * u + 1] = simd::set1_i(0);
        int64_t rows = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T* row = x + i * stride + j;
          for (int u = 0; u < 4; ++u) w[u] = bytes::add16(w[u], bytes::load16(row + 2 * kLanes * u));
          if (++rows == 256) {
            for (int u = 0; u < 4; ++u) bytes::fold16<T>(&a[2 * u], &a[2 * u + 1], &w[u]);
            rows = 0;
          }
        }
        for (int u = 0; u < 4; ++u) bytes::fold16<T>(&a[2 * u], &a[2 * u + 1], &w[u]);
        emit(j, a);
      }
    }
  }
#else
  (void)x, (void)n, (void)len, (void)stride, (void)emit;
#endif
  return j;
}

template <typename T>
void sum_mid(const T* x, int64_t n, int64_t len, int64_t stride, int64_t* sums) {
#if QPLUGIN_SIMD
  auto emit = [&](int64_t j, const simd::VI* a) {
    alignas(64) int32_t lanes[simd::kLanes];
    for (int k = 0; k < 8; ++k) {
      simd::storeu_i(lanes, a[k]);
      for (int64_t l = 0; l < simd::kLanes; ++l) sums[j + k * simd::kLanes + l] = lanes[l];
    }
  };
#else
  auto emit = [](int64_t, const void*) {};
#endif
  const int64_t j = mid_blocks(x, n, len, stride, emit);
  if (j < len) sum_mid_plain(x + j, n, len - j, stride, sums + j);
}

// The mean of each column of 8-bit data (n <= kMeanMidMaxN rows), rounded half to even, straight
// from the int32 block sums: s * (1 / n) in float32 (s is exact, |s| < 2^24; the product is within
// |s / n| * 2^-23 <= 2^-15 of s / n), rounded to nearest. Where it lies 2^-11 or more from an
// integer-plus-half it rounds as s / n does; lanes nearer a tie (s / n exactly x.5 included) take
// the integer rule (round_div_even).
template <typename T>
void mean_mid(const T* x, int64_t n, int64_t len, int64_t stride, T* y) {
#if QPLUGIN_SIMD
  using namespace simd;
  const VF inv = set1_f(1.0f / static_cast<float>(n)), zero = set1_f(0.0f);
  auto emit = [&](int64_t j, const VI* a) {
    VI q[8];
    bool near_tie = false;
    for (int k = 0; k < 8; ++k) {
      const VF d = mul_f(to_f(a[k]), inv);
      q[k] = to_i32_round(d);
      const VF e = sub_f(d, to_f(q[k]));
      near_tie |= any_ge(max_f(e, sub_f(zero, e)), 0.5f - 1.0f / 2048);
    }
    if (near_tie) {
      alignas(64) int32_t s[kLanes], r[kLanes];
      for (int k = 0; k < 8; ++k) {
        storeu_i(s, a[k]);
        for (int64_t l = 0; l < kLanes; ++l) r[l] = static_cast<int32_t>(round_div_even(s[l], n));
        q[k] = loadu_i(r);
      }
    }
    store4_q(y + j, q[0], q[1], q[2], q[3]);
    store4_q(y + j + 4 * kLanes, q[4], q[5], q[6], q[7]);
  };
#else
  auto emit = [](int64_t, const void*) {};
#endif
  const int64_t j = mid_blocks(x, n, len, stride, emit);
  if (j < len) {
    std::vector<int64_t> sums(static_cast<size_t>(len - j));
    sum_mid_plain(x + j, n, len - j, stride, sums.data());
    for (int64_t c = j; c < len; ++c) y[c] = static_cast<T>(round_div_even(sums[c - j], n));
  }
}

}  // namespace

void sum_mid_u8(const uint8_t* x, int64_t n, int64_t len, int64_t stride, int64_t* sums) {
  sum_mid(x, n, len, stride, sums);
}
void sum_mid_s8(const int8_t* x, int64_t n, int64_t len, int64_t stride, int64_t* sums) {
  sum_mid(x, n, len, stride, sums);
}
void sum_mid_s32(const int32_t* x, int64_t n, int64_t len, int64_t stride, int64_t* sums) {
  sum_mid(x, n, len, stride, sums);
}
void mean_mid_u8(const uint8_t* x, int64_t n, int64_t len, int64_t stride, uint8_t* y) {
  mean_mid(x, n, len, stride, y);
}
void mean_mid_s8(const int8_t* x, int64_t n, int64_t len, int64_t stride, int8_t* y) { mean_mid(x, n, len, stride, y); }

void argmax_u8(const uint8_t* x, int64_t outer, int64_t n, int64_t inner, uint8_t mask, int64_t* idx) {
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o) {
      const uint8_t* row = x + o * n;
      idx[o] = bytes::first_ge(row, n, mask, bytes::row_max(row, n, mask));
    }
    return;
  }
  std::vector<uint8_t> best(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* base = x + o * n * inner;
    int64_t* out = idx + o * inner;
    for (int64_t j = 0; j < inner; ++j) {
      best[j] = static_cast<uint8_t>(base[j] ^ mask);
      out[j] = 0;
    }
    int64_t j0 = 0;
#if defined(QPLUGIN_ISA_AVX2)
    // 32 columns at a time in byte lanes: the running best key, and the row (1 + its offset in a
    // run of at most 255 rows; 0 = not beaten in this run) that set it; folded into out per run.
    const __m256i vm = _mm256_set1_epi8(static_cast<char>(mask));
    for (; j0 + 32 <= inner; j0 += 32) {
      __m256i bv = bytes::ldb(best.data() + j0);
      for (int64_t i0 = 1; i0 < n; i0 += 255) {
        const int64_t i1 = std::min(n, i0 + 255);
        __m256i at = _mm256_setzero_si256();
        for (int64_t i = i0; i < i1; ++i) {
          const __m256i k = _mm256_xor_si256(bytes::ldb(base + i * inner + j0), vm);
          const __m256i not_gt = _mm256_cmpeq_epi8(_mm256_max_epu8(k, bv), bv);  // k <= best
          at = _mm256_blendv_epi8(_mm256_set1_epi8(static_cast<char>(i - i0 + 1)), at, not_gt);
          bv = _mm256_max_epu8(k, bv);
        }
        alignas(32) uint8_t rel[32];
        bytes::stb(rel, at);
        for (int j = 0; j < 32; ++j) {
          if (rel[j]) out[j0 + j] = i0 + rel[j] - 1;
        }
      }
    }
#elif defined(QPLUGIN_ISA_NEON)
    // The same at 16 columns a step: where a key beats the best, the row's tag replaces it.
    const uint8x16_t vm = vdupq_n_u8(mask);
    for (; j0 + 16 <= inner; j0 += 16) {
      uint8x16_t bv = vld1q_u8(best.data() + j0);
      for (int64_t i0 = 1; i0 < n; i0 += 255) {
        const int64_t i1 = std::min(n, i0 + 255);
        uint8x16_t at = vdupq_n_u8(0);
        for (int64_t i = i0; i < i1; ++i) {
          const uint8x16_t k = veorq_u8(vld1q_u8(base + i * inner + j0), vm);
          at = vbslq_u8(vcgtq_u8(k, bv), vdupq_n_u8(static_cast<uint8_t>(i - i0 + 1)), at);
          bv = vmaxq_u8(k, bv);
        }
        uint8_t rel[16];
        vst1q_u8(rel, at);
        for (int j = 0; j < 16; ++j) {
          if (rel[j]) out[j0 + j] = i0 + rel[j] - 1;
        }
      }
    }
#endif
    for (int64_t i = 1; i < n; ++i) {
      const uint8_t* row = base + i * inner;
      for (int64_t j = j0; j < inner; ++j) {
        const uint8_t k = static_cast<uint8_t>(row[j] ^ mask);
        if (k > best[j]) {
          best[j] = k;
          out[j] = i;
        }
      }
    }
  }
}

void argmax_s32(const int32_t* keys, int64_t outer, int64_t n, int64_t inner, int64_t* idx) {
  std::vector<int32_t> best(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const int32_t* base = keys + o * n * inner;
    int64_t* out = idx + o * inner;
    for (int64_t j = 0; j < inner; ++j) {
      best[j] = base[j];
      out[j] = 0;
    }
    for (int64_t i = 1; i < n; ++i) {
      const int32_t* row = base + i * inner;
      for (int64_t j = 0; j < inner; ++j) {
        if (row[j] > best[j]) {
          best[j] = row[j];
          out[j] = i;
        }
      }
    }
  }
}

void sum_rows_u8(const uint8_t* x, int64_t rows, int64_t n, int64_t* sums) {
  for (int64_t r = 0; r < rows; ++r) sums[r] = bytes::sum_bytes(x + r * n, n, 0);
}

void sum_rows_s8(const int8_t* x, int64_t rows, int64_t n, int64_t* sums) {
  // s = sum(b ^ 0x80) - 128 n: the flipped byte is the value + 128 as unsigned.
  const auto* u = reinterpret_cast<const uint8_t*>(x);
  for (int64_t r = 0; r < rows; ++r) sums[r] = bytes::sum_bytes(u + r * n, n, 0x80) - 128 * n;
}

void sum_rows_s32(const int32_t* x, int64_t rows, int64_t n, int64_t* sums) {
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* row = x + r * n;
    int64_t s = 0;
    for (int64_t i = 0; i < n; ++i) s += row[i];
    sums[r] = s;
  }
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
