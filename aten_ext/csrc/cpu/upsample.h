// ATen glue for nearest-neighbour 2-D upsampling (CPU layer): plain-integer
// entry points (uint8 / int8 / int32, 3-D or 4-D, any strides / memory format).
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace qplugin {
namespace cpu {

std::vector<int64_t> upsample_nearest2d_output_sizes(const char* op, at::IntArrayRef sizes,
                                                     at::IntArrayRef output_size);
// out: integer tensor of the output sizes, dense in the kept memory format.
void upsample_nearest2d_int_out(const at::Tensor& data, const at::Tensor& out);
at::Tensor upsample_nearest2d_int(const at::Tensor& data, at::IntArrayRef output_size);

} // namespace cpu
} // namespace qplugin
