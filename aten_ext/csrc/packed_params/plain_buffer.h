// The plain tier's prepacked weights (docs/design/plain.md "Packed buffers"): a plain uint8
// tensor, so that state_dict, deepcopy, torch.save, FakeTensor and torch.export see a tensor and
// never a TorchScript object.
//
// Layout (little-endian int64 words, then sections at 64-byte aligned offsets):
//   [0] magic kMagic  [1] format version kVersion  [2] kind (kLinear / kConv)
//   [3] ISA path it was packed for (kernels::Isa)  [4] layout tag (kLinearLayout)
//   [5] N  [6] K  [7] w_zp_all_zero
//   [8 + 2i], [9 + 2i]: offset and byte size of section i (linear: packed int8, col_sums int32,
//   w_zp int32, int16 layout (empty unless packed for avx2))
//   [16] the buffer's size in bytes  [17] checksum: 64-bit FNV-1a over the buffer's 8-byte words
//   (word 17 read as 0; a tail shorter than a word byte by byte)  [18..23] zero
// The sections are written from a LinearWeights (its view(): the GEMM's own packing,
// never re-implemented here) and read back as a kernels::gemm::PackedB pointing into the tensor.
// A buffer packed for another ISA path or layout is never read: view_linear returns false and
// the op packs from the plain weight instead. Anything else that is not exactly what
// plain_linear_prepack makes of the op's w / w_scales / w_zero_points is an error: the header
// (magic / version / kind / N / K / size / bounds) on every call; the checksum, and the sections
// against a fresh packing of w / w_zero_points, on the first call with that buffer and those
// arguments (remembered per buffer: storage, data pointer and version counter of the buffer and
// of w / w_scales / w_zero_points, so an in-place change of any of them checks again).
// Format version 1 (128-byte header: words 0..15, no size or checksum; written by older builds)
// is read too: the same checks but the checksum.
//
// Conv (kind kConv): [4] kConvLayout, [5] / [6] weight dims 0 / 1, [7] groups, [8] transposed,
// [9] a hash of the kernel geometry (kernel size, stride, padding, dilation, output_padding),
// [10] int16 copies present (packed on the avx2 path), [11] the path of the depthwise layout + 1
// (0: none, or the weights do not fit it), [12] stem-conv row layout present (set by the
// geometry alone), [13] the bytes of the packing path's depthwise layout (its size for these
// shapes, zeros where [11] is 0: the buffer's size depends on shapes and path only). The sections
// are ConvWeights' kernel layouts (cpu/conv_weights.h), copied from a conv_prepack_int /
// conv_transpose_prepack_int of the prepack's arguments: per group the engine's packed weight
// (int8, column sums, int16 copy), the stem-conv row layout, or depthwise's dw and its
// layout for one path, or transposed conv's per-(group, kd, kh) packed weights and zero points.
// Their sizes follow from the conv's description and the flags (conv_layout in the .cpp); a
// call reads them in place (view_conv: a ConvPackedView pointing into the tensor). Another
// path reads the layouts common to every path (int8 weight, column sums, dw): a depthwise layout
// of another path is not read (the generic kernel reads dw: the same bytes out), and the avx2
// path, whose conv GEMM needs the int16 copies, packs from w for a buffer made on another path
// (correct, slower; the plain modules repack on load). Checked like linear: the header on every
// call, the checksum and the sections against a fresh packing of w / w_zero_points on the first
// call with that buffer and those w / w_scales / w_zero_points (later calls skip the per-channel
// checks of the scales and zero points too). Buffers of older builds hold the header only ([4] 0;
// version 1 has no [9] and no checksum): they run, packing from w on every call.
//
// Embedding (kind kEmbedding, format 2 only): [5] rows  [6] D (codes a row)  [7] bits (8, or 4:
// every code below 16, still a byte a code)  [8] offset of the rows (kHeaderBytes)  [9] their byte
// size, rows * (D + 8). The rows are embedding_bag_byte_prepack's fused layout: D codes, then the
// row's float32 scale and float32 bias. Written by pack_embedding (which checks every row's scale,
// bias and codes), read by view_embedding: the header on every call, the checksum on the first call
// with that buffer (remembered like view_linear's checks).
#pragma once

#include "utils/torch_api.h"

#include <memory>
#include <string>

#include "cpu/conv_weights.h"
#include "cpu/linear.h"

namespace qplugin {
namespace plain_buffer {

constexpr int64_t kMagic = 0x314B435041504C51;  // "QLPAPCK1"
constexpr int64_t kVersion = 2;
constexpr int64_t kLinear = 1;
constexpr int64_t kConv = 2;
constexpr int64_t kEmbedding = 3;
// Bump when kernels/gemm's packed layout changes (test/ops/test_plain_linear.py holds the bytes
// of a small packed weight and fails on a silent change).
constexpr int64_t kLinearLayout = 1;
// The conv buffer's layout tag: bump when the sections change (test/ops/test_plain_weights.py
// holds the bytes of small conv buffers).
constexpr int64_t kConvLayout = 1;
constexpr int64_t kHeaderWords = 24;
constexpr int64_t kHeaderBytes = kHeaderWords * 8;
constexpr int64_t kHeaderBytesV1 = 128;  // format version 1

// Packs w (int8 [N, K]) with scales (float64) / zero_points (int64), 1 or N entries each, for
// the running ISA path.
Tensor pack_linear(const char* op, const Tensor& w, const Tensor& scales, const Tensor& zero_points);

// Whether an earlier call checked buf in full with these w / scales / zero_points (unchanged
// since): then the op may skip the per-channel checks of scales and zero points.
bool weights_checked(const Tensor& buf, const Tensor& w, const Tensor& scales, const Tensor& zero_points);

// Points `out.b` / `out.w_zp` / `out.w_zp_all_zero` into buf; false when buf was packed for
// another ISA path or layout (then the caller packs from the weight). Errors for a malformed or
// damaged buffer or one not packed from w / w_scales / w_zero_points (see the top of this file).
// `checked`: weights_checked(buf, w, scales, zero_points), asked before the call's other checks.
bool view_linear(const char* op, const Tensor& buf, const Tensor& w, const Tensor& scales, const Tensor& zero_points,
                 bool checked, cpu::LinearWeightsView* out);

// Errors unless the float16 panels `packed` are exactly plain_linear_prepack_fp16(w) (compared on
// the first call with those two tensors, remembered like view_linear's checks).
void check_fp16_panels(const char* op, const char* packed_arg, const Tensor& packed, const char* w_arg,
                       const Tensor& w);

// The conv buffer for (kind, w, qparams, geometry, groups) on the running path; validates
// everything through conv_prepack_int / conv_transpose_prepack_int (kind conv_transpose*:
// output_padding used).
Tensor pack_conv(const char* op, const std::string& kind, const Tensor& w, const Tensor& scales,
                 const Tensor& zero_points, const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                 IntArrayRef dilation, int64_t groups, IntArrayRef output_padding = {});
// Checks buf's header is a conv's (transposed or not) for w and groups (errors otherwise).
void check_conv(const char* op, const Tensor& buf, const Tensor& w, int64_t groups, bool transposed = false);
// Checks a version-2 conv header's kernel geometry against the conv p built from the op's arguments.
void check_conv_geometry(const char* op, const Tensor& buf, const ConvWeights& p);
// Points *out into buf for path `path` (after check_conv / check_conv_geometry); p describes the
// conv (conv_describe_int of the op's arguments). False for a header-only buffer of an older
// build, or where `path` needs a layout buf lacks: then the caller packs from w. Errors for a
// damaged buffer or one not packed from w / w_zero_points (see the top of this file).
// `checked`: weights_checked(buf, w, scales, zero_points), asked before the conv was described.
bool view_conv(const char* op, const Tensor& buf, const ConvWeights& p, const Tensor& w, const Tensor& scales,
               const Tensor& zero_points, kernels::Isa path, bool checked, ConvPackedView* out);

// Wraps fused rows (uint8 [rows, D + 8]: codes, float32 scale, float32 bias a row) in an embedding
// buffer. Errors unless every scale is finite and positive (check_scale), every bias finite and,
// for bits 4, every code below 16.
Tensor pack_embedding(const char* op, const Tensor& fused_rows, int64_t bits);

// The fused rows of an embedding buffer: `rows` rows of D + 8 bytes at `data`, inside the buffer.
struct EmbeddingRows {
  const uint8_t* data;
  int64_t rows;
  int64_t D;
};

// The rows of an embedding buffer, checked (header, bounds, bits; checksum on first use).
EmbeddingRows view_embedding(const char* op, const Tensor& buf);

}  // namespace plain_buffer
}  // namespace qplugin
