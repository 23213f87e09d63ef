// Pointwise steps of the dynamically quantized recurrent layers (cpu/rnn.cpp): the
// gate nonlinearities and state updates that follow the two int8 GEMMs of a time
// step, fused into one pass over the gates. Raw float pointers, no ATen types.
//
// Row b of the gates holds G * H floats: the input projection gi (x_t W_ih^T + b_ih)
// and the hidden projection gh (h W_hh^T + b_hh), each laid out as torch's
// nn.LSTM / nn.GRU order their chunks.
//
//   LSTM (G = 4, chunks i, f, g, o):   s = gi + gh
//     c' = sigmoid(s_f) * c + sigmoid(s_i) * tanh(s_g)
//     h' = sigmoid(s_o) * tanh(c')
//   GRU (G = 3, chunks r, z, n):
//     r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z)
//     n = tanh(gi_n + r * gh_n)
//     h' = (1 - z) * n + z * h
//
// sigmoid(x) = 1 / (1 + exp(-x)), tanh(x) = 1 - 2 / (1 + exp(2x)), with one exp
// (Cody-Waite reduction + degree-6 polynomial, |rel err| < 2e-7 on the clamped range
// [-87, 88]) evaluated with the same float operations, in the same order, on every ISA
// path (no FMA): scalar, AVX2 and AVX-512 results are bit-identical. NaN propagates.
//
// c and h are read and written in place (row stride H); the new h is also written to
// out (row stride out_stride), the layer's output at this time step.
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// clang-format off
#define QPLUGIN_RNN_KERNELS(X)                                                                  \
  X(void, lstm_pointwise, (const float* gi, int64_t gi_stride, const float* gh, int64_t rows,    \
                           int64_t H, float* c, float* h, float* out, int64_t out_stride))       \
  X(void, gru_pointwise, (const float* gi, int64_t gi_stride, const float* gh, int64_t rows,     \
                          int64_t H, float* h, float* out, int64_t out_stride))
// clang-format on
QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_RNN_KERNELS)

}  // namespace kernels
}  // namespace qplugin
