// Raw-pointer comparator kernels on plain integer data. No ATen. Every
// comparison of represented real values is reduced (cpu/compare.cpp) to an
// exact integer test:
//   tensor-scalar:  out = (lo <= q <= hi) XOR invert       (the threshold mapped onto q's grid)
//   tensor-tensor:  d = key_a(a) - key_b(b);  out = (lo <= d <= hi) XOR invert
//                   with key(q) = q + offset (affine case) or a 256-entry rank table
//                   indexed by the byte value of q (any qparams).
// Output: one byte (0/1) per element (torch.bool storage). Strides in elements;
// vector loops need dense output and dense or broadcast (stride 0) inputs.
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

struct CmpRange {
  int32_t lo, hi;
  bool invert;
};

// Two 8-bit operands. kind_*: 0 = uint8, 1 = int8. Tables (size 256, indexed
// by the raw byte) are used when ta / tb are non-null, else key = q (+ off on a).
struct Cmp2 {
  const void* a;
  int64_t as;
  int kind_a;
  const void* b;
  int64_t bs;
  int kind_b;
  uint8_t* y;
  int64_t ys;
  const int32_t* ta;
  const int32_t* tb;
  const int16_t* ta16;  // the same tables as int16 (ranks < 512), for 16-bit lane lookups
  const int16_t* tb16;
  int32_t off;
  // The qparams the tables were built from: rank order = order of float(q - z) * s (AVX2 compares
  // those floats, which orders exactly as the ranks do).
  float sa, sb;
  int32_t za, zb;
};

// clang-format off
#define QPLUGIN_COMPARE_KERNELS(X)                                                              \
  X(void, cmp_range_u8, (const uint8_t* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const CmpRange& r)) \
  X(void, cmp_range_s8, (const int8_t* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const CmpRange& r))  \
  X(void, cmp_range_s32, (const int32_t* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const CmpRange& r)) \
  X(void, cmp_pair8, (const Cmp2& c, int64_t n, const CmpRange& r))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_COMPARE_KERNELS)

}  // namespace kernels
}  // namespace qplugin
