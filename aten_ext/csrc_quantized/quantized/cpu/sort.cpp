// QuantizedCPU adapters for sort / argsort / topk: per-tensor quantized input
// -> plain-integer glue (cpu/sort.cpp) -> values in a quantized tensor with
// the input's qparams, written in place through its int_view.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/sort.h"
#include "quantized/cpu/sort_common.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

std::tuple<at::Tensor, at::Tensor> sort_q(const at::Tensor& self, int64_t dim, bool descending,
                                          c10::optional<bool> stable) {
  check_per_tensor_q("sort", self);
  (void)stable;  // always stable: the unstable contract is a subset
  QuantizedAlloc out(self);
  auto r = cpu::sort_int("sort", int_view(self), self.q_scale(), self.q_zero_point(), dim, descending, out.fn());
  return {out.result(), std::get<1>(r)};
}

at::Tensor argsort_q(const at::Tensor& self, int64_t dim, bool descending) {
  check_per_tensor_q("argsort", self);
  return cpu::argsort_int("argsort", int_view(self), self.q_scale(), self.q_zero_point(), dim, descending);
}

std::tuple<at::Tensor, at::Tensor> topk_q(const at::Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  check_per_tensor_q("topk", self);
  QuantizedAlloc out(self);
  auto r =
      cpu::topk_int("topk", int_view(self), self.q_scale(), self.q_zero_point(), k, dim, largest, sorted, out.fn());
  return {out.result(), std::get<1>(r)};
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("sort", TORCH_FN(sort_q));
  m.impl("argsort", TORCH_FN(argsort_q));
  m.impl("topk", TORCH_FN(topk_q));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

// Wrong tensor kind: these ops take quantized tensors.
std::tuple<at::Tensor, at::Tensor> sort_cpu_error(const at::Tensor& self, int64_t, bool, c10::optional<bool>) {
  refuse_non_quantized("sort", "self", self);
  TORCH_CHECK(false, "unreachable");
}
at::Tensor argsort_cpu_error(const at::Tensor& self, int64_t, bool) {
  refuse_non_quantized("argsort", "self", self);
  TORCH_CHECK(false, "unreachable");
}
std::tuple<at::Tensor, at::Tensor> topk_cpu_error(const at::Tensor& self, int64_t, int64_t, bool, bool) {
  refuse_non_quantized("topk", "self", self);
  TORCH_CHECK(false, "unreachable");
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("sort", TORCH_FN(sort_cpu_error));
  m.impl("argsort", TORCH_FN(argsort_cpu_error));
  m.impl("topk", TORCH_FN(topk_cpu_error));
}

}  // namespace qplugin
