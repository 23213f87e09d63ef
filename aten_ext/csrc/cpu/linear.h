// ATen glue for quantized linear (CPU layer): plain-integer entry points.
#pragma once

#include <ATen/ATen.h>

#include "packed_params/linear_packed_params.h"

namespace qplugin {
namespace cpu {

// y[..., n] (uint8, quint8 semantics) = requantized sum_k (x - x_zp) * (W[n] - w_zp[n]) + bias,
// see kernels/gemm/qgemm.h (kU8). x: uint8 [..., K]; out: uint8 [..., N], contiguous.
void linear_u8_out(const char* op, const at::Tensor& x, double x_scale, int64_t x_zero_point,
                   const LinearPackedParams& w, double y_scale, int64_t y_zero_point, bool relu,
                   at::Tensor& out);
// Output shape of linear for input sizes (checks rank and K; `op` names the caller).
std::vector<int64_t> linear_out_sizes(const char* op, at::IntArrayRef x_sizes, const LinearPackedParams& w);

// Dynamic linear: float32 x [..., K] quantized per call (per tensor, quint8,
// torch's qparams choice, reduce_range as asked); float32 result.
at::Tensor linear_dynamic(const at::Tensor& x, const c10::intrusive_ptr<LinearPackedParams>& w,
                          bool reduce_range, bool relu);

} // namespace cpu
} // namespace qplugin
