// torch.classes.qplugin.LinearPackedParamsBase, as torch's class of the same name: the weights of
// cpu/linear_weights.h (int8 from linear_prepack's qint8 weight, per-tensor or per-channel along
// axis 0, or fp16 from linear_prepack_fp16) with TorchScript's pickling and unpack().
//
// Pickled state (docs/serialization.md):
//   version 1 (int8): (1, [Tensor weight int8 [N, K], Tensor scales float64, Tensor zero_points int64],
//                      Tensor? bias float32 [N])
//     scales / zero_points are 0-dim for a per-tensor weight, 1-D [N] for per-channel (axis 0).
//   version 2 (fp16): (2, [Tensor weight float16 [N, K]], Tensor? bias float32 [N])
// int8 weights are still written as version 1 (files stay readable by builds before version 2).
// Plain tensors only (no quantized dtype in the file). __setstate__ validates every field and
// repacks.
#pragma once

#include <ATen/ATen.h>
#include <torch/custom_class.h>

#include <tuple>
#include <vector>

#include "cpu/linear_weights.h"

namespace qplugin {

struct LinearPackedParams : torch::CustomClassHolder, LinearWeights {
  static constexpr int64_t kVersion = 1;      // int8 state
  static constexpr int64_t kVersionFp16 = 2;  // fp16 state (the newest this build reads)
  using State = std::tuple<int64_t, std::vector<at::Tensor>, c10::optional<at::Tensor>>;

  // From plain int8 data [N, K] and qparams (LinearWeights::init_int8).
  static c10::intrusive_ptr<LinearPackedParams> create(const char* op, const at::Tensor& w_int8,
                                                       const at::Tensor& scales, const at::Tensor& zero_points,
                                                       bool per_channel, const c10::optional<at::Tensor>& bias);
  // From a quantized qint8 weight (linear_prepack).
  static c10::intrusive_ptr<LinearPackedParams> prepack(const at::Tensor& weight,
                                                        const c10::optional<at::Tensor>& bias);
  // From a float32 / float16 weight [N, K] (linear_prepack_fp16; LinearWeights::init_fp16).
  static c10::intrusive_ptr<LinearPackedParams> prepack_fp16(const char* op, const at::Tensor& weight,
                                                             const c10::optional<at::Tensor>& bias);

  std::tuple<at::Tensor, c10::optional<at::Tensor>> unpack() const;  // (qint8 weight, bias)
  State getstate() const;
  static c10::intrusive_ptr<LinearPackedParams> setstate(State state);
  std::string repr() const;
};

// Registers the class with its methods and pickle support, once. Called by
// library.cpp ([linear classes]) and at the top of every TORCH_LIBRARY_IMPL
// block whose kernels mention the class (static initialization order across
// files is unspecified; schema inference needs the class registered).
void register_linear_classes();

// linear_unpack / linear_unpack_fp16 (CatchAll: their only argument is the class).
std::tuple<at::Tensor, c10::optional<at::Tensor>> linear_unpack(const c10::intrusive_ptr<LinearPackedParams>& packed);
// (float32 weight holding the fp16 values, bias), as torch's linear_unpack_fp16.
std::tuple<at::Tensor, c10::optional<at::Tensor>> linear_unpack_fp16(
    const c10::intrusive_ptr<LinearPackedParams>& packed);

}  // namespace qplugin
