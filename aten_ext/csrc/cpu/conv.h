// Convolution glue on plain integer data (uint8 activations, packed int8 weights).
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "packed_params/conv_packed_params.h"

namespace qplugin {
namespace cpu {

// Checks x (N, C, spatial...) against the packed weights and returns the output
// sizes (N, OC, spatial...).
std::vector<int64_t> conv_output_sizes(const char* op, at::IntArrayRef x_sizes, const ConvPackedParams& p);

// The memory format of conv outputs (and the one inputs are brought to).
at::MemoryFormat conv_memory_format(int64_t dim);

// y = requant(conv(x) [+ dequant(add)]) into y_int (uint8, output sizes, channels_last for
// 4-d / 5-d, the squeezed channels_last 4-d for 1-d). x_int / add_int: uint8, any layout.
void conv_forward_int(const char* op, const at::Tensor& x_int, double x_scale, int64_t x_zp,
                      ConvPackedParams& p, double y_scale, int64_t y_zp, bool relu,
                      const at::Tensor* add_int, double add_scale, int64_t add_zp, at::Tensor& y_int);

} // namespace cpu
} // namespace qplugin
