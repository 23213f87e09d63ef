// QuantizedCPU adapter for softmax: unwrap, call cpu/softmax.cpp, wrap.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/activation.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

at::Tensor softmax_q(const at::Tensor& qx, int64_t dim, double output_scale, int64_t output_zero_point) {
  constexpr const char* op = "softmax";
  check_per_tensor_input(op, "qx", qx);
  check_qparams(op, "qx", qx);
  check_scale(op, "output_scale", output_scale);
  check_zero_point(op, "output_zero_point", output_zero_point, underlying_dtype(qx.scalar_type()));
  const int64_t d = check_dim(op, "dim", dim, qx.dim());
  at::Tensor out =
      at::_empty_affine_quantized(qx.sizes(), qx.options(), output_scale, output_zero_point, kept_format(qx));
  cpu::softmax_int_out(int_view(qx), int_view(out), d, qx.q_scale(), qx.q_zero_point(), output_scale,
                       output_zero_point);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) { m.impl("softmax", TORCH_FN(softmax_q)); }

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

at::Tensor softmax_cpu_error(const at::Tensor& qx, int64_t, double, int64_t) {
  refuse_non_quantized("softmax", "qx", qx);
  return qx;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) { m.impl("softmax", TORCH_FN(softmax_cpu_error)); }

}  // namespace qplugin
