// QuantizedCPU adapters for max / min / max.dim / min.dim / argmax / argmin /
// mean: per-tensor quantized input -> plain-integer glue (cpu/reduce.cpp);
// quantized outputs keep the input's qparams.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/sort.h"
#include "quantized/cpu/sort_common.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

at::Tensor max_all_q(const char* op, const at::Tensor& self, bool is_max) {
  check_per_tensor_q(op, self);
  QuantizedAlloc out(self);
  cpu::max_all_int(op, int_view(self), self.q_scale(), self.q_zero_point(), is_max, out.fn());
  return out.result();
}
at::Tensor max_q(const at::Tensor& self) { return max_all_q("max", self, true); }
at::Tensor min_q(const at::Tensor& self) { return max_all_q("min", self, false); }

std::tuple<at::Tensor, at::Tensor> max_dim_q(const char* op, const at::Tensor& self, int64_t dim, bool keepdim,
                                             bool is_max) {
  check_per_tensor_q(op, self);
  QuantizedAlloc out(self);
  auto r = cpu::max_dim_int(op, int_view(self), self.q_scale(), self.q_zero_point(), dim, keepdim, is_max, out.fn());
  return {out.result(), std::get<1>(r)};
}
std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return max_dim_q("max", self, dim, keepdim, true);
}
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return max_dim_q("min", self, dim, keepdim, false);
}

at::Tensor argmax_q(const at::Tensor& self, c10::optional<int64_t> dim, bool keepdim) {
  check_per_tensor_q("argmax", self);
  return cpu::argmax_int("argmax", int_view(self), self.q_scale(), self.q_zero_point(), dim, keepdim, true);
}
at::Tensor argmin_q(const at::Tensor& self, c10::optional<int64_t> dim, bool keepdim) {
  check_per_tensor_q("argmin", self);
  return cpu::argmax_int("argmin", int_view(self), self.q_scale(), self.q_zero_point(), dim, keepdim, false);
}

at::Tensor mean_q(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  check_per_tensor_q("mean", self);
  QuantizedAlloc out(self);
  cpu::mean_int("mean", int_view(self), dim, keepdim, out.fn());
  return out.result();
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("max", TORCH_FN(max_q));
  m.impl("min", TORCH_FN(min_q));
  m.impl("max.dim", TORCH_FN(max_dim));
  m.impl("min.dim", TORCH_FN(min_dim));
  m.impl("argmax", TORCH_FN(argmax_q));
  m.impl("argmin", TORCH_FN(argmin_q));
  m.impl("mean", TORCH_FN(mean_q));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

at::Tensor max_cpu_error(const at::Tensor& self) {
  refuse_non_quantized("max", "self", self);
  TORCH_CHECK(false, "unreachable");
}
at::Tensor min_cpu_error(const at::Tensor& self) {
  refuse_non_quantized("min", "self", self);
  TORCH_CHECK(false, "unreachable");
}
std::tuple<at::Tensor, at::Tensor> max_dim_cpu_error(const at::Tensor& self, int64_t, bool) {
  refuse_non_quantized("max", "self", self);
  TORCH_CHECK(false, "unreachable");
}
std::tuple<at::Tensor, at::Tensor> min_dim_cpu_error(const at::Tensor& self, int64_t, bool) {
  refuse_non_quantized("min", "self", self);
  TORCH_CHECK(false, "unreachable");
}
at::Tensor argmax_cpu_error(const at::Tensor& self, c10::optional<int64_t>, bool) {
  refuse_non_quantized("argmax", "self", self);
  TORCH_CHECK(false, "unreachable");
}
at::Tensor argmin_cpu_error(const at::Tensor& self, c10::optional<int64_t>, bool) {
  refuse_non_quantized("argmin", "self", self);
  TORCH_CHECK(false, "unreachable");
}
at::Tensor mean_cpu_error(const at::Tensor& self, at::OptionalIntArrayRef, bool) {
  refuse_non_quantized("mean", "self", self);
  TORCH_CHECK(false, "unreachable");
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("max", TORCH_FN(max_cpu_error));
  m.impl("min", TORCH_FN(min_cpu_error));
  m.impl("max.dim", TORCH_FN(max_dim_cpu_error));
  m.impl("min.dim", TORCH_FN(min_dim_cpu_error));
  m.impl("argmax", TORCH_FN(argmax_cpu_error));
  m.impl("argmin", TORCH_FN(argmin_cpu_error));
  m.impl("mean", TORCH_FN(mean_cpu_error));
}

}  // namespace qplugin
