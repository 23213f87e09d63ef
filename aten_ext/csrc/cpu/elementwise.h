// Plain-integer entry points of the elementwise family (add / mul / scalar
// variants, cat, comparators, matmul). Integer tensors are uint8 / int8 / int32
// holding quantized values; qparams travel beside them. The QuantizedCPU
// adapters (quantized/cpu/{add,cat,compare}.cpp) unwrap quantized tensors and
// call these.
#pragma once

#include "utils/torch_api.h"

#include <string>
#include <vector>

#include "utils/export.h"

namespace qplugin {
namespace cpu {

struct QP {
  double scale;
  int64_t zero_point;
};

// How errors name an op and its tensor arguments: the quantized op's ({"add", "qa", "qb"}: qparams
// "qa scale") or the plain op's ({"plain_add", "a", "b", true}: qparams "a_scale"), so that each op
// reports under its own names. The output qparams are "scale" / "zero_point" in both tiers.
struct Names {
  const char* op;
  const char* a;
  const char* b = "";
  bool plain = false;
  std::string scale(const std::string& arg) const { return arg + (plain ? "_scale" : " scale"); }
  std::string zero_point(const std::string& arg) const { return arg + (plain ? "_zero_point" : " zero_point"); }
};

enum class BinaryKind { kAdd, kMul };
enum class CmpOp { kEq, kNe, kGe, kLe, kGt, kLt };

// The dtype of a plain integer input (uint8 / int8 / int32: the range tag, checks.h qrange); other
// dtypes are an error naming op and arg.
ScalarType int_dtype_of(const char* op, const char* arg, const Tensor& t);

// Broadcast shape of a and b (clear error if incompatible), and the memory
// format the result keeps.
QPLUGIN_PLAIN_API std::vector<int64_t> broadcast_shape(const char* op, IntArrayRef a, IntArrayRef b);
QPLUGIN_PLAIN_API MemoryFormat binary_format(const Tensor& a, const Tensor& b, IntArrayRef out);

// out (integer, broadcast shape, dense) = requantize(a OP b).
QPLUGIN_PLAIN_API void binary_into(const Names& nm, BinaryKind kind, bool relu, const Tensor& a, QP qa, const Tensor& b,
                                   QP qb, QP qo, const Tensor& out);
Tensor add_int(const Names& nm, const Tensor& a, QP qa, const Tensor& b, QP qb, QP qo, bool relu);
Tensor mul_int(const Names& nm, const Tensor& a, QP qa, const Tensor& b, QP qb, QP qo, bool relu);

// add_scalar / mul_scalar: the output qparams torch's quantized::add_scalar /
// mul_scalar choose, and the integer transform into `out` (dense, x's format).
QPLUGIN_PLAIN_API QP add_scalar_qparams(const char* op, QP qx, ScalarType qdtype, double b);
QPLUGIN_PLAIN_API QP mul_scalar_qparams(const char* op, QP qx, ScalarType qdtype, double b);
QPLUGIN_PLAIN_API void add_scalar_into(const Names& nm, const Tensor& x, QP qx, double b, bool relu, const Tensor& out);
QPLUGIN_PLAIN_API void mul_scalar_into(const Names& nm, const Tensor& x, QP qx, double b, bool relu, const Tensor& out);

// cat: `xs` integer tensors of one dtype (cat_into also takes the quantized
// tensors themselves: it reads only sizes, strides and bytes); qo the output qparams. Output format:
// the inputs' common memory format, else contiguous.
QPLUGIN_PLAIN_API MemoryFormat cat_format(const std::vector<Tensor>& xs);
QPLUGIN_PLAIN_API std::vector<int64_t> cat_shape(const Names& nm, const std::vector<Tensor>& xs, int64_t* dim);
QPLUGIN_PLAIN_API void cat_into(const Names& nm, const std::vector<Tensor>& xs, const std::vector<QP>& qps, int64_t dim,
                                QP qo, bool relu, const Tensor& out);
Tensor cat_int(const Names& nm, const std::vector<Tensor>& xs, const std::vector<QP>& qps, int64_t dim, QP qo,
               bool relu);

// Comparators on represented real values: float(q - zp) * float(scale) OP ...
QPLUGIN_PLAIN_API Tensor compare_int(const Names& nm, CmpOp op, const Tensor& a, QP qa, const Tensor& b, QP qb);
QPLUGIN_PLAIN_API Tensor compare_scalar_int(const Names& nm, CmpOp op, const Tensor& a, QP qa, double other);

QPLUGIN_PLAIN_API const char* cmp_name(CmpOp op);

}  // namespace cpu
}  // namespace qplugin

namespace qplugin {
namespace cpu {

// quantized::matmul semantics: dequantize both operands (aten's rule),
// float32 at::matmul, quantize_per_tensor to (so, zo). a, b integer; a plain integer result.
QPLUGIN_PLAIN_API Tensor matmul_int(const Names& nm, const Tensor& a, QP qa, const Tensor& b, QP qb, QP qo);

}  // namespace cpu
}  // namespace qplugin
