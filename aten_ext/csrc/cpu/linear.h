// ATen glue for quantized linear (CPU layer): plain-integer entry points.
#pragma once

#include "utils/torch_api.h"

#include <tuple>

#include "cpu/linear_weights.h"
#include "utils/export.h"

namespace qplugin {
namespace cpu {

// y[m][n] (uint8, quint8 semantics) = requantized sum_k (x[m][k] - x_zp) * (W[n][k] - w_zp[n]) + bias,
// see kernels/gemm/qgemm.h (kU8). x: M rows of K uint8 (dense), out: M rows of N uint8 (dense).
// Raw pointers (the adapter hands over the quantized tensors' data): no per-call tensor wrappers.
QPLUGIN_PLAIN_API void linear_u8(const char* op, const uint8_t* x, int64_t M, double x_scale, int64_t x_zero_point,
                                 const LinearWeights& w, double y_scale, int64_t y_zero_point, bool relu, uint8_t* out);
// Output shape of linear for input sizes (checks rank and K; `op` names the caller).
QPLUGIN_PLAIN_API std::vector<int64_t> linear_out_sizes(const char* op, IntArrayRef x_sizes, const LinearWeights& w);

// A non-owning view of linear weights for the GEMM: a LinearWeights' (LinearWeights::view) or the
// plain tier's packed buffer's (packed_params/plain_buffer.h).
struct LinearWeightsView {
  kernels::gemm::PackedB b;         // N = b.N, K = b.K
  const double* w_scale = nullptr;  // N entries
  double w_scale_max = 0.0;
  const int32_t* w_zp = nullptr;  // N entries
  bool w_zp_all_zero = true;
  const float* bias = nullptr;  // N entries or nullptr
  // fp16 weights (LinearWeights' fp16 kind): the panels of kernels/linear_fp16_kernel.h;
  // b.N / b.K hold the shape, the int8 fields are empty. linear_dynamic_view then runs the fp16
  // kernel (float activations, no int8 step).
  bool fp16 = false;
  const uint16_t* fp16_panels = nullptr;
};
QPLUGIN_PLAIN_API LinearWeightsView linear_weights_view(const LinearWeights& w);

// linear_u8 on a view: the epilogue constants are computed per call into `mult` / `bias`
// (N floats each; the same arithmetic as LinearWeights::static_epilogue).
void linear_u8_view(const char* op, const uint8_t* x, int64_t M, double x_scale, int64_t x_zero_point,
                    const LinearWeightsView& w, double y_scale, int64_t y_zero_point, bool relu, uint8_t* out);

// Dynamic linear on a view (float32 x [..., K], float32 result); fp16 views run
// linear_fp16_view (reduce_range does not apply).
QPLUGIN_PLAIN_API Tensor linear_dynamic_view(const char* op, const Tensor& x, const LinearWeightsView& w,
                                             bool reduce_range, bool relu);

// fp16-weight linear on an fp16 view (cpu/linear_fp16.cpp): float32 x [..., K] -> float32 [..., N],
// kernels/linear_fp16_kernel.h's order on every path.
QPLUGIN_PLAIN_API Tensor linear_fp16_view(const char* op, const Tensor& x, const LinearWeightsView& w, bool relu);

// One layer, one direction of a dynamic LSTM (num_gates 4) / GRU (3) over a sequence
// (cpu/rnn.cpp; `op` names the caller): (output [T, B, H], h_n, c_n).
QPLUGIN_PLAIN_API std::tuple<Tensor, Tensor, Tensor> rnn_layer_dynamic_view(const char* op, const Tensor& input,
                                                                            const Tensor& h0, const Tensor& c0,
                                                                            const LinearWeightsView& w_ih,
                                                                            const LinearWeightsView& w_hh,
                                                                            int64_t num_gates, bool reverse);

}  // namespace cpu
}  // namespace qplugin
