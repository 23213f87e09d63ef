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
  X(void, sum_mid_s32, (const int32_t* x, int64_t n, int64_t len, int64_t stride, int64_t* sums))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_REDUCE_KERNELS)

} // namespace kernels
} // namespace qplugin
