// Convolution weights as the kernels use them (conv1d / conv2d / conv3d and their transposed
// forms), built once from int8 data and qparams; the quantized tier's TorchScript classes
// (packed_params/conv_packed_params.h) hold one, the plain tier's conv buffers hold copies of its
// layouts (packed_params/plain_buffer.h) and read them through a ConvPackedView.
//
// Holds the weight data and float bias, the user-facing stride / padding / dilation / groups,
// and what the kernels want, built once:
//   wmat     int8 [OC][K], K = KD*KH*KW*ICg in (kd, kh, kw, ic) order (the
//            order of a channels_last receptive field)
//   packed   per group, the GEMM engine's packed weight of that group's rows of wmat
//            (kernels::gemm::PackedWeight, the same object linear holds: the int8 quad layout
//            for every path, the AVX2 int16 layout built on first use)
//   dw_packed  depthwise: dw in the layout of a path's depthwise kernel (the AVX-512 VNNI
//            kernel's interleaved bytes and tap sums), per path, built on first use
// Thread safety: everything above is immutable after prepack / __setstate__. The lazily built
// layouts (the int16 copy inside each PackedWeight, packed_rows, dw_packed) are built exactly once under a
// std::once_flag: concurrent first calls from several threads block until the one build is
// done, then all read the same bytes. A conv call reads the kernel path once and uses that
// path's layout and kernels throughout (cpu/conv.cpp, kernels/dispatch.h QPLUGIN_ISA_CALL_ON), so
// switching paths (_set_isa) while convs run is safe. Keep both properties when changing this.
//   dw       depthwise: int32 [taps][C], (w - w_zp) in the low 16 bits
//   w_scale, w_zp per output channel, bias (zeros if none)
// Transposed conv (kind "conv_transpose{1,2,3}d", transpose = true): weight (IC, OC / groups, kernel...)
// as torch's; OC / ICg below are the output channels and input channels per group; wmat, packed
// and dw stay empty; instead
//   tpacked  per (group, kd, kh) the engine's packed weight of KW * OCg columns (kw, oc) by ICg:
//            B[kw * OCg + oc][ic] = w[g * ICg + ic][oc][kd][kh][kw]
//   tzp      per group, the weight zero point of each of those columns
#pragma once

#include "utils/torch_api.h"

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/conv_kernel.h"
#include "kernels/dispatch.h"
#include "kernels/gemm/qgemm.h"
#include "utils/export.h"

namespace qplugin {

// "conv1d" -> 1, "conv_transpose3d" -> 3, ...; is_conv_transpose_kind: kind names a transposed conv.
QPLUGIN_PLAIN_API int64_t conv_kind_spatial(const std::string& kind);
bool is_conv_transpose_kind(const std::string& kind);
// A transposed conv's groups: >= 1 and dividing in_channels (weight dim 0); checked before anything
// is sized by groups.
QPLUGIN_PLAIN_API void check_transpose_groups(const char* op, int64_t in_channels, int64_t groups);

// The kernel layouts one conv call reads, for kernel path `isa`: pointers into a ConvWeights
// (ConvWeights::packed_view) or into a plain conv buffer (packed_params/plain_buffer.h view_conv).
//   b          conv: the packed weight of each group (empty for depthwise); transposed conv: of
//              each (group, kd, kh), as ConvWeights::tpacked. data16 set only for the AVX2 path.
//   rows       the stem-conv row layout (ConvWeights::packed_rows) where conv_reads_rows, else empty
//   dw         depthwise: ConvWeights::dw;  dw_packed: its layout for `isa`, or nullptr (the
//              path's generic depthwise kernel then reads dw: the same bytes out)
//   tzp        transposed conv: ConvWeights::tzp
struct ConvPackedView {
  kernels::Isa isa = kernels::Isa::kScalar;
  std::vector<kernels::gemm::PackedB> b;
  kernels::gemm::PackedB rows;
  const int32_t* dw = nullptr;
  const int32_t* dw_packed = nullptr;
  const int32_t* tzp = nullptr;
};

struct ConvWeights {
  explicit ConvWeights(Tensor w) : weight(std::move(w)) {}
  // user-facing
  std::string kind;  // conv1d / conv2d / conv3d / conv_transpose1d / conv_transpose2d / conv_transpose3d
  int64_t spatial = 2;
  bool transpose = false;
  std::vector<int64_t> output_padding;  // zeros for conv
  Tensor weight;
  std::optional<Tensor> bias;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  // kernel view (3-d, D = 1 for 1d / 2d, H = 1 for 1d)
  int64_t OC = 0, ICg = 0, KD = 1, KH = 1, KW = 1;
  int64_t SD = 1, SH = 1, SW = 1, PD = 0, PH = 0, PW = 0, DD = 1, DH = 1, DW = 1;
  int64_t K = 0, Kp = 0;
  bool depthwise = false;
  bool any_wzp = false;
  std::vector<int8_t> wmat;
  std::vector<int32_t> dw;
  std::vector<double> w_scale;
  std::vector<int32_t> w_zp;
  std::vector<float> bias_f;

  // The GEMM engine's packed weight of each group (ocg x K; empty for depthwise).
  std::vector<std::unique_ptr<kernels::gemm::PackedWeight>> packed;
  // Kernel-row layout for the indirect AVX-512 path on stem convs (C = 3, groups == 1,
  // dilation_w == 1): each (kd, kh) row of KW * ICg weights padded to S4 = round_up(KW * ICg, 4),
  // K4 = KD * KH * S4 (the input row segment of a kernel row is contiguous); built once.
  const kernels::gemm::PackedWeight& packed_rows();
  int64_t S4 = 0, K4 = 0;
  // Depthwise: dw in `path`'s depthwise layout (kernels::conv_depthwise_pack), built once per
  // path; nullptr where the path has none or these weights do not fit it.
  const int32_t* dw_packed(kernels::Isa path);
  // transposed conv: see the top of this file; index g * KD * KH + kd * KH + kh
  std::vector<std::unique_ptr<kernels::gemm::PackedWeight>> tpacked;
  std::vector<int32_t> tzp;

  // The layouts path `path` reads (builds the lazy ones it needs).
  ConvPackedView packed_view(kernels::Isa path);

 private:
  std::once_flag packed_rows_once_;
  kernels::gemm::PackedWeight packed_rows_;
  std::array<std::once_flag, kernels::kNumIsas> dw_packed_once_;  // indexed by kernels::Isa
  std::array<std::vector<int32_t>, kernels::kNumIsas> dw_packed_;
};

// Whether a conv's geometry has the stem-conv row layout (packed_rows): not depthwise, one group,
// ICg not a multiple of 4, dilation_w 1.
bool conv_has_rows(const ConvWeights& p);
// Whether a conv on `path` reads it: conv_has_rows, every weight zero point 0 and a path with the
// indirect GEMM.
bool conv_reads_rows(const ConvWeights& p, kernels::Isa path);

// Validates plain data and geometry like conv_prepack_int / conv_transpose_prepack_int (kind
// names which) and fills everything but the packed layouts (wmat, packed, dw, tpacked, tzp stay
// empty): a cheap description of the conv, O(out_channels). check_qparams false skips the range
// checks of each weight scale and zero point (for arguments checked by an earlier call).
QPLUGIN_PLAIN_API std::shared_ptr<ConvWeights> conv_describe_int(
    const char* op, const std::string& kind, const Tensor& w_int8, const Tensor& w_scales, const Tensor& w_zero_points,
    const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
    IntArrayRef dilation, int64_t groups, bool check_qparams = true);

// conv_transpose_prepack_int for a conv_transpose* kind, else conv_prepack_int (output_padding
// unused).
std::shared_ptr<ConvWeights> conv_prepack_int_of_kind(const char* op, const std::string& kind, const Tensor& w_int8,
                                                      const Tensor& w_scales, const Tensor& w_zero_points,
                                                      const std::optional<Tensor>& bias, IntArrayRef stride,
                                                      IntArrayRef padding, IntArrayRef output_padding,
                                                      IntArrayRef dilation, int64_t groups);

// Builds (and validates) the weights from plain data (`op` names the calling op in errors): w_int8 (int8, OC x ICg x
// kernel...), w_scales (float) / w_zero_points (integer), 1 (per tensor) or OC entries. `weight` of the result is
// w_int8 (the plain tier's params are never unpacked or pickled).
QPLUGIN_PLAIN_API std::shared_ptr<ConvWeights> conv_prepack_int(
    const char* op, const std::string& kind, const Tensor& w_int8, const Tensor& w_scales, const Tensor& w_zero_points,
    const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups);

// Transposed conv from plain data: w_int8 (int8, IC x OC / groups x kernel...), w_scales /
// w_zero_points with 1 (per tensor) or OC (per output channel) entries.
QPLUGIN_PLAIN_API std::shared_ptr<ConvWeights> conv_transpose_prepack_int(
    const char* op, const std::string& kind, const Tensor& w_int8, const Tensor& w_scales, const Tensor& w_zero_points,
    const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
    IntArrayRef dilation, int64_t groups);

}  // namespace qplugin
