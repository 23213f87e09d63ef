// Raw-pointer convolution kernels on plain integer data (uint8 activations,
// int8 weights, int32 accumulators). No ATen. Design: docs/design/conv.md.
//
// Data layout: activations are channels_last (N, D, H, W, C) bytes; a 1-d or
// 2-d convolution is a 3-d one with D = KD = 1 (and H = KH = 1 for 1-d).
//
// Two compute paths:
//  - implicit GEMM: per (image, group, block of output pixels) the pixels'
//    receptive fields are gathered into rows of A (im2col; the 1x1 / stride 1
//    case reads the input in place), then C[m][n] = sum_k A[m][k] * B[n][k]
//    with B the group's packed weight (the GEMM engine's kernels::gemm::PackedWeight).
//    Saturation-free: AVX-512 uses VNNI vpdpbusd (u8 x s8, 4 products summed
//    straight into int32) in conv_gemm / conv_gemm_indirect here; the AVX2 and
//    scalar paths run the engine's qgemm_block (kernels/gemm/qgemm.h) on the im2col
//    rows (AVX2: widened to int16 here, vpmaddwd on int16 x int16). All three
//    compute the exact int32 sum.
//  - depthwise (groups == C, one input and one output channel per group): a
//    direct loop vectorized across channels, (x - x_zp) * (w - w_zp) in int32.
//
// Requantization (the "epilogue"), identical float steps on every path (so all
// paths give bit-identical bytes; the last step is kernels/gemm/requant.h, and the
// engine's kU8 epilogue computes the same v):
//   acc  = exact int32 sum of (x - x_zp) * (w - w_zp)
//   v    = float(acc) * mult[n] + bias[n]            (mult = x_s * w_s[n] / y_s, bias = b[n] / y_s)
//   v   += float(a - a_zp) * add_mult                (conv2d_add: a from the residual tensor)
//   v    = clamp(v, -1024, 1024); y = clamp(round_half_even(v) + y_zp, qmin, qmax)
#pragma once

#include <cstdint>

#include "kernels/gemm/qgemm.h"
#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// Convolution geometry (all dims >= 1; padding >= 0). C = groups * icg, OC = groups * ocg.
struct ConvGeom {
  int64_t C, D, H, W;          // input channels and spatial size
  int64_t OC, OD, OH, OW;      // output channels and spatial size
  int64_t KD, KH, KW;          // kernel
  int64_t SD, SH, SW;          // stride
  int64_t PD, PH, PW;          // padding
  int64_t DD, DH, DW;          // dilation
  int64_t groups, icg, ocg;    // groups, input / output channels per group
  int64_t K() const { return KD * KH * KW * icg; }
};

// Per-call requantization parameters (arrays indexed by output channel of the
// whole convolution unless noted).
struct ConvEpilogue {
  const int32_t* col_const;  // -x_zp * sum_k (w - w_zp), per output channel
  bool col_const_zero;       // every col_const is 0 (x_zp == 0): kernels may skip adding it
  const int32_t* w_zp;       // per output channel, or nullptr when all are 0
  const int32_t* row_sum;    // sum_k A[m][k] per row (only read when w_zp != nullptr)
  const float* mult;         // x_s * w_s / y_s per output channel
  const float* bias;         // b / y_s per output channel
  const uint8_t* add;        // conv2d_add residual (same indexing as the output) or nullptr
  float add_mult;            // a_s / y_s
  int32_t add_zp;
  int32_t y_zp;
  int32_t qmin, qmax;        // 0..255, or y_zp..255 for relu
};

// clang-format off
#define QPLUGIN_CONV_KERNELS(X)                                                                  \
  /* Bytes per element of A rows for this path (1: uint8, 2: int16-widened). */                \
  X(int64_t, conv_a_elem_size, ())                                                             \
  /* Row stride (elements) of A rows for k real columns: padded for the microkernel. */        \
  X(int64_t, conv_a_row_elems, (int64_t k))                                                    \
  /* Gathers rows [m0, m0 + mcount) of A for image x (channels_last) and group g into a     */ \
  /* (row stride kp elements of conv_a_elem_size bytes); out-of-image taps read x_zp,       */ \
  /* columns >= K are 0. row_sum (nullable) gets each row's sum over its K columns.         */ \
  X(void, conv_im2col, (const uint8_t* x, const ConvGeom& g, int64_t group, int64_t m0,        \
                        int64_t mcount, void* a, int64_t kp, int32_t x_zp, int32_t* row_sum))  \
  /* AVX-512 only (the other paths call the engine's qgemm_block; here they do nothing):     */ \
  /* y[m][n] (row stride ldy) for m < mcount, n < ncount: GEMM of A (mcount rows, stride    */ \
  /* kp = padded_k(b.K)) by columns [n0, n0 + ncount) of the group's packed weight b (the    */ \
  /* engine's kernels/gemm PackedB, n0 a multiple of kPanelN) + epilogue. Epilogue arrays    */ \
  /* are offset to column n0 by the caller; ep.row_sum and ep.add are offset to row 0 of     */ \
  /* this block, y to column n0.                                                             */ \
  X(void, conv_gemm, (const void* a, int64_t kp, int64_t mcount, const gemm::PackedB& b,       \
                      int64_t n0, int64_t ncount, const ConvEpilogue& ep, uint8_t* y, int64_t ldy)) \
  /* Indirect GEMM (no im2col; AVX-512 only, conv_has_indirect()): x is one image,        */ \
  /* already padded with x_zp (g: padded D/H/W, zero padding), icg % 4 == 0, b.K == K.     */ \
  /* Output rows [m0, m0 + mcount) for group `group`; y / ep as for conv_gemm.            */ \
  X(bool, conv_has_indirect, ())                                                               \
  X(void, conv_gemm_indirect, (const uint8_t* x, const ConvGeom& g, int64_t group, int64_t m0,  \
                               int64_t mcount, const gemm::PackedB& b, int64_t ncount,          \
                               const ConvEpilogue& ep, uint8_t* y, int64_t ldy))               \
  /* Depthwise (icg == ocg == 1): output rows [r0, r0 + rcount) of one image, a row being   */ \
  /* (od, oh) with all OW pixels. w: taps x C int32, each (w - w_zp) in the low 16 bits,    */ \
  /* high 16 bits zero. y/add: the image's channels_last output / residual.                 */ \
  X(void, conv_depthwise, (const uint8_t* x, const ConvGeom& g, int64_t r0, int64_t rcount,   \
                           const int32_t* w, int32_t x_zp, const ConvEpilogue& ep, uint8_t* y))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_CONV_KERNELS)

} // namespace kernels
} // namespace qplugin
