// Raw-pointer add / mul kernels (tensor-tensor with requantization, and the
// integer transforms behind add_scalar / mul_scalar). No ATen. Threading,
// broadcasting and layout are the caller's (cpu/add.cpp, cpu/mul.cpp).
//
// Numerics (every ISA path computes exactly the scalar loop):
//   add, 8-bit:  v = float(a - za) * fa + float(b - zb) * fb + float(zo)   fa = sa/so, fb = sb/so
//   mul, 8-bit:  v = float((a - za) * (b - zb)) * fm + float(zo)           fm = sa*sb/so
//                y = round_half_even(clamp(v, lo, qmax))   (lo = zo for the relu variants;
//                kernels/gemm/requant.h's requantize with the zero point inside v)
//   qint32:      the same in float64 (scalar loop on every path).
//   add_scalar:  torch's requantize_from_int: y = clamp(zo + lrintf(float(q - zi + c) * m)) (8-bit);
//                qint32 in float64, y = clamp(zo + rint(double(q - zi + c) * m)), m = double
//                (float32 loses up to ~250 steps once |q - zi + c| > 2^24)
// Strides are in elements; the vector loops run when y is dense and each input
// is dense or broadcast (stride 0); other strides take the scalar loop.
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

struct BinaryParams {
  int32_t za, zb, zo;
  float fa, fb;    // add: sa/so, sb/so; mul: fa = sa*sb/so (fb unused)
  double da, db;   // the same multipliers in float64 (qint32)
  int32_t lo, hi;  // output clamp (lo = max(qmin, zo) with relu)
};

struct Strided {
  const void* a;
  int64_t as;
  const void* b;
  int64_t bs;
  void* y;
  int64_t ys;
};

// clang-format off
#define QPLUGIN_ADD_KERNELS(X)                                                                  \
  X(void, add_u8, (const Strided& s, int64_t n, const BinaryParams& p))                        \
  X(void, add_s8, (const Strided& s, int64_t n, const BinaryParams& p))                        \
  X(void, add_s32, (const Strided& s, int64_t n, const BinaryParams& p))                       \
  X(void, mul_u8, (const Strided& s, int64_t n, const BinaryParams& p))                        \
  X(void, mul_s8, (const Strided& s, int64_t n, const BinaryParams& p))                        \
  X(void, mul_s32, (const Strided& s, int64_t n, const BinaryParams& p))                       \
  /* y = clamp(zo + lrintf(float(q - zi + c) * m), lo, hi) (torch's requantize_from_int) */    \
  X(void, add_scalar_requant_u8, (const uint8_t* x, uint8_t* y, int64_t n, int32_t zi, int64_t c, float m, int32_t zo, int32_t lo, int32_t hi)) \
  X(void, add_scalar_requant_s8, (const int8_t* x, int8_t* y, int64_t n, int32_t zi, int64_t c, float m, int32_t zo, int32_t lo, int32_t hi))   \
  X(void, add_scalar_requant_s32, (const int32_t* x, int32_t* y, int64_t n, int32_t zi, int64_t c, double m, int32_t zo, int32_t lo, int32_t hi)) \
  /* y = clamp(k - x, lo, hi): mul_scalar by a negative number (k = qmax + qmin); also relu (k unused when flip=false) */ \
  X(void, flip_clamp_u8, (const uint8_t* x, uint8_t* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi)) \
  X(void, flip_clamp_s8, (const int8_t* x, int8_t* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi))   \
  X(void, flip_clamp_s32, (const int32_t* x, int32_t* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_ADD_KERNELS)

}  // namespace kernels
}  // namespace qplugin
