// Raw-pointer embedding-bag kernel on 8-bit and 4-bit row-wise quantized weights (the rows of
// qplugin::embedding_* / embedding_bag_*; docs/design/embedding.md). No ATen. Argument checks,
// index validation and threading are the caller's (cpu/embedding.cpp).
//
// Weight rows: row r's codes start at data + r * row_bytes; 8-bit rows hold one code a byte,
// 4-bit rows two (element 2j in the low nibble of byte j, 2j + 1 in the high nibble). Its scale
// and bias (float32, or fp16 when `half`) are at qp + r * qp_stride and right after it. The value
// of element j is v = fma(scale, code, bias) (one rounding).
//
// Bag b of [b0, b1) reduces the rows idx[starts[b]], ..., idx[starts[b + 1] - 1] (a pruned row,
// -1, is skipped; see below for other indices outside the table) into out[b * D .. b * D + D):
//   mode 0 (sum):  acc = fma(scale * w, code, acc + bias * w)   (w: psw[i], or 1 without psw)
//   mode 1 (mean): the sum times float(1 / count), count = starts[b + 1] - starts[b]
//   mode 2 (max):  acc = (acc > v) ? acc : v, from the first row; an empty bag gives 0.
// Rows are taken in order and every element's operations are the same on every path, so the
// scalar, AVX2 and AVX-512 paths give identical floats.
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

struct EmbRows {
  const uint8_t* data;
  int64_t row_bytes;
  int64_t D;
  int bits;  // 8 or 4
  const uint8_t* qp;
  int64_t qp_stride;
  bool half;
  int64_t rows;  // rows in the table (the SIMD paths prefetch only from tables larger than L2)
};

// An index outside [0, rows) is never read: -1 with `pruned` is a pruned row, skipped; any other is
// skipped too and embedding_bag_rows returns false (the output is then not meaningful: the caller
// raises). It returns true when every index was a row or a pruned -1.
//
// bag_bounds_ok: s[i] <= s[i + 1] <= n for every i < nbags (s holds nbags + 1 bag starts), in one
// vector pass (the scalar check cost ~3 cycles a bag, 15 us on 20480 bags).
//
// index_range: *lo = min(x[0..n)), *hi = max(x[0..n)) for n >= 1 (the callers' checks of
// compressed_indices_mapping, and their error message once embedding_bag_rows returned false).
// clang-format off
#define QPLUGIN_EMBEDDING_KERNELS(X)                                                              \
  X(bool, embedding_bag_rows, (const EmbRows& w, const int64_t* idx, const int64_t* starts,       \
                               const float* psw, int mode, bool pruned, int64_t b0, int64_t b1,  \
                               float* out))                                                       \
  X(bool, bag_bounds_ok, (const int64_t* s, int64_t nbags, int64_t n))                           \
  X(void, index_range, (const int64_t* x, int64_t n, int64_t* lo, int64_t* hi))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_EMBEDDING_KERNELS)

}  // namespace kernels
}  // namespace qplugin
