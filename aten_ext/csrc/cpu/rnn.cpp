// ATen glue for the dynamically quantized recurrent layers: qplugin::_rnn_layer_dynamic
// runs one layer, one direction, of an LSTM (4 gates) or GRU (3 gates) over a whole
// sequence in C++. Per time step: one dynamic int8 GEMM (or, for fp16 weights, the fp16 kernel
// of cpu/linear_fp16.cpp, through linear_dynamic_view) for the hidden projection
// (cpu::linear_dynamic, activations quantized per call as in torch's dynamic LSTM) and
// one fused pointwise pass for the gates (kernels/rnn_kernel.h). The input projections
// of all steps are one GEMM up front. torch_qplugin.nn.quantized.dynamic.{LSTM, GRU}
// call it from Python / TorchScript; it replaces ~12 small ATen ops per step.
#include "utils/torch_api.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "cpu/linear.h"
#include "kernels/dispatch.h"
#include "kernels/rnn_kernel.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {
namespace {

void check_state(const char* kOp, const char* arg, const Tensor& t, int64_t B, int64_t H) {
  check_float_input(kOp, arg, t);
  QP_CHECK_VALUE(t.dim() == 2 && t.size(0) == B && t.size(1) == H, "qplugin::", kOp, ": ", arg, " should have shape [",
                 B, ", ", H, "] (batch, hidden_size), got ", t.sizes());
}

// A dense copy of t (torch's t.clone(MemoryFormat::Contiguous)).
Tensor clone_contiguous(const Tensor& t) {
  Tensor out = tensor::empty(t.sizes(), tensor::dtype(t));
  tensor::copy_(out, t);
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> rnn_layer_dynamic_view(const char* kOp, const Tensor& input, const Tensor& h0,
                                                          const Tensor& c0, const LinearWeightsView& w_ih,
                                                          const LinearWeightsView& w_hh, int64_t num_gates,
                                                          bool reverse) {
  QP_CHECK_VALUE(num_gates == 3 || num_gates == 4, "qplugin::", kOp, ": num_gates should be 4 (LSTM) or 3 (GRU), got ",
                 num_gates);
  check_float_input(kOp, "input", input);
  QP_CHECK_VALUE(input.dim() == 3, "qplugin::", kOp, ": input should be 3-D [seq_len, batch, input_size], got shape ",
                 input.sizes());
  const int64_t T = input.size(0), B = input.size(1), I = input.size(2);
  const int64_t H = w_hh.b.K;
  const int64_t G = num_gates;
  QP_CHECK_VALUE(w_hh.b.N == G * H, "qplugin::", kOp, ": w_hh should be [", G, " * hidden_size, hidden_size] = [",
                 G * H, ", ", H, "], got [", w_hh.b.N, ", ", w_hh.b.K, "]");
  QP_CHECK_VALUE(w_ih.b.N == G * H && w_ih.b.K == I, "qplugin::", kOp, ": w_ih should be [", G * H, ", ", I, "] (", G,
                 " * hidden_size, input_size), got [", w_ih.b.N, ", ", w_ih.b.K, "]");
  check_state(kOp, "h0", h0, B, H);
  const bool lstm = G == 4;
  if (lstm) check_state(kOp, "c0", c0, B, H);

  Tensor out = tensor::empty(std::vector<int64_t>{T, B, H}, kFloat);
  Tensor h = clone_contiguous(h0);
  Tensor c = clone_contiguous(c0);  // GRU: passed through (the Python layer ignores it)
  if (T == 0 || B == 0 || H == 0) return {out, h, c};

  // Input projections of every step at once: [T * B, G * H] (bias b_ih included).
  const Tensor gi_all =
      linear_dynamic_view(kOp, tensor::reshape(input, std::vector<int64_t>{T * B, I}), w_ih, false, false);
  const float* gi = tensor::data<float>(gi_all);
  float* hp = tensor::mutable_data<float>(h);
  float* cp = lstm ? tensor::mutable_data<float>(c) : nullptr;
  float* op = tensor::mutable_data<float>(out);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / (G * H));
  for (int64_t step = 0; step < T; ++step) {
    const int64_t t = reverse ? T - 1 - step : step;
    const Tensor gh_t = linear_dynamic_view(kOp, h, w_hh, false, false);  // [B, G * H], bias b_hh included
    const float* gh = tensor::data<float>(gh_t);
    const float* gi_t = gi + t * B * G * H;
    float* o_t = op + t * B * H;
    tensor::parallel_for(0, B, grain, [&](int64_t b0, int64_t b1) {
      if (lstm) {
        QPLUGIN_ISA_CALL(lstm_pointwise, gi_t + b0 * G * H, G * H, gh + b0 * G * H, b1 - b0, H, cp + b0 * H,
                         hp + b0 * H, o_t + b0 * H, H);
      } else {
        QPLUGIN_ISA_CALL(gru_pointwise, gi_t + b0 * G * H, G * H, gh + b0 * G * H, b1 - b0, H, hp + b0 * H,
                         o_t + b0 * H, H);
      }
    });
  }
  return {out, h, c};
}

}  // namespace cpu
}  // namespace qplugin
