// Raw-pointer pieces of the transposed convolution (docs/design/conv.md, "Transposed
// convolution"). The products come from the GEMM engine (kernels/gemm: qgemm_block with kS32
// output, exact int32); these kernels scatter them into the output's int32 accumulators (col2im)
// and requantize finished rows with the engine's one requantize step (kernels/gemm/requant.h).
// Every path adds the same int32 values (wrap-around, order-free) and runs the same float steps,
// so outputs are bit-identical across paths:
//   v = float(acc) * mult[oc] + bias[oc];  y = requantize(v, y_zp, qmin, qmax)
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// One input row of a transposed conv against the (kd, kh) slice of the weight, for one group:
// c[i][kw * ocg + oc] (row stride ldc) holds sum_ic (x - x_zp) * (w - w_zp) of input column
// iw0 + i (i < m). Input column iw, kernel column kw lands on output column
// ow = iw * sw - pw + kw * dw; only ow in [ow0, ow1) are added, into acc[(ow - ow0) * ld_acc + oc].
struct Col2ImRow {
  int64_t m, ldc, iw0;
  int64_t kw, sw, pw, dw;
  int64_t ow0, ow1;
  int64_t ocg, ld_acc;
};

// clang-format off
#define QPLUGIN_CONV_TRANSPOSE_KERNELS(X)                                                            \
  X(void, col2im_add_row_s32, (const int32_t* c, const Col2ImRow& r, int32_t* acc))                  \
  /* y[p * oc + o] = requantize(float(acc[p * oc + o]) * mult[o] + bias[o], y_zp, qmin, qmax) */   \
  X(void, requant_rows_s32, (const int32_t* acc, int64_t pixels, int64_t oc, const float* mult,      \
                             const float* bias, int32_t y_zp, int32_t qmin, int32_t qmax, uint8_t* y))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_CONV_TRANSPOSE_KERNELS)

}  // namespace kernels
}  // namespace qplugin
