// Raw-pointer sort / topk kernels on plain integer data. No ATen.
//
// Everything works on ORDER KEYS, ascending:
//  - 8-bit data: key = byte ^ mask. mask 0x00 (quint8 ascending), 0x80 (qint8
//    ascending), 0xFF / 0x7F (the same, descending). For per-tensor data with
//    a positive scale the real value (q - zp) * scale is strictly increasing in q,
//    so the key order is the exact real-value order, and a stable counting sort on
//    keys is torch.sort(stable=True) on the dequantized tensor wherever dequantize
//    is exact.
//  - 32-bit keys: qint32 data orders by q itself (exactly, also where float32
//    dequantize would round distinct q to equal floats); descending = ~key.
// Threading is the caller's (cpu/sort.cpp).
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// clang-format off
#define QPLUGIN_SORT_KERNELS(X)                                                                   \
  /* counts[key] += #elements of x[0:n) with that key (256 counters) */                         \
  X(void, hist_u8, (const uint8_t* x, int64_t n, uint8_t mask, int64_t* counts))               \
  /* idx[cursor[key]++] = base + i, in order of i (stable counting-sort scatter) */             \
  X(void, scatter_u8, (const uint8_t* x, int64_t n, uint8_t mask, int64_t base, int64_t* cursor, int64_t* idx)) \
  /* rows x n, row-major: stable ascending sort of each row by key; values optional */         \
  X(void, sort_rows_u8, (const uint8_t* x, int64_t rows, int64_t n, uint8_t mask, uint8_t* values, int64_t* idx)) \
  /* The k LARGEST keys of x[0:n), keys descending, ties by lowest index */                     \
  X(void, topk_u8, (const uint8_t* x, int64_t n, int64_t k, uint8_t mask, uint8_t* values, int64_t* idx)) \
  /* rows x n keys: stable ascending sort of each row (indices only) */                         \
  X(void, sort_rows_s32, (const int32_t* keys, int64_t rows, int64_t n, int64_t* idx))         \
  /* indices of the k largest keys, keys descending, ties by lowest index */                    \
  X(void, topk_s32, (const int32_t* keys, int64_t n, int64_t k, int64_t* idx))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_SORT_KERNELS)

}  // namespace kernels
}  // namespace qplugin
