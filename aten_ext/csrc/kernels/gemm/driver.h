// The int8 matmul driver: the blocking, the threads (at::parallel_for) and the scratch buffers of
// every GEMM-shaped op. Callers describe a problem (where the rows of A come from, the packed B of
// each group, one epilogue as QGemmParams fields) and the path to run it on; the driver cuts it
// into blocks and runs each block with the path's qgemm_block / qgemm_block_indirect
// (kernels/gemm/qgemm.h). Compiled once (not per ISA); torch-free except at::parallel_for /
// at::get_num_threads. Design: docs/design/gemm.md ("The driver").
//
// Who describes what:
//  - linear, dynamic linear, the RNN layers: Problem with conv == nullptr: dense A (p.a, p.lda
//    or p.a16) of p.M rows against *p.b (qgemm() is that call on the active path).
//  - conv 1d / 2d / 3d (not depthwise): Problem with a ConvA: images x groups GEMMs whose rows
//    are the output pixels of an image, read in place (1x1, stride 1, no padding), gathered by
//    the path's conv_im2col into a per-thread buffer, or read through row pointers into an
//    x_zp-padded copy of the input (IndirectA), which the driver makes.
//  - depthwise conv (icg == ocg == 1): DepthwiseProblem: per image, output rows (od, oh) of all
//    OW pixels and C channels, run by the path's conv_depthwise on its packed taps.
//  - conv_transpose 1d / 2d / 3d: Col2ImProblem: per output row and column range, dense-A GEMMs
//    of input rows (kS32) scattered by col2im into int32 accumulators, requantized per row.
#pragma once

#include <cstdint>

#include "kernels/conv_kernel.h"
#include "kernels/dispatch.h"
#include "kernels/gemm/qgemm.h"

namespace qplugin {
namespace kernels {
namespace gemm {

// How a convolution's rows of A are read.
enum class ConvAMode : int {
  kInPlace = 0,  // 1x1, stride 1, no padding, one group, K = C: row m is x + m * C
  kIm2col = 1,   // conv_im2col rows (kp elements of elem bytes; AVX2: int16) in a per-thread buffer
  kIndirect = 2  // row pointers + tap offsets into an x_zp-padded copy of x (qgemm_block_indirect)
};

// The A side of a convolution: `images` channels_last images x (N, D, H, W, C bytes), geometry
// g; per image and group a GEMM of M = OD * OH * OW rows (output pixels) by K = the group's
// receptive field.
struct ConvA {
  const uint8_t* x = nullptr;
  ConvGeom g{};
  int64_t images = 0;
  ConvAMode mode = ConvAMode::kIm2col;
  int64_t kp = 0;    // A row length in elements (kIm2col: conv_a_row_elems(K); kInPlace: C)
  int64_t elem = 1;  // bytes per A element (conv_a_elem_size: 1, or 2 for AVX2's int16 rows)
  // kIndirect, stem convs (icg % 4 != 0, one group, dilation_w 1): each kernel row's KW * C
  // bytes read as one tap of s4 = round_up(KW * C, 4) bytes against rows_b (the zero-padded
  // packed_rows() weight) instead of the group's weight.
  bool rows_mode = false;
  int64_t s4 = 0;
  const PackedB* rows_b = nullptr;
};

struct Problem {
  Isa isa = Isa::kScalar;  // the path of every kernel call (read once per op by the caller)
  // The epilogue (kind, multipliers, bias, zero points, clamp, residual, out / ldc) and, without
  // conv, the dense A and B: p.M rows of p.a (p.lda) or p.a16 against *p.b.
  // With conv: p.M, p.a, p.a16, p.lda and p.b are the driver's; group gi runs against b_groups[gi]
  // with the per-column arrays (b_zero_points, multipliers, bias) from column gi * ocg, and image
  // n's output / residual start at p.out / p.add + n * M * ldc (ldc, ld_add: OC).
  QGemmParams p;
  const ConvA* conv = nullptr;
  const PackedB* b_groups = nullptr;  // conv.g.groups entries (with conv)
};

// Runs the problem: blocks, threads, scratch buffers.
void run(const Problem& pr);

// run() of a dense-A problem on the active path (kernels/dispatch.h, read once per call).
void qgemm(const QGemmParams& p);

// The input side of a transposed or depthwise convolution: `images` channels_last images x (g:
// its C, D, H, W input and OC, OD, OH, OW output sizes, kernel, stride, padding, dilation,
// groups), its zero point, and the path to run on.
struct ConvImages {
  Isa isa = Isa::kScalar;
  const uint8_t* x = nullptr;
  ConvGeom g{};
  int64_t images = 0;
  int32_t x_zp = 0;
};

// A transposed convolution of ConvImages. b[(gi * KD + kd) * KH + kh]:
// the packed weight of group gi's kernel row (kd, kh), K = icg, N = KW * ocg columns (kw, oc),
// with b_zero_points[gi * KW * ocg + column]. Output: channels_last uint8 y, requantized with
// mult / bias (OC entries), y_zp, clamp [0, 255].
struct Col2ImProblem : ConvImages {
  const PackedB* b = nullptr;
  const int32_t* b_zero_points = nullptr;
  bool b_zero_points_all_zero = true;
  const float* mult = nullptr;
  const float* bias = nullptr;
  int32_t y_zp = 0;
  uint8_t* y = nullptr;
};

void run_col2im(const Col2ImProblem& pr);

// A depthwise convolution (g.icg == g.ocg == 1) of ConvImages: w / wpk as conv_depthwise takes
// them (wpk: the path's packed taps, made once at prepack, or nullptr), ep: the requantization
// (ep.add: image 0's residual, advanced per image like y).
struct DepthwiseProblem : ConvImages {
  const int32_t* w = nullptr;
  const int32_t* wpk = nullptr;
  ConvEpilogue ep{};
  uint8_t* y = nullptr;
};

void run_depthwise(const DepthwiseProblem& pr);

}  // namespace gemm
}  // namespace kernels
}  // namespace qplugin
