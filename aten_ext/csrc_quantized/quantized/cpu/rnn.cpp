// QuantizedCPU registration for qplugin::_rnn_layer_dynamic: the dynamic recurrent layers take
// float input; a quantized one gets a clear error instead of the dispatcher's backend list.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <tuple>

#include "cpu/linear.h"
#include "packed_params/linear_packed_params.h"
#include "utils/checks.h"
#include "utils/class_check.h"

namespace qplugin {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> rnn_layer_dynamic_q_error(const at::Tensor& input, const at::Tensor& h0,
                                                                         const at::Tensor&,
                                                                         const c10::intrusive_ptr<LinearPackedParams>&,
                                                                         const c10::intrusive_ptr<LinearPackedParams>&,
                                                                         int64_t, bool) {
  if (input.is_quantized()) check_float_input("_rnn_layer_dynamic", "input", input);
  TORCH_CHECK(false, "qplugin::_rnn_layer_dynamic: h0 and c0 should be float32 tensors, got a quantized ",
              h0.is_quantized() ? "h0" : "c0", " (the recurrent state stays float)");
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) { m.impl("_rnn_layer_dynamic", TORCH_FN(rnn_layer_dynamic_q_error)); }

// ---- The CPU key: the layer itself, on the class's weights ----
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> rnn_layer_dynamic(const at::Tensor& input, const at::Tensor& h0,
                                                                 const at::Tensor& c0,
                                                                 const c10::intrusive_ptr<LinearPackedParams>& w_ih,
                                                                 const c10::intrusive_ptr<LinearPackedParams>& w_hh,
                                                                 int64_t num_gates, bool reverse) {
  return cpu::rnn_layer_dynamic_view("_rnn_layer_dynamic", input, h0, c0, cpu::linear_weights_view(*w_ih),
                                     cpu::linear_weights_view(*w_hh), num_gates, reverse);
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("_rnn_layer_dynamic", with_class_check<LinearPackedParams, 3, 4>(TORCH_FN(rnn_layer_dynamic)));
}

}  // namespace qplugin
