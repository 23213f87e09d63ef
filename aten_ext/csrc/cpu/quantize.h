// ATen glue for quantize / dequantize / int_repr (CPU layer). Other op
// families call these to move between float, plain-integer and quantized data.
#pragma once

#include "utils/torch_api.h"

#include <functional>

#include "utils/export.h"

namespace qplugin {
namespace cpu {

// A float32 input, contiguous in its kept memory format (`op` names the caller in errors).
QPLUGIN_PLAIN_API Tensor as_float_input(const char* op, const Tensor& self);
// q = quantize(x) into yp (dense in x's layout: x from as_float_input); int_dtype: uint8 / int8 / int32.
QPLUGIN_PLAIN_API void quantize_tensor_into(const Tensor& x, double scale, int64_t zero_point, ScalarType int_dtype,
                                            void* yp);
// Per-channel quantize of float `self` into the tensor make_out(x, scales f64, zero_points i64, axis, format)
// allocates (dense in format); int_dtype (uint8 / int8 / int32) picks the kernels and the range.
using PerChannelAlloc = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, MemoryFormat)>;
QPLUGIN_PLAIN_API Tensor quantize_per_channel_with(const char* op, const Tensor& self, const Tensor& scales,
                                                   const Tensor& zero_points, int64_t axis, ScalarType int_dtype,
                                                   const PerChannelAlloc& make_out);

// Plain-integer entry points: `data` is uint8 / int8 / int32. The quantize forms
// take dtype torch.uint8 / int8 / int32 and check their arguments (`op` names the caller).
Tensor quantize_per_tensor_int(const char* op, const Tensor& self, double scale, int64_t zero_point, ScalarType dtype);
Tensor quantize_per_channel_int(const char* op, const Tensor& self, const Tensor& scales, const Tensor& zero_points,
                                int64_t axis, ScalarType dtype);
// Checks per-channel qparams against integer `data`; wraps *axis.
QPLUGIN_PLAIN_API void check_per_channel_qparams(const char* op, const Tensor& data, const Tensor& scales,
                                                 const Tensor& zero_points, int64_t* axis);
QPLUGIN_PLAIN_API Tensor dequantize_per_tensor_int(const Tensor& data, double scale, int64_t zero_point);
QPLUGIN_PLAIN_API Tensor dequantize_per_channel_int(const Tensor& data, const Tensor& scales, const Tensor& zero_points,
                                                    int64_t axis);
// A dense copy of `data` in its kept memory format (int_repr).
QPLUGIN_PLAIN_API Tensor dense_copy(const Tensor& data);

// Torch's choice of qparams for a float range (fbgemm ChooseQuantizationParams
// semantics; used by the dynamic ops).
struct QParams {
  double scale;
  int32_t zero_point;
};
QPLUGIN_PLAIN_API QParams choose_qparams(float min, float max, int32_t qmin, int32_t qmax, bool reduce_range);

// memcpy split over tensor::parallel_for.
QPLUGIN_PLAIN_API void parallel_copy(void* dst, const void* src, int64_t nbytes);

}  // namespace cpu
}  // namespace qplugin
