// QuantizedCPU adapters for 2-D pooling: check the quantized input, allocate
// the quantized output (input qparams, input memory format), run the
// plain-integer glue on int_view()s of both.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/pool.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

void check_qx(const char* op, const at::Tensor& qx, bool three_d = false) {
  check_quantized_input(op, "qx", qx);
  TORCH_CHECK(qx.qscheme() == at::kPerTensorAffine, "qplugin::", op,
              ": qx should be per_tensor_affine quantized, got qscheme ", toString(qx.qscheme()));
  check_qparams(op, "qx", qx);
  if (three_d) cpu::check_pool3d_input_rank(op, "qx", qx);
  else cpu::check_pool_input_rank(op, "qx", qx);
}

at::Tensor alloc_like(const at::Tensor& qx, const std::vector<int64_t>& sizes) {
  return at::_empty_affine_quantized(sizes, qx.options(), qx.q_scale(), qx.q_zero_point(), cpu::pool_format(qx));
}

at::Tensor max_pool2d_q(const at::Tensor& qx, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                        at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  constexpr const char* op = "max_pool2d";
  check_qx(op, qx);
  const auto w = cpu::check_pool2d_args(op, qx.sizes(), kernel_size, stride, padding, dilation, ceil_mode);
  at::Tensor out = alloc_like(qx, cpu::pool2d_output_sizes(op, qx.sizes(), w));
  cpu::max_pool2d_int_out(int_view(qx), w, int_view(out));
  return out;
}

at::Tensor avg_pool2d_q(const at::Tensor& qx, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                        at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                        c10::optional<int64_t> divisor_override) {
  constexpr const char* op = "avg_pool2d";
  check_qx(op, qx);
  const auto w = cpu::check_pool2d_args(op, qx.sizes(), kernel_size, stride, padding, {}, ceil_mode);
  cpu::check_divisor_override(op, divisor_override);
  at::Tensor out = alloc_like(qx, cpu::pool2d_output_sizes(op, qx.sizes(), w));
  cpu::avg_pool2d_int_out(int_view(qx), qx.q_zero_point(), w, count_include_pad, divisor_override, int_view(out));
  return out;
}

at::Tensor adaptive_avg_pool2d_q(const at::Tensor& qx, at::IntArrayRef output_size) {
  constexpr const char* op = "adaptive_avg_pool2d";
  check_qx(op, qx);
  at::Tensor out = alloc_like(qx, cpu::adaptive_output_sizes(op, qx.sizes(), output_size));
  cpu::adaptive_avg_pool2d_int_out(int_view(qx), int_view(out));
  return out;
}

at::Tensor alloc3d_like(const at::Tensor& qx, const std::vector<int64_t>& sizes) {
  return at::_empty_affine_quantized(sizes, qx.options(), qx.q_scale(), qx.q_zero_point(), cpu::pool3d_format(qx));
}

at::Tensor avg_pool3d_q(const at::Tensor& qx, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                        at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                        c10::optional<int64_t> divisor_override) {
  constexpr const char* op = "avg_pool3d";
  check_qx(op, qx, true);
  const auto w = cpu::check_pool3d_args(op, kernel_size, stride, padding, ceil_mode);
  cpu::check_divisor_override(op, divisor_override);
  at::Tensor out = alloc3d_like(qx, cpu::pool3d_output_sizes(op, qx.sizes(), w));
  cpu::avg_pool3d_int_out(int_view(qx), qx.q_zero_point(), w, count_include_pad, divisor_override, int_view(out));
  return out;
}

at::Tensor adaptive_avg_pool3d_q(const at::Tensor& qx, at::IntArrayRef output_size) {
  constexpr const char* op = "adaptive_avg_pool3d";
  check_qx(op, qx, true);
  at::Tensor out = alloc3d_like(qx, cpu::adaptive3d_output_sizes(op, qx.sizes(), output_size));
  cpu::adaptive_avg_pool3d_int_out(int_view(qx), int_view(out));
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("max_pool2d", TORCH_FN(max_pool2d_q));
  m.impl("avg_pool2d", TORCH_FN(avg_pool2d_q));
  m.impl("adaptive_avg_pool2d", TORCH_FN(adaptive_avg_pool2d_q));
  m.impl("avg_pool3d", TORCH_FN(avg_pool3d_q));
  m.impl("adaptive_avg_pool3d", TORCH_FN(adaptive_avg_pool3d_q));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

// Wrong tensor kind: these ops take quantized tensors.
at::Tensor max_pool2d_cpu_error(const at::Tensor& qx, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef,
                                at::IntArrayRef, bool) {
  refuse_non_quantized("max_pool2d", "qx", qx);
  return qx;
}
at::Tensor avg_pool2d_cpu_error(const at::Tensor& qx, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, bool, bool,
                                c10::optional<int64_t>) {
  refuse_non_quantized("avg_pool2d", "qx", qx);
  return qx;
}
at::Tensor adaptive_avg_pool2d_cpu_error(const at::Tensor& qx, at::IntArrayRef) {
  refuse_non_quantized("adaptive_avg_pool2d", "qx", qx);
  return qx;
}
at::Tensor avg_pool3d_cpu_error(const at::Tensor& qx, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, bool, bool,
                                c10::optional<int64_t>) {
  refuse_non_quantized("avg_pool3d", "qx", qx);
  return qx;
}
at::Tensor adaptive_avg_pool3d_cpu_error(const at::Tensor& qx, at::IntArrayRef) {
  refuse_non_quantized("adaptive_avg_pool3d", "qx", qx);
  return qx;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("max_pool2d", TORCH_FN(max_pool2d_cpu_error));
  m.impl("avg_pool2d", TORCH_FN(avg_pool2d_cpu_error));
  m.impl("adaptive_avg_pool2d", TORCH_FN(adaptive_avg_pool2d_cpu_error));
  m.impl("avg_pool3d", TORCH_FN(avg_pool3d_cpu_error));
  m.impl("adaptive_avg_pool3d", TORCH_FN(adaptive_avg_pool3d_cpu_error));
}

}  // namespace qplugin
