// Raw-pointer quantize / dequantize kernels on plain integer data. No ATen.
// Numerics: kernels/quantize_math.h. Threading is the caller's (cpu/quantize.cpp).
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// clang-format off
#define QPLUGIN_QUANTIZE_KERNELS(X)                                                            \
  /* 8-bit per-tensor: y[i] = clamp(nearbyint(float(x[i] * inv_scale)) + zero_point), NaN -> qmax */ \
  X(void, quantize_u8, (const float* x, uint8_t* y, int64_t n, float inv_scale, int32_t zero_point)) \
  X(void, quantize_s8, (const float* x, int8_t* y, int64_t n, float inv_scale, int32_t zero_point))  \
  /* the same with non-temporal stores (huge inputs: the output is not read back soon) */          \
  X(void, quantize_u8_stream, (const float* x, uint8_t* y, int64_t n, float inv_scale, int32_t zero_point)) \
  X(void, quantize_s8_stream, (const float* x, int8_t* y, int64_t n, float inv_scale, int32_t zero_point))  \
  /* 8-bit per-channel (one channel's run): the same rule, NaN -> 0 */                          \
  X(void, quantize_ch_u8, (const float* x, uint8_t* y, int64_t n, float inv_scale, int32_t zero_point)) \
  X(void, quantize_ch_s8, (const float* x, int8_t* y, int64_t n, float inv_scale, int32_t zero_point))  \
  /* qint32 (per tensor, or one channel's run): clamp(nearbyint(double(x[i]) / scale) + zero_point) */ \
  X(void, quantize_s32, (const float* x, int32_t* y, int64_t n, double scale, int32_t zero_point))   \
  /* Per-channel, element i uses params[i % period] (channel varies fastest) */                  \
  X(void, quantize_periodic_u8, (const float* x, uint8_t* y, int64_t n, int64_t period, const float* inv_scales, const int32_t* zero_points)) \
  X(void, quantize_periodic_s8, (const float* x, int8_t* y, int64_t n, int64_t period, const float* inv_scales, const int32_t* zero_points))  \
  X(void, quantize_periodic_s32, (const float* x, int32_t* y, int64_t n, int64_t period, const double* scales, const int32_t* zero_points)) \
  /* Per-tensor dequantize: float(q - zp) * scale; stream: non-temporal stores (huge outputs) */ \
  X(void, dequantize_u8, (const uint8_t* q, float* y, int64_t n, float scale, int32_t zero_point, bool stream)) \
  X(void, dequantize_s8, (const int8_t* q, float* y, int64_t n, float scale, int32_t zero_point, bool stream))  \
  X(void, dequantize_s32, (const int32_t* q, float* y, int64_t n, float scale, int32_t zero_point, bool stream)) \
  /* Per-channel dequantize of one channel's run: float(double(q - zp) * scale) */            \
  X(void, dequantize_channel_u8, (const uint8_t* q, float* y, int64_t n, double scale, int32_t zero_point)) \
  X(void, dequantize_channel_s8, (const int8_t* q, float* y, int64_t n, double scale, int32_t zero_point))  \
  X(void, dequantize_channel_s32, (const int32_t* q, float* y, int64_t n, double scale, int32_t zero_point)) \
  X(void, dequantize_periodic_u8, (const uint8_t* q, float* y, int64_t n, int64_t period, const double* scales, const int32_t* zero_points)) \
  X(void, dequantize_periodic_s8, (const int8_t* q, float* y, int64_t n, int64_t period, const double* scales, const int32_t* zero_points))  \
  X(void, dequantize_periodic_s32, (const int32_t* q, float* y, int64_t n, int64_t period, const double* scales, const int32_t* zero_points))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_QUANTIZE_KERNELS)

}  // namespace kernels
}  // namespace qplugin
