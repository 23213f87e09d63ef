// Raw-pointer reduction kernels (argmax / argmin / sums) on plain integer
// data. No ATen. Data is viewed as [outer, n, inner] (reduce over n).
// argmax works on the same order keys as kernels/sort_kernel.h: 8-bit key =
// byte ^ mask (argmin: mask ^ 0xFF), 32-bit keys = the qint32 value (argmin: ~key).
// Ties: the first (lowest) index, as torch.argmax documents.
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// clang-format off
#define QPLUGIN_REDUCE_KERNELS(X)                                                                 \
  X(void, argmax_u8, (const uint8_t* x, int64_t outer, int64_t n, int64_t inner, uint8_t mask, int64_t* idx)) \
  X(void, argmax_s32, (const int32_t* keys, int64_t outer, int64_t n, int64_t inner, int64_t* idx))          \
  /* sums[r] = sum of row r (rows x n, row-major), exact in int64 */                              \
  X(void, sum_rows_u8, (const uint8_t* x, int64_t rows, int64_t n, int64_t* sums))              \
  X(void, sum_rows_s8, (const int8_t* x, int64_t rows, int64_t n, int64_t* sums))               \
  X(void, sum_rows_s32, (const int32_t* x, int64_t rows, int64_t n, int64_t* sums))              \
  /* sums[j] = sum over i < n of x[i * stride + j], j < len (reduce a middle dim) */            \
  X(void, sum_mid_u8, (const uint8_t* x, int64_t n, int64_t len, int64_t stride, int64_t* sums))  \
  X(void, sum_mid_s8, (const int8_t* x, int64_t n, int64_t len, int64_t stride, int64_t* sums))   \
  X(void, sum_mid_s32, (const int32_t* x, int64_t n, int64_t len, int64_t stride, int64_t* sums))  \
  /* y[j] = round_div_even(sum over i < n of x[i * stride + j], n), j < len; n <= kMeanMidMaxN */ \
  X(void, mean_mid_u8, (const uint8_t* x, int64_t n, int64_t len, int64_t stride, uint8_t* y))   \
  X(void, mean_mid_s8, (const int8_t* x, int64_t n, int64_t len, int64_t stride, int8_t* y))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_REDUCE_KERNELS)

// s / count rounded half to even, exact (count > 0): the quantized mean's rule.
inline int64_t round_div_even(int64_t s, int64_t count) {
  int64_t q = s / count, rem = s % count;
  if (rem < 0) {
    rem += count;
    q -= 1;
  }
  return q + static_cast<int64_t>((2 * rem > count) | ((2 * rem == count) & (q & 1)));
}

// mean_mid's largest n: 8-bit sums of up to 65536 rows are below 2^24, exact in float32.
constexpr int64_t kMeanMidMaxN = 65536;

}  // namespace kernels
}  // namespace qplugin
