// ATen glue for nearest-neighbour 2-D upsampling (CPU layer): plain-integer
// entry points (uint8 / int8 / int32, 3-D or 4-D, any strides / memory format).
#pragma once

#include "utils/torch_api.h"

#include <vector>

#include "utils/export.h"

namespace qplugin {
namespace cpu {

QPLUGIN_PLAIN_API std::vector<int64_t> upsample_nearest2d_output_sizes(const char* op, IntArrayRef sizes,
                                                                       IntArrayRef output_size);
// out: integer tensor of the output sizes, dense in the kept memory format.
QPLUGIN_PLAIN_API void upsample_nearest2d_int_out(const Tensor& data, const Tensor& out);
Tensor upsample_nearest2d_int(const Tensor& data, IntArrayRef output_size);
// Bilinear (torch's upsample_bilinear2d source-index rule; scales_h / scales_w as aten's): 8-bit data,
// out as for nearest. The output keeps the input's qparams, so no zero point is needed.
QPLUGIN_PLAIN_API void upsample_bilinear2d_int_out(const Tensor& data, const Tensor& out, bool align_corners,
                                                   std::optional<double> scales_h, std::optional<double> scales_w);

}  // namespace cpu
}  // namespace qplugin
