// Raw-pointer quantized softmax on plain integer data. No ATen.
// Threading is the caller's (cpu/softmax.cpp).
//
// Layout: element (o, d, i) of x / y sits at (o * dim + d) * stride + i, for
// o < outer, d < dim (the softmax axis), i < count <= stride. Per (o, i):
//   y = clamp(round_half_even(exp(x_d - x_max) / sum_d exp(x_d - x_max) / out_scale) + out_zp)
// in float64, with x = (q - in_zp) * in_scale; exp(x_d - x_max) depends only on
// q_max - q_d, so 8-bit inputs read it from a 256-entry table.
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

struct SoftmaxSpec {
  double in_scale;
  const double* exp_table;  // 8-bit: exp_table[k] = exp(-k * in_scale), k = 0..255; int32: unused
  double out_scale;
  int32_t out_zp;
};

// clang-format off
#define QPLUGIN_SOFTMAX_KERNELS(X)                                                                   \
  X(void, softmax_u8, (const uint8_t* x, uint8_t* y, int64_t outer, int64_t dim, int64_t count, int64_t stride, const SoftmaxSpec* spec)) \
  X(void, softmax_s8, (const int8_t* x, int8_t* y, int64_t outer, int64_t dim, int64_t count, int64_t stride, const SoftmaxSpec* spec))   \
  X(void, softmax_s32, (const int32_t* x, int32_t* y, int64_t outer, int64_t dim, int64_t count, int64_t stride, const SoftmaxSpec* spec))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_SOFTMAX_KERNELS)

}  // namespace kernels
}  // namespace qplugin
