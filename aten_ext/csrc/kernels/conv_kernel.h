// Raw-pointer convolution kernels on plain integer data (uint8 activations,
// int8 weights, int32 accumulators). No ATen. Design: docs/design/conv.md.
//
// Data layout: activations are channels_last (N, D, H, W, C) bytes; a 1-d or
// 2-d convolution is a 3-d one with D = KD = 1 (and H = KH = 1 for 1-d).
//
// Two compute paths:
//  - implicit GEMM on the engine (kernels/gemm/qgemm.h), which owns the tiles, the zero-point
//    algebra and the epilogue; conv supplies A: per (image, group, block of output pixels) the
//    pixels' receptive fields are gathered into rows of A here (conv_im2col; AVX2: widened to
//    int16 for its vpmaddwd tiles; the 1x1 / stride 1 case reads the input in place) and run by
//    qgemm_block, or on AVX-512 / AVX-VNNI / aarch64 read in place from a zero-point-padded
//    input through qgemm_block_indirect (row pointers + tap offsets, built by kernels/gemm/driver.cpp). Every path
//    computes the exact int32 sum (no 16-bit saturation).
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
  int64_t C, D, H, W;        // input channels and spatial size
  int64_t OC, OD, OH, OW;    // output channels and spatial size
  int64_t KD, KH, KW;        // kernel
  int64_t SD, SH, SW;        // stride
  int64_t PD, PH, PW;        // padding
  int64_t DD, DH, DW;        // dilation
  int64_t groups, icg, ocg;  // groups, input / output channels per group
  int64_t K() const { return KD * KH * KW * icg; }
};

// Per-call requantization parameters of the depthwise kernel (arrays indexed by channel).
struct ConvEpilogue {
  const float* mult;   // x_s * w_s / y_s per output channel
  const float* bias;   // b / y_s per output channel
  const uint8_t* add;  // conv2d_add residual (same indexing as the output) or nullptr
  float add_mult;      // a_s / y_s
  int32_t add_zp;
  int32_t y_zp;
  int32_t qmin, qmax;  // 0..255, or y_zp..255 for relu
};

// clang-format off
#define QPLUGIN_CONV_KERNELS(X)                                                                  \
  /* Bytes per element of A rows for this path (1: uint8, 2: int16-widened). */                \
  X(int64_t, conv_a_elem_size, ())                                                             \
  /* Row stride (elements) of A rows for k real columns: padded for the microkernel. */        \
  X(int64_t, conv_a_row_elems, (int64_t k))                                                    \
  /* Gathers rows [m0, m0 + mcount) of A for image x (channels_last) and group g into a     */ \
  /* (row stride kp elements of conv_a_elem_size bytes); out-of-image taps read x_zp,       */ \
  /* columns >= K are 0. The engine's qgemm_block runs the GEMM on them.                    */ \
  X(void, conv_im2col, (const uint8_t* x, const ConvGeom& g, int64_t group, int64_t m0,        \
                        int64_t mcount, void* a, int64_t kp, int32_t x_zp))                    \
  /* Depthwise (icg == ocg == 1): output rows [r0, r0 + rcount) of one image, a row being   */ \
  /* (od, oh) with all OW pixels. w: taps x C int32, each (w - w_zp) in the low 16 bits,    */ \
  /* high 16 bits zero; wpk: w in this path's depthwise layout (conv_depthwise_pack), or    */ \
  /* nullptr where there is none. y/add: the image's channels_last output / residual.       */ \
  X(void, conv_depthwise, (const uint8_t* x, const ConvGeom& g, int64_t r0, int64_t rcount,   \
                           const int32_t* w, const int32_t* wpk, int32_t x_zp,                \
                           const ConvEpilogue& ep, uint8_t* y))                               \
  /* The int32 count of this path's depthwise weight layout for KR = KD * KH kernel rows of */ \
  /* KW taps and C channels (0: the path has none, or not for this KW).                     */ \
  X(int64_t, conv_depthwise_packed_size, (int64_t KR, int64_t KW, int64_t C))                 \
  /* Fills out (conv_depthwise_packed_size values) from w (as conv_depthwise's); false: the */ \
  /* layout cannot hold these weights (some w - w_zp outside int8), conv_depthwise then     */ \
  /* takes wpk = nullptr.                                                                   */ \
  X(bool, conv_depthwise_pack, (const int32_t* w, int64_t KR, int64_t KW, int64_t C, int32_t* out))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS_DOT(QPLUGIN_CONV_KERNELS)

}  // namespace kernels
}  // namespace qplugin
