// QuantizedCPU adapters for cat / cat_relu: check every input, pick the output
// qparams (given, or the first input's), unwrap, call cpu/cat.cpp.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/elementwise.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

template <bool kRelu>
at::Tensor cat_q(const at::TensorList qx, int64_t dim, std::optional<double> scale, std::optional<int64_t> zero_point) {
  const char* op = kRelu ? "cat_relu" : "cat";
  TORCH_CHECK_VALUE(!qx.empty(), "qplugin::", op, ": qx should be a non-empty list of tensors, got an empty list");
  std::vector<at::Tensor> xs;
  std::vector<cpu::QP> qps;
  for (size_t i = 0; i < qx.size(); ++i) {
    const at::Tensor& t = qx[i];
    TORCH_CHECK(t.is_quantized(), "qplugin::", op, ": qx[", i,
                "] should be a quantized tensor (quint8, qint8 or qint32), got a non-quantized tensor of dtype ",
                t.scalar_type());
    TORCH_CHECK(t.qscheme() == at::kPerTensorAffine, "qplugin::", op, ": qx[", i,
                "] should be a per_tensor_affine quantized tensor, got qscheme ", toString(t.qscheme()));
    TORCH_CHECK(t.scalar_type() == qx[0].scalar_type(), "qplugin::", op, ": qx[", i,
                "] should have the dtype of qx[0] (", qx[0].scalar_type(), "), got ", t.scalar_type());
    check_qparams(op, ("qx[" + std::to_string(i) + "]").c_str(), t);
    xs.push_back(t);  // cat_into reads only sizes, strides and bytes: no int_view per input
    qps.push_back({t.q_scale(), t.q_zero_point()});
  }
  const double so = scale.has_value() ? *scale : qx[0].q_scale();
  const int64_t zo = zero_point.has_value() ? *zero_point : qx[0].q_zero_point();
  check_scale(op, "scale", so);
  check_zero_point(op, "zero_point", zo, underlying_dtype(qx[0].scalar_type()));
  int64_t d = dim;
  const auto shape = cpu::cat_shape({op, "qx"}, xs, &d);
  at::Tensor out = at::_empty_affine_quantized(shape, qx[0].options(), so, zo, cpu::cat_format(xs));
  cpu::cat_into({op, "qx"}, xs, qps, d, {so, zo}, kRelu, int_view(out));
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("cat", TORCH_FN(cat_q<false>));
  m.impl("cat_relu", TORCH_FN(cat_q<true>));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

at::Tensor cat_cpu_error(const char* op, const at::TensorList& qx) {
  TORCH_CHECK_VALUE(!qx.empty(), "qplugin::", op, ": qx should be a non-empty list of tensors, got an empty list");
  // reached only when no tensor is quantized (one would dispatch to QuantizedCPU)
  TORCH_CHECK(false, "qplugin::", op,
              ": qx[0] should be a quantized tensor (quint8, qint8 or qint32), got a "
              "non-quantized tensor of dtype ",
              qx[0].scalar_type());
}
at::Tensor cat_cpu(const at::TensorList qx, int64_t, std::optional<double>, std::optional<int64_t>) {
  return cat_cpu_error("cat", qx);
}
at::Tensor cat_relu_cpu(const at::TensorList qx, int64_t, std::optional<double>, std::optional<int64_t>) {
  return cat_cpu_error("cat_relu", qx);
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("cat", TORCH_FN(cat_cpu));
  m.impl("cat_relu", TORCH_FN(cat_relu_cpu));
}

// An empty list carries no dispatch key; the dispatcher then takes this entry.
TORCH_LIBRARY_IMPL(qplugin, CompositeExplicitAutograd, m) {
  m.impl("cat", TORCH_FN(cat_cpu));
  m.impl("cat_relu", TORCH_FN(cat_relu_cpu));
}

}  // namespace qplugin
