// ATen glue for sorting and reductions on plain-integer data (uint8 / int8 /
// int32) that represents per-tensor affine values `(q - zero_point) * scale`.
// Ordering follows the represented real values (the dequantized float), so
// results equal torch.sort / torch.topk / torch.max on the dequantized tensor.
// Quantized adapters: quantized/cpu/sort.cpp, quantized/cpu/reduce.cpp.
#pragma once

#include "utils/torch_api.h"

#include <functional>
#include <tuple>

#include "utils/export.h"

namespace qplugin {
namespace cpu {

// Allocates the integer tensor an op writes its values into (contiguous, the
// dtype of `data`). The quantized adapters hand out the int_view of a fresh
// quantized tensor so values are written once, in place.
using ValuesAlloc = std::function<Tensor(IntArrayRef sizes)>;

QPLUGIN_PLAIN_API std::tuple<Tensor, Tensor> sort_int(const char* op, const Tensor& data, double scale,
                                                      int64_t zero_point, int64_t dim, bool descending,
                                                      const ValuesAlloc& alloc);
QPLUGIN_PLAIN_API Tensor argsort_int(const char* op, const Tensor& data, double scale, int64_t zero_point, int64_t dim,
                                     bool descending);
QPLUGIN_PLAIN_API std::tuple<Tensor, Tensor> topk_int(const char* op, const Tensor& data, double scale,
                                                      int64_t zero_point, int64_t k, int64_t dim, bool largest,
                                                      bool sorted, const ValuesAlloc& alloc);

// max / min over all elements: a 0-dim tensor.
QPLUGIN_PLAIN_API Tensor max_all_int(const char* op, const Tensor& data, double scale, int64_t zero_point, bool is_max,
                                     const ValuesAlloc& alloc);
QPLUGIN_PLAIN_API std::tuple<Tensor, Tensor> max_dim_int(const char* op, const Tensor& data, double scale,
                                                         int64_t zero_point, int64_t dim, bool keepdim, bool is_max,
                                                         const ValuesAlloc& alloc);
QPLUGIN_PLAIN_API Tensor argmax_int(const char* op, const Tensor& data, double scale, int64_t zero_point,
                                    std::optional<int64_t> dim, bool keepdim, bool is_max);
// Mean in the integer domain: round_half_even(sum(q) / N) per output element,
// which is the input's qparams applied to the exact mean of the real values.
QPLUGIN_PLAIN_API Tensor mean_int(const char* op, const Tensor& data, OptIntListArg dim, bool keepdim,
                                  const ValuesAlloc& alloc);

// Default allocator: a plain contiguous tensor like `data`.
ValuesAlloc plain_alloc(const Tensor& data);

// ---- shared by cpu/sort.cpp and cpu/reduce.cpp ----
// How elements are ordered: by the exact real value (q - zp) * scale, which for a
// positive scale is the order of q (no float32 dequantize, whose rounding would make
// distinct qint32 values equal once |q - zp| > 2^24). 8-bit data: byte key = byte ^ mask;
// qint32: int32 keys = q (kernels/sort_kernel.h). The qparams must have passed
// check_qtensor_qparams (utils/checks.h).
struct OrderPlan {
  bool bytes = false;
  uint8_t mask = 0;  // ascending mask for the byte path
};
OrderPlan plan_order(ScalarType int_dtype, double scale, int64_t zero_point);
// int32 order keys of contiguous `data` (descending / argmin: reversed = ~key).
Tensor order_keys(const Tensor& data, const OrderPlan& plan, bool reverse);
// Wraps dim like torch (a 0-dim tensor accepts -1 and 0).
int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim);

}  // namespace cpu
}  // namespace qplugin
