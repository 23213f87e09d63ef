// Raw-pointer kernels for cat with requantization. No ATen. A block is `rows`
// runs of `cols` elements, source rows `xs` apart, destination rows `ys` apart.
//   8-bit:   y = quantize_val8(float(q - zx) * sx, inv_so, zo)       (dequantize, then quantize:
//            kernels/quantize_math.h; inv_so = inv_scale_of(output scale))
//   qint32:  y = clamp(nearbyint(double(q - zx) * sx_d / so_d) + zo)  (exact inputs: float32 would
//            round q - zx once |q - zx| > 2^24, ~150 steps of drift; within 1 step)
//   then y = max(y, lo) (lo = zo for cat_relu, qmin otherwise).
// Same-qparams inputs are plain copies (cpu/cat.cpp); relu_rows clamps those.
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

struct CatRequant {
  float sx;
  int32_t zx;
  float inv_so;
  int32_t zo;
  int32_t lo;
  double sx_d;  // qint32: the input and output scales as given
  double so_d;
};

// A non-decreasing 256-entry byte table written as 16-bit fixed-point arithmetic (AVX2 has no
// 256-entry byte lookup; this is 13 vector ops per 32 bytes). With u = x ^ flip:
//   z = sat16(((u << 8) * m >> 16) + b)      (unsigned 16-bit saturating add, 0 <= m < 2^16)
//   y = (max(min(z >> s, 255), lo) + c(u)) ^ flip     (1 <= s <= 8)
// where c(u) = 0 for an exact fit, and otherwise bit u & 7 of corr[u >> 3]: a table that no
// formula gives exactly (float rounding of near-ties, e.g. decimal scale ratios 5/6 and 7/6) is
// one formula that is at most one step low, plus a 256-bit map of the bytes one step up (10 more
// vector ops per 32 bytes: three VPSHUFB lookups). cat_fit_affine8 finds m, b, s (and corr)
// for a table and checks the result on all 256 bytes, so a fit gives exactly the table's bytes.
struct ByteAffine {
  int32_t m, b, s;
  uint8_t flip, lo;
  bool corrected;    // corr is in use
  uint8_t corr[32];  // bit u & 7 of corr[u >> 3]: c(u)
};

// clang-format off
#define QPLUGIN_CAT_KERNELS(X)                                                                  \
  X(void, cat_requant_u8, (const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols, const CatRequant& p)) \
  X(void, cat_requant_s8, (const int8_t* x, int64_t xs, int8_t* y, int64_t ys, int64_t rows, int64_t cols, const CatRequant& p))   \
  X(void, cat_requant_s32, (const int32_t* x, int64_t xs, int32_t* y, int64_t ys, int64_t rows, int64_t cols, const CatRequant& p)) \
  /* y = max(x, lo) */                                                                          \
  X(void, cat_relu_u8, (const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo)) \
  X(void, cat_relu_s8, (const int8_t* x, int64_t xs, int8_t* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo))   \
  X(void, cat_relu_s32, (const int32_t* x, int64_t xs, int32_t* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo)) \
  /* 8-bit requantize as a table: table[b] = the scalar rule on byte b (bit pattern of the u8/s8 value) */ \
  X(void, cat_requant_table8, (const CatRequant& p, bool is_signed, uint8_t* table))              \
  /* y = table[x] on bytes (use_vbmi: AVX-512 VBMI lookups; only on CPUs that have it) */       \
  X(void, cat_lut8, (const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols, const uint8_t* table, bool use_vbmi)) \
  /* a ByteAffine equal to `table` (a cat_requant_table8 table; lo: the output clamp as an integer, */ \
  /* slope: sx / so); false when none is found */                                               \
  X(bool, cat_fit_affine8, (const uint8_t* table, bool is_signed, int32_t lo, double slope, ByteAffine* f)) \
  /* y = f(x) on bytes */                                                                       \
  X(void, cat_affine8, (const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols, const ByteAffine& f)) \
  /* plain copy of `rows` runs of `bytes` bytes (short runs: full-width vector moves) */        \
  X(void, cat_copy_rows, (const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t bytes)) \
  /* all parts plain copies of short rows: row by row, part p's `bytes[p]` from x[p] (rows bytes[p] apart) */ \
  /* to y + yoff[p], so the output is written in order */                                    \
  X(void, cat_interleave_rows, (const uint8_t* const* x, const int64_t* bytes, const int64_t* yoff, int64_t parts, uint8_t* y, int64_t ys, int64_t rows))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_CAT_KERNELS)

}  // namespace kernels
}  // namespace qplugin
