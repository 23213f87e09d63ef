// CPU glue for matmul: torch's quantized::matmul (dequantize, float32 matmul,
// quantize) on plain-integer operands, with up-front shape / dtype checks.
#include <torch/library.h>

#include "cpu/elementwise.h"
#include "cpu/quantize.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {

Tensor matmul_int(const Names& nm, const Tensor& a, QP qa, const Tensor& b, QP qb, QP qo) {
  const char* op = nm.op;
  const ScalarType qt = int_dtype_of(op, nm.a, a);
  QP_CHECK(qt != kInt, "qplugin::", op, ": ", nm.a, " should be ",
              nm.plain ? "uint8 or int8, got int32" : "torch.quint8 or torch.qint8, got torch.qint32");
  QP_CHECK(b.scalar_type() == a.scalar_type(), "qplugin::", op, ": ", nm.b, " should have the dtype of ", nm.a, " (",
              range_name(qt), "), got ", range_name(int_dtype_of(op, nm.b, b)));
  check_scale(op, "scale", qo.scale);
  check_zero_point(op, "zero_point", qo.zero_point, qt);
  QP_CHECK_VALUE(a.dim() >= 1 && b.dim() >= 1, "qplugin::", op, ": ", nm.a, " and ", nm.b,
                    " should have at least one dim each, got shapes ", a.sizes(), " and ", b.sizes());
  const int64_t k_b = b.dim() == 1 ? b.size(0) : b.size(-2);
  QP_CHECK_VALUE(a.size(-1) == k_b, "qplugin::", op, ": ", nm.a, "'s last dim (", a.size(-1), ") should equal ",
                    nm.b, "'s ", (b.dim() == 1 ? "only" : "second-to-last"), " dim, got shapes ", a.sizes(), " and ",
                    b.sizes());
  const Tensor fa = dequantize_per_tensor_int(a, qa.scale, qa.zero_point);
  const Tensor fb = dequantize_per_tensor_int(b, qb.scale, qb.zero_point);
  Tensor prod;
  try {
    prod = at::matmul(fa, fb);
  } catch (const c10::Error& e) {  // batch dims that do not broadcast (found by the fuzzer)
    QP_CHECK_VALUE(false, "qplugin::", op, ": the batch dims of ", nm.a, " and ", nm.b,
                      " should broadcast, got shapes ", a.sizes(), " and ", b.sizes(), " (", e.what_without_backtrace(),
                      ")");
  }
  return cpu::quantize_per_tensor_int(op, prod, qo.scale, qo.zero_point, a.scalar_type());
}

}  // namespace cpu
}  // namespace qplugin
