// QuantizedCPU adapters for eq / ne / ge / le / gt / lt (Tensor and Scalar)
// and equal: check per-tensor quantized inputs, unwrap, call cpu/compare.cpp.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cstring>

#include "cpu/elementwise.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

using cpu::CmpOp;

void check_per_tensor(const char* op, const char* arg, const at::Tensor& t) {
  check_quantized_input(op, arg, t);
  TORCH_CHECK(t.qscheme() == at::kPerTensorAffine, "qplugin::", op, ": ", arg,
              " should be a per_tensor_affine quantized tensor, got qscheme ", toString(t.qscheme()));
  check_qparams(op, arg, t);
}

template <CmpOp kOp>
at::Tensor cmp_q(const at::Tensor& self, const at::Tensor& other) {
  const char* op = cpu::cmp_name(kOp);
  check_per_tensor(op, "self", self);
  check_per_tensor(op, "other", other);
  return cpu::compare_int({op, "self", "other"}, kOp, int_view(self), {self.q_scale(), self.q_zero_point()},
                          int_view(other), {other.q_scale(), other.q_zero_point()});
}

template <CmpOp kOp>
at::Tensor cmp_scalar_q(const at::Tensor& self, const c10::Scalar& other) {
  check_per_tensor(cpu::cmp_name(kOp), "self", self);
  return cpu::compare_scalar_int({cpu::cmp_name(kOp), "self"}, kOp, int_view(self),
                                 {self.q_scale(), self.q_zero_point()},
                                 real_scalar(cpu::cmp_name(kOp), "other", other));
}

// Same qscheme, qparams, dtype, shape and integer values.
bool equal_q(const at::Tensor& self, const at::Tensor& other) {
  check_quantized_input("equal", "self", self);
  check_quantized_input("equal", "other", other);
  check_qparams("equal", "self", self);
  check_qparams("equal", "other", other);
  if (self.qscheme() != other.qscheme() || self.scalar_type() != other.scalar_type() || self.sizes() != other.sizes()) {
    return false;
  }
  switch (self.qscheme()) {
    case at::kPerTensorAffine:
    case at::kPerTensorSymmetric:
      if (self.q_scale() != other.q_scale() || self.q_zero_point() != other.q_zero_point()) return false;
      break;
    case at::kPerChannelAffine:
    case at::kPerChannelSymmetric:
      if (self.q_per_channel_axis() != other.q_per_channel_axis() ||
          !at::equal(self.q_per_channel_scales(), other.q_per_channel_scales()) ||
          !at::equal(self.q_per_channel_zero_points(), other.q_per_channel_zero_points())) {
        return false;
      }
      break;
    default:
      TORCH_CHECK(false, "qplugin::equal: self should be per_tensor_affine or per_channel_affine, got qscheme ",
                  toString(self.qscheme()));
  }
  return at::equal(int_view(self), int_view(other));
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("eq", TORCH_FN(cmp_q<CmpOp::kEq>));
  m.impl("ne", TORCH_FN(cmp_q<CmpOp::kNe>));
  m.impl("ge", TORCH_FN(cmp_q<CmpOp::kGe>));
  m.impl("le", TORCH_FN(cmp_q<CmpOp::kLe>));
  m.impl("gt", TORCH_FN(cmp_q<CmpOp::kGt>));
  m.impl("lt", TORCH_FN(cmp_q<CmpOp::kLt>));
  m.impl("eq.Scalar", TORCH_FN(cmp_scalar_q<CmpOp::kEq>));
  m.impl("ne.Scalar", TORCH_FN(cmp_scalar_q<CmpOp::kNe>));
  m.impl("ge.Scalar", TORCH_FN(cmp_scalar_q<CmpOp::kGe>));
  m.impl("le.Scalar", TORCH_FN(cmp_scalar_q<CmpOp::kLe>));
  m.impl("gt.Scalar", TORCH_FN(cmp_scalar_q<CmpOp::kGt>));
  m.impl("lt.Scalar", TORCH_FN(cmp_scalar_q<CmpOp::kLt>));
  m.impl("equal", TORCH_FN(equal_q));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

template <cpu::CmpOp kOp>
at::Tensor cmp_cpu_error(const at::Tensor& self, const at::Tensor& other) {
  refuse_non_quantized(cpu::cmp_name(kOp), "self", self);
  refuse_non_quantized(cpu::cmp_name(kOp), "other", other);
  return self;
}
template <cpu::CmpOp kOp>
at::Tensor cmp_scalar_cpu_error(const at::Tensor& self, const c10::Scalar&) {
  refuse_non_quantized(cpu::cmp_name(kOp), "self", self);
  return self;
}
bool equal_cpu_error(const at::Tensor& self, const at::Tensor& other) {
  refuse_non_quantized("equal", "self", self);
  refuse_non_quantized("equal", "other", other);
  return false;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("eq", TORCH_FN(cmp_cpu_error<cpu::CmpOp::kEq>));
  m.impl("ne", TORCH_FN(cmp_cpu_error<cpu::CmpOp::kNe>));
  m.impl("ge", TORCH_FN(cmp_cpu_error<cpu::CmpOp::kGe>));
  m.impl("le", TORCH_FN(cmp_cpu_error<cpu::CmpOp::kLe>));
  m.impl("gt", TORCH_FN(cmp_cpu_error<cpu::CmpOp::kGt>));
  m.impl("lt", TORCH_FN(cmp_cpu_error<cpu::CmpOp::kLt>));
  m.impl("eq.Scalar", TORCH_FN(cmp_scalar_cpu_error<cpu::CmpOp::kEq>));
  m.impl("ne.Scalar", TORCH_FN(cmp_scalar_cpu_error<cpu::CmpOp::kNe>));
  m.impl("ge.Scalar", TORCH_FN(cmp_scalar_cpu_error<cpu::CmpOp::kGe>));
  m.impl("le.Scalar", TORCH_FN(cmp_scalar_cpu_error<cpu::CmpOp::kLe>));
  m.impl("gt.Scalar", TORCH_FN(cmp_scalar_cpu_error<cpu::CmpOp::kGt>));
  m.impl("lt.Scalar", TORCH_FN(cmp_scalar_cpu_error<cpu::CmpOp::kLt>));
  m.impl("equal", TORCH_FN(equal_cpu_error));
}

}  // namespace qplugin
