// ATen glue for quantize / dequantize / int_repr (CPU layer). Other op
// families call these to move between float, plain-integer and quantized data.
#pragma once

#include <ATen/ATen.h>

namespace qplugin {
namespace cpu {

at::Tensor quantize_per_tensor(const at::Tensor& self, double scale, int64_t zero_point,
                               at::ScalarType dtype);
at::Tensor quantize_per_tensor_dynamic(const at::Tensor& self, at::ScalarType dtype,
                                       bool reduce_range);
at::Tensor quantize_per_channel(const at::Tensor& self, const at::Tensor& scales,
                                const at::Tensor& zero_points, int64_t axis, at::ScalarType dtype);
at::Tensor make_per_tensor_quantized_tensor(const at::Tensor& self, double scale, int64_t zero_point);
at::Tensor make_per_channel_quantized_tensor(const at::Tensor& self, const at::Tensor& scales,
                                             const at::Tensor& zero_points, int64_t axis);

// Plain-integer entry points: `data` is uint8 / int8 / int32. The quantize forms
// take dtype torch.uint8 / int8 / int32 and check their arguments (`op` names the caller).
at::Tensor quantize_per_tensor_int(const char* op, const at::Tensor& self, double scale, int64_t zero_point,
                                   at::ScalarType dtype);
at::Tensor quantize_per_channel_int(const char* op, const at::Tensor& self, const at::Tensor& scales,
                                    const at::Tensor& zero_points, int64_t axis, at::ScalarType dtype);
// Checks per-channel qparams against integer `data`; wraps *axis.
void check_per_channel_qparams(const char* op, const at::Tensor& data, const at::Tensor& scales,
                               const at::Tensor& zero_points, int64_t* axis);
at::Tensor dequantize_per_tensor_int(const at::Tensor& data, double scale, int64_t zero_point);
at::Tensor dequantize_per_channel_int(const at::Tensor& data, const at::Tensor& scales,
                                      const at::Tensor& zero_points, int64_t axis);
// A dense copy of `data` in its kept memory format (int_repr).
at::Tensor dense_copy(const at::Tensor& data);

// Torch's choice of qparams for a float range (fbgemm ChooseQuantizationParams
// semantics; used by the dynamic ops).
struct QParams {
  double scale;
  int32_t zero_point;
};
QParams choose_qparams(float min, float max, int32_t qmin, int32_t qmax, bool reduce_range);

// memcpy split over at::parallel_for.
void parallel_copy(void* dst, const void* src, int64_t nbytes);

} // namespace cpu
} // namespace qplugin
