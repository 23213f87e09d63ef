// CPU glue for matmul: torch's quantized::matmul (dequantize, float32 matmul,
// quantize) on plain-integer operands, with up-front shape / dtype checks.
#include "utils/torch_api.h"

#include <algorithm>
#include <string>

#include "cpu/elementwise.h"
#include "cpu/quantize.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {

namespace {

// torch.matmul's broadcast of the batch dims (all but the last two; only where both operands have
// three or more dims, the other cases fold into a 2-d product): empty when they broadcast, else
// torch's own message (its infer_size's, the dims counted in the broadcast shape).
std::string batch_broadcast_error(IntArrayRef a, IntArrayRef b) {
  if (a.size() < 3 || b.size() < 3) return std::string();
  const int64_t na = static_cast<int64_t>(a.size()) - 2, nb = static_cast<int64_t>(b.size()) - 2;
  const int64_t n = std::max(na, nb);
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t ia = na - n + i, ib = nb - n + i;
    const int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      return qplugin::str("The size of tensor a (", sa, ") must match the size of tensor b (", sb,
                          ") at non-singleton dimension ", i);
    }
  }
  return std::string();
}

}  // namespace

Tensor matmul_int(const Names& nm, const Tensor& a, QP qa, const Tensor& b, QP qb, QP qo) {
  const char* op = nm.op;
  const ScalarType qt = int_dtype_of(op, nm.a, a);
  QP_CHECK(qt != kInt, "qplugin::", op, ": ", nm.a, " should be ",
           nm.plain ? "uint8 or int8, got int32" : "torch.quint8 or torch.qint8, got torch.qint32");
  QP_CHECK(tensor::dtype(b) == tensor::dtype(a), "qplugin::", op, ": ", nm.b, " should have the dtype of ", nm.a, " (",
           range_name(qt), "), got ", range_name(int_dtype_of(op, nm.b, b)));
  check_scale(op, "scale", qo.scale);
  check_zero_point(op, "zero_point", qo.zero_point, qt);
  QP_CHECK_VALUE(a.dim() >= 1 && b.dim() >= 1, "qplugin::", op, ": ", nm.a, " and ", nm.b,
                 " should have at least one dim each, got shapes ", a.sizes(), " and ", b.sizes());
  const int64_t k_b = b.dim() == 1 ? b.size(0) : b.size(-2);
  QP_CHECK_VALUE(a.size(-1) == k_b, "qplugin::", op, ": ", nm.a, "'s last dim (", a.size(-1), ") should equal ", nm.b,
                 "'s ", (b.dim() == 1 ? "only" : "second-to-last"), " dim, got shapes ", a.sizes(), " and ", b.sizes());
  const Tensor fa = dequantize_per_tensor_int(a, qa.scale, qa.zero_point);
  const Tensor fb = dequantize_per_tensor_int(b, qb.scale, qb.zero_point);
  // batch dims that do not broadcast (found by the fuzzer): refused before torch's matmul
  const std::string why = batch_broadcast_error(a.sizes(), b.sizes());
  QP_CHECK_VALUE(why.empty(), "qplugin::", op, ": the batch dims of ", nm.a, " and ", nm.b,
                 " should broadcast, got shapes ", a.sizes(), " and ", b.sizes(), " (", why, ")");
  const Tensor prod = tensor::matmul(fa, fb);
  return cpu::quantize_per_tensor_int(op, prod, qo.scale, qo.zero_point, tensor::dtype(a));
}

}  // namespace cpu
}  // namespace qplugin
