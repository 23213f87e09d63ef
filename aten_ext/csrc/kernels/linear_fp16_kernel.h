// Raw-pointer kernel of the fp16 dynamic linear (qplugin::linear_dynamic_fp16 and the fp16
// recurrent layers): float32 activations times float16 weights, float32 accumulation. No ATen;
// argument checks and threading are the caller's (cpu/linear_fp16.cpp).
//
// Packed weight: the [N, K] fp16 matrix in panels of 16 output columns, panel p holding
// w[16 p + j][k] at packed[(p * K + k) * 16 + j] (columns past N are zero).
//
// For each output (m, n) in rows [0, M) and panels [p0, p1):
//   acc = 0;  for k = 0 .. K-1:  acc = fma(x[m][k], float(w[n][k]), acc)     (one rounding each)
//   y   = acc + bias[n]   (no addition without bias);   relu: y = (y < 0) ? 0 : y  (NaN stays)
// Every path performs exactly these float operations in this order (the vector paths keep one
// output per lane and broadcast x[m][k]; the scalar path calls fmaf), so the scalar, AVX2 and
// AVX-512 results are bit-identical. The error bound of that order (test/reference.py,
// linear_fp16_tolerance): |y - exact| <= gamma(K + 1) * (sum_k |x w| + |bias|), gamma(n) = n u / (1 - n u),
// u = 2^-24, against the exact sum with the fp16-rounded weights.
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

constexpr int64_t kFp16Panel = 16;  // output columns per packed panel

// clang-format off
#define QPLUGIN_LINEAR_FP16_KERNELS(X)                                                             \
  X(void, linear_fp16_f32, (const float* x, int64_t ldx, int64_t M, int64_t K, const uint16_t* packed, \
                            int64_t N, int64_t p0, int64_t p1, const float* bias, bool relu, float* y, \
                            int64_t ldy))
// clang-format on
QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_LINEAR_FP16_KERNELS)

}  // namespace kernels
}  // namespace qplugin
