// CPU glue for the fp16 dynamic linear (torch's quantized::linear_*_fp16 schemas under qplugin::):
// float32 activations, float16 weights packed in LinearWeights (fp16 kind), float32
// accumulation in kernels/linear_fp16_kernel.h's fixed order; no int8 step. The dynamic fp16
// LSTM / GRU reach the same kernel through linear_dynamic_view (cpu/rnn.cpp).
#include "utils/torch_api.h"

#include <algorithm>
#include <vector>

#include "cpu/linear.h"
#include "kernels/dispatch.h"
#include "kernels/linear_fp16_kernel.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {

Tensor linear_fp16_view(const char* op, const Tensor& x_in, const LinearWeightsView& w, bool relu) {
  check_float_input(op, "X", x_in);
  const int64_t N = w.b.N;
  const int64_t K = w.b.K;
  QP_CHECK_VALUE(x_in.dim() >= 1, "qplugin::", op, ": X should have at least 1 dimension, got a 0-dim tensor");
  QP_CHECK_VALUE(x_in.size(-1) == K, "qplugin::", op, ": X should have last dimension ", K,
                 " (W's in_features), got shape ", x_in.sizes());
  std::vector<int64_t> out_sizes = x_in.sizes().vec();
  out_sizes.back() = N;
  Tensor out = tensor::empty(out_sizes, kFloat);
  if (out.numel() == 0) return out;
  const int64_t M = out.numel() / N;
  const Tensor x = tensor::contiguous(x_in);
  const float* xp = tensor::data<float>(x);
  float* yp = tensor::mutable_data<float>(out);
  // Work units: blocks of kRows rows x kPanels panels (64 columns); each unit is independent
  // (every output's sum is computed whole by one call), so the split changes no bit.
  constexpr int64_t kRows = 64;
  constexpr int64_t kPanels = 4;
  const int64_t P = (N + kernels::kFp16Panel - 1) / kernels::kFp16Panel;
  const int64_t PG = (P + kPanels - 1) / kPanels;
  const int64_t MB = (M + kRows - 1) / kRows;
  const int64_t unit_flops = std::min(M, kRows) * kPanels * kernels::kFp16Panel * std::max<int64_t>(K, 1);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 17) / unit_flops);
  tensor::parallel_for(0, MB * PG, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t mb = t / PG, pg = t % PG;
      const int64_t m0 = mb * kRows, m1 = std::min(M, m0 + kRows);
      const int64_t p0 = pg * kPanels, p1 = std::min(P, p0 + kPanels);
      QPLUGIN_ISA_CALL(linear_fp16_f32, xp + m0 * K, K, m1 - m0, K, w.fp16_panels, N, p0, p1, w.bias, relu, yp + m0 * N,
                       N);
    }
  });
  return out;
}

}  // namespace cpu
}  // namespace qplugin
