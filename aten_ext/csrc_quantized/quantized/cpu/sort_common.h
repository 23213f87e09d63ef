// Helpers shared by the sort / reduce QuantizedCPU adapters.
#pragma once

#include <ATen/ATen.h>

#include <memory>

#include "cpu/sort.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {

inline void check_per_tensor_q(const char* op, const at::Tensor& self) {
  check_quantized_input(op, "self", self);
  TORCH_CHECK(self.qscheme() == at::kPerTensorAffine, "qplugin::", op,
              ": self should be a per-tensor affine quantized tensor, got qscheme ", toString(self.qscheme()),
              " (per-channel tensors are not supported by this op)");
  check_qparams(op, "self", self);
}

// Hands the glue the int_view of a fresh quantized tensor with self's qparams
// (contiguous); result() is that quantized tensor.
class QuantizedAlloc {
 public:
  explicit QuantizedAlloc(const at::Tensor& self)
      : opts_(self.options()), scale_(self.q_scale()), zp_(self.q_zero_point()), out_(std::make_shared<at::Tensor>()) {}
  cpu::ValuesAlloc fn() const {
    auto out = out_;
    auto opts = opts_;
    const double scale = scale_;
    const int64_t zp = zp_;
    return [out, opts, scale, zp](at::IntArrayRef sizes) {
      *out = at::_empty_affine_quantized(sizes, opts, scale, zp, at::MemoryFormat::Contiguous);
      return int_view(*out);
    };
  }
  const at::Tensor& result() const { return *out_; }

 private:
  at::TensorOptions opts_;
  double scale_;
  int64_t zp_;
  std::shared_ptr<at::Tensor> out_;
};

}  // namespace qplugin
