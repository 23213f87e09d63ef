// QuantizedCPU adapters for add / add_relu / mul / mul_relu / add_scalar(_relu)
// / mul_scalar / matmul: check the quantized inputs, unwrap to plain-integer
// data + qparams (int_view, no copy), call cpu/add.cpp, wrap the result.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/elementwise.h"
#include "cpu/quantize.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

using cpu::QP;

void check_per_tensor(const char* op, const char* arg, const at::Tensor& t) {
  check_quantized_input(op, arg, t);
  TORCH_CHECK(t.qscheme() == at::kPerTensorAffine, "qplugin::", op, ": ", arg,
              " should be a per_tensor_affine quantized tensor, got qscheme ", toString(t.qscheme()));
  check_qparams(op, arg, t);
}

QP qp_of(const at::Tensor& t) { return {t.q_scale(), t.q_zero_point()}; }

template <cpu::BinaryKind kKind, bool kRelu>
at::Tensor binary_q(const at::Tensor& qa, const at::Tensor& qb, double scale, int64_t zero_point) {
  const char* op = kKind == cpu::BinaryKind::kAdd ? (kRelu ? "add_relu" : "add") : (kRelu ? "mul_relu" : "mul");
  check_per_tensor(op, "qa", qa);
  check_per_tensor(op, "qb", qb);
  TORCH_CHECK(qa.scalar_type() == qb.scalar_type(), "qplugin::", op, ": qb should have the dtype of qa (",
              qa.scalar_type(), "), got ", qb.scalar_type());
  check_scale(op, "scale", scale);
  check_zero_point(op, "zero_point", zero_point, underlying_dtype(qa.scalar_type()));
  const auto shape = cpu::broadcast_shape(op, qa.sizes(), qb.sizes());
  at::Tensor out =
      at::_empty_affine_quantized(shape, qa.options(), scale, zero_point, cpu::binary_format(qa, qb, shape));
  cpu::binary_into({op, "qa", "qb"}, kKind, kRelu, int_view(qa), qp_of(qa), int_view(qb), qp_of(qb),
                   {scale, zero_point}, int_view(out));
  return out;
}

template <bool kRelu>
at::Tensor add_scalar_q(const at::Tensor& qa, const c10::Scalar& b) {
  const char* op = kRelu ? "add_scalar_relu" : "add_scalar";
  check_per_tensor(op, "qa", qa);
  const double c = real_scalar(op, "b", b);
  const QP qo = cpu::add_scalar_qparams(op, qp_of(qa), underlying_dtype(qa.scalar_type()), c);
  at::Tensor out = at::_empty_affine_quantized(qa.sizes(), qa.options(), qo.scale, qo.zero_point, kept_format(qa));
  cpu::add_scalar_into({op, "qa"}, int_view(qa), qp_of(qa), c, kRelu, int_view(out));
  return out;
}

at::Tensor mul_scalar_q(const at::Tensor& qa, const c10::Scalar& b) {
  constexpr const char* op = "mul_scalar";
  check_per_tensor(op, "qa", qa);
  const double c = real_scalar(op, "b", b);
  const QP qo = cpu::mul_scalar_qparams(op, qp_of(qa), underlying_dtype(qa.scalar_type()), c);
  at::Tensor out = at::_empty_affine_quantized(qa.sizes(), qa.options(), qo.scale, qo.zero_point, kept_format(qa));
  cpu::mul_scalar_into({op, "qa"}, int_view(qa), qp_of(qa), c, false, int_view(out));
  return out;
}

at::Tensor matmul_quantized(const at::Tensor& qa, const at::Tensor& qb, double scale, int64_t zero_point) {
  check_per_tensor("matmul", "qa", qa);
  check_per_tensor("matmul", "qb", qb);
  TORCH_CHECK(qa.scalar_type() == qb.scalar_type(), "qplugin::matmul: qb should have the dtype of qa (",
              qa.scalar_type(), "), got ", qb.scalar_type());
  return at::_make_per_tensor_quantized_tensor(
      cpu::matmul_int({"matmul", "qa", "qb"}, int_view(qa), qp_of(qa), int_view(qb), qp_of(qb), {scale, zero_point}),
      scale, zero_point);
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("add", TORCH_FN((binary_q<cpu::BinaryKind::kAdd, false>)));
  m.impl("add_relu", TORCH_FN((binary_q<cpu::BinaryKind::kAdd, true>)));
  m.impl("mul", TORCH_FN((binary_q<cpu::BinaryKind::kMul, false>)));
  m.impl("mul_relu", TORCH_FN((binary_q<cpu::BinaryKind::kMul, true>)));
  m.impl("add_scalar", TORCH_FN(add_scalar_q<false>));
  m.impl("add_scalar_relu", TORCH_FN(add_scalar_q<true>));
  m.impl("mul_scalar", TORCH_FN(mul_scalar_q));
  m.impl("matmul", TORCH_FN(matmul_quantized));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

// Wrong tensor kind: these ops take quantized tensors.
at::Tensor binary_cpu_error(const char* op, const at::Tensor& qa, const at::Tensor& qb) {
  refuse_non_quantized(op, "qa", qa);
  refuse_non_quantized(op, "qb", qb);
  TORCH_CHECK(false, "qplugin::", op, ": qa and qb should be quantized tensors");
}
at::Tensor add_cpu(const at::Tensor& a, const at::Tensor& b, double, int64_t) { return binary_cpu_error("add", a, b); }
at::Tensor add_relu_cpu(const at::Tensor& a, const at::Tensor& b, double, int64_t) {
  return binary_cpu_error("add_relu", a, b);
}
at::Tensor mul_cpu(const at::Tensor& a, const at::Tensor& b, double, int64_t) { return binary_cpu_error("mul", a, b); }
at::Tensor mul_relu_cpu(const at::Tensor& a, const at::Tensor& b, double, int64_t) {
  return binary_cpu_error("mul_relu", a, b);
}
at::Tensor matmul_cpu(const at::Tensor& a, const at::Tensor& b, double, int64_t) {
  return binary_cpu_error("matmul", a, b);
}
at::Tensor add_scalar_cpu(const at::Tensor& a, const c10::Scalar&) {
  refuse_non_quantized("add_scalar", "qa", a);
  return a;
}
at::Tensor add_scalar_relu_cpu(const at::Tensor& a, const c10::Scalar&) {
  refuse_non_quantized("add_scalar_relu", "qa", a);
  return a;
}
at::Tensor mul_scalar_cpu(const at::Tensor& a, const c10::Scalar&) {
  refuse_non_quantized("mul_scalar", "qa", a);
  return a;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("add", TORCH_FN(add_cpu));
  m.impl("add_relu", TORCH_FN(add_relu_cpu));
  m.impl("mul", TORCH_FN(mul_cpu));
  m.impl("mul_relu", TORCH_FN(mul_relu_cpu));
  m.impl("matmul", TORCH_FN(matmul_cpu));
  m.impl("add_scalar", TORCH_FN(add_scalar_cpu));
  m.impl("add_scalar_relu", TORCH_FN(add_scalar_relu_cpu));
  m.impl("mul_scalar", TORCH_FN(mul_scalar_cpu));
}

}  // namespace qplugin
