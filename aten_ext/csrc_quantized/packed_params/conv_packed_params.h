// The quantized tier's packed convolution weights: torch.classes.qplugin.Conv2dPackedParamsBase
// (conv1d and conv2d, and their transposed forms) and Conv3dPackedParamsBase (conv3d), each holding
// the ConvWeights of cpu/conv_weights.h made from a qint8 weight; unpack returns that weight
// exactly.
// Pickled state (docs/design/conv.md):
//   version 1 (conv): ((1, kind: str ("conv1d" | "conv2d" | "conv3d"), groups), (weight, bias?),
//                      (stride, padding, dilation))
//   version 2 (transposed conv): ((2, kind: str ("conv_transpose1d" | ...), groups), (weight, bias?),
//                      (stride, padding, output_padding, dilation))
#pragma once

#include <ATen/ATen.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/conv_weights.h"

namespace qplugin {

// ((version, kind, groups), (weight, bias), (stride, padding, dilation)): nested
// triples (GCC 12 trips -Warray-bounds inside ivalue_inl.h on longer tuples).
using ConvState =
    std::tuple<std::tuple<int64_t, std::string, int64_t>, std::tuple<at::Tensor, c10::optional<at::Tensor>>,
               std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>>;

// The transposed conv's state (version 2): output_padding added to the geometry.
using ConvTransposeState =
    std::tuple<std::tuple<int64_t, std::string, int64_t>, std::tuple<at::Tensor, c10::optional<at::Tensor>>,
               std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>>;

constexpr int64_t kConvStateVersion = 1;
constexpr int64_t kConvTransposeStateVersion = 2;

// The pickled state of p: ConvState (version 1) for conv, ConvTransposeState (version 2) for
// transposed conv.
c10::IValue conv_state(const ConvWeights& p);

// Builds (and validates) packed params; `op` names the calling op in errors.
std::shared_ptr<ConvWeights> conv_prepack_impl(const char* op, const std::string& kind, const at::Tensor& weight,
                                               const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                               at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups);

// Transposed conv from a qint8 weight (IC x OC / groups x kernel...): per tensor, or per channel
// along axis 1 (output channels; OC / groups entries, shared by the groups).
std::shared_ptr<ConvWeights> conv_transpose_prepack_impl(const char* op, const std::string& kind,
                                                         const at::Tensor& weight,
                                                         const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                                         at::IntArrayRef padding, at::IntArrayRef output_padding,
                                                         at::IntArrayRef dilation, int64_t groups);

// The two TorchScript classes (distinct types so schemas can tell 2d from 3d).
struct Conv2dPackedParamsBase : torch::CustomClassHolder {
  static constexpr const char* kName = "Conv2dPackedParamsBase";
  std::shared_ptr<ConvWeights> p;
  explicit Conv2dPackedParamsBase(std::shared_ptr<ConvWeights> q) : p(std::move(q)) {}
};
struct Conv3dPackedParamsBase : torch::CustomClassHolder {
  static constexpr const char* kName = "Conv3dPackedParamsBase";
  std::shared_ptr<ConvWeights> p;
  explicit Conv3dPackedParamsBase(std::shared_ptr<ConvWeights> q) : p(std::move(q)) {}
};

// Class registration (library.cpp, [conv classes]) and the unpack ops (which
// take no tensor, so they are defined with their catch-all kernel there).
void register_conv_classes(torch::Library& m);
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv1d_unpack(const c10::intrusive_ptr<Conv2dPackedParamsBase>& w);
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv2d_unpack(const c10::intrusive_ptr<Conv2dPackedParamsBase>& w);
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv3d_unpack(const c10::intrusive_ptr<Conv3dPackedParamsBase>& w);
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv_transpose1d_unpack(
    const c10::intrusive_ptr<Conv2dPackedParamsBase>& w);
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv_transpose2d_unpack(
    const c10::intrusive_ptr<Conv2dPackedParamsBase>& w);
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv_transpose3d_unpack(
    const c10::intrusive_ptr<Conv3dPackedParamsBase>& w);

}  // namespace qplugin
