// torch.classes.qplugin.LinearPackedParamsBase: one of two weight kinds, as torch's class of the
// same name, and an optional float32 bias:
//  - int8 (linear_prepack): a qint8 weight (per-tensor or per-channel along axis 0), packed once
//    for the GEMM of kernels/gemm/qgemm.h;
//  - fp16 (linear_prepack_fp16): a float16 weight in the panels of kernels/linear_fp16_kernel.h,
//    for linear_dynamic_fp16 (float activations, no int8 step).
// The original weight is not kept: the packed data holds every int8 / fp16 value, so unpack()
// rebuilds it exactly.
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

#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "kernels/gemm/qgemm.h"

namespace qplugin {

struct LinearPackedParams : torch::CustomClassHolder {
  static constexpr int64_t kVersion = 1;      // int8 state
  static constexpr int64_t kVersionFp16 = 2;  // fp16 state (the newest this build reads)
  using State = std::tuple<int64_t, std::vector<at::Tensor>, c10::optional<at::Tensor>>;

  int64_t N = 0;  // output features
  int64_t K = 0;  // input features
  kernels::gemm::PackedWeight packed;  // the engine's packed weight (kernels/gemm/qgemm.h)
  bool per_channel = false;
  at::Tensor scales;       // float64 [1] or [N] (as given)
  at::Tensor zero_points;  // int64 [1] or [N]
  std::vector<double> w_scale;  // N entries
  double w_scale_max = 0.0;     // max of w_scale (the requantize multiplier check)
  std::vector<int32_t> w_zp;    // N entries
  bool w_zp_all_zero = true;
  c10::optional<at::Tensor> bias;  // float32 [N], contiguous
  std::vector<float> w_scale_f;    // N entries: float(w_scale[n]) (dynamic epilogue)
  // fp16 kind: fp16 bits in panels of kernels::kFp16Panel columns (linear_fp16_kernel.h),
  // ceil(N / 16) * K * 16 entries; the int8 fields above are empty.
  bool fp16 = false;
  std::vector<uint16_t> fp16_panels;

  // Errors naming `op` when the weight is not of the kind the op computes with.
  void check_int8(const char* op) const;
  void check_fp16(const char* op) const;

  // The GEMM's view of the weight; with_int16 adds the AVX2 int16 layout (built on first
  // such call, once, under a std::call_once: concurrent first calls are safe and the layout is
  // immutable afterwards).
  kernels::gemm::PackedB view(bool with_int16 = false) const { return packed.view(with_int16); }

  // The static (kU8) epilogue constants for one (x_scale, y_scale) pair, see cpu/linear.cpp:
  // mult[n] = float((x_scale / y_scale) * w_scale[n]), bias[n] = float(bias[n] * (1 / y_scale))
  // (empty without bias). The last pair is cached: a model calls a layer with the same
  // activation scales every time, so the per-call cost is one comparison (key: the two scales and
  // the bias tensor's version counter). Thread-safe.
  struct StaticEpilogue {
    double x_scale = 0.0;
    double y_scale = 0.0;
    int64_t bias_version = 0;
    std::vector<float> mult;
    std::vector<float> bias;
  };
  std::shared_ptr<const StaticEpilogue> static_epilogue(double x_scale, double y_scale) const;
  // The arithmetic of those constants (also used uncached by the plain tier's linear):
  // mult[n] (N entries); bias_out[n] when bias is not null.
  static void epilogue_constants(double x_scale, double y_scale, const double* w_scale, const float* bias, int64_t N,
                                 float* mult, float* bias_out);

  // From plain int8 data [N, K] and qparams (validated here; `op` names the caller).
  static c10::intrusive_ptr<LinearPackedParams> create(const char* op, const at::Tensor& w_int8,
                                                       const at::Tensor& scales,
                                                       const at::Tensor& zero_points, bool per_channel,
                                                       const c10::optional<at::Tensor>& bias);
  // From a quantized qint8 weight (linear_prepack).
  static c10::intrusive_ptr<LinearPackedParams> prepack(const at::Tensor& weight,
                                                        const c10::optional<at::Tensor>& bias);

  // From a float32 / float16 weight [N, K] (linear_prepack_fp16): values outside the float16
  // range saturate to +-65504 with a warning, as torch's; rounding to nearest even.
  static c10::intrusive_ptr<LinearPackedParams> prepack_fp16(const char* op, const at::Tensor& weight,
                                                             const c10::optional<at::Tensor>& bias);

  at::Tensor weight_int8() const;  // [N, K] int8
  at::Tensor weight_fp16() const;  // [N, K] float16 (fp16 kind)
  std::tuple<at::Tensor, c10::optional<at::Tensor>> unpack() const;  // (qint8 weight, bias)
  State getstate() const;
  static c10::intrusive_ptr<LinearPackedParams> setstate(State state);
  std::string repr() const;

 private:
  mutable std::mutex epilogue_mu_;
  mutable std::shared_ptr<const StaticEpilogue> epilogue_;
};

// Registers the class with its methods and pickle support, once. Called by
// library.cpp ([linear classes]) and at the top of every TORCH_LIBRARY_IMPL
// block whose kernels mention the class (static initialization order across
// files is unspecified; schema inference needs the class registered).
void register_linear_classes();

// linear_unpack / linear_unpack_fp16 (CatchAll: their only argument is the class).
std::tuple<at::Tensor, c10::optional<at::Tensor>> linear_unpack(
    const c10::intrusive_ptr<LinearPackedParams>& packed);
// (float32 weight holding the fp16 values, bias), as torch's linear_unpack_fp16.
std::tuple<at::Tensor, c10::optional<at::Tensor>> linear_unpack_fp16(
    const c10::intrusive_ptr<LinearPackedParams>& packed);

} // namespace qplugin
