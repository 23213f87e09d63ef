// The weights of a linear layer as the GEMM uses them (cpu/ and the plain tier; the quantized
// tier's torch.classes.qplugin.LinearPackedParamsBase is this plus pickling and unpacking):
//  - int8: a weight [N, K] with per-tensor or per-channel (axis 0) scales and zero points, packed
//    once for the GEMM of kernels/gemm/qgemm.h;
//  - fp16: a float16 weight in the panels of kernels/linear_fp16_kernel.h, for the fp16 dynamic
//    linear (float activations, no int8 step);
// and an optional float32 bias. The original weight is not kept: the packed data holds every int8
// / fp16 value, so weight_int8() / weight_fp16() rebuild it exactly.
#pragma once

#include "utils/torch_api.h"

#include <memory>
#include <mutex>
#include <vector>

#include "kernels/gemm/qgemm.h"
#include "utils/export.h"

namespace qplugin {

struct LinearWeights {
  int64_t N = 0;                       // output features
  int64_t K = 0;                       // input features
  kernels::gemm::PackedWeight packed;  // the engine's packed weight (kernels/gemm/qgemm.h)
  bool per_channel = false;
  Tensor scales;                // float64 [1] or [N] (as given)
  Tensor zero_points;           // int64 [1] or [N]
  std::vector<double> w_scale;  // N entries
  double w_scale_max = 0.0;     // max of w_scale (the requantize multiplier check)
  std::vector<int32_t> w_zp;    // N entries
  bool w_zp_all_zero = true;
  std::optional<Tensor> bias;    // float32 [N], contiguous
  std::vector<float> w_scale_f;  // N entries: float(w_scale[n]) (dynamic epilogue)
  // fp16 kind: fp16 bits in panels of kernels::kFp16Panel columns (linear_fp16_kernel.h),
  // ceil(N / 16) * K * 16 entries; the int8 fields above are empty.
  bool fp16 = false;
  std::vector<uint16_t> fp16_panels;

  // Errors naming `op` when the weight is not of the kind the op computes with.
  QPLUGIN_PLAIN_API void check_int8(const char* op) const;
  QPLUGIN_PLAIN_API void check_fp16(const char* op) const;

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

  // Fills an empty LinearWeights from plain int8 data [N, K] and qparams (float64 scales / int64
  // zero points, [N] or [1]), validated here (`op` names the caller).
  QPLUGIN_PLAIN_API void init_int8(const char* op, const Tensor& w_int8, const Tensor& scales,
                                   const Tensor& zero_points, bool per_channel, const std::optional<Tensor>& bias);
  // From a float32 / float16 weight [N, K]: values outside the float16 range saturate to
  // +-65504 with a warning, as torch's linear_prepack_fp16; rounding to nearest even.
  QPLUGIN_PLAIN_API void init_fp16(const char* op, const Tensor& weight, const std::optional<Tensor>& bias);

  QPLUGIN_PLAIN_API Tensor weight_int8() const;  // [N, K] int8
  QPLUGIN_PLAIN_API Tensor weight_fp16() const;  // [N, K] float16 (fp16 kind)
  // Bytes the weight keeps in memory: the packed int8 layout and column sums, the qparams (tensors
  // and per-channel vectors), the fp16 panels (fp16 kind). The bias is not counted.
  QPLUGIN_PLAIN_API int64_t packed_bytes() const;

 private:
  mutable std::mutex epilogue_mu_;
  mutable std::shared_ptr<const StaticEpilogue> epilogue_;
};

}  // namespace qplugin
