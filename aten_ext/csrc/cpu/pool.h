// ATen glue for 2-D pooling and 3-D average pooling (CPU layer): argument checks, output shapes and
// the plain-integer entry points (uint8 / int8 / int32 tensors, 3-D (C, H, W)
// or 4-D (N, C, H, W), any strides / memory format). The QuantizedCPU
// adapters (quantized/cpu/pool.cpp) call the *_out forms on int_view()s.
#pragma once

#include "utils/torch_api.h"

#include <array>
#include <vector>

#include "utils/export.h"

namespace qplugin {
namespace cpu {

// Validated pooling window, stride, padding and dilation (one value per dim).
struct Pool2dWindow {
  int64_t kH, kW, sH, sW, pH, pW, dH, dW;
  bool ceil_mode;
};

// Checks the arguments of max_pool2d / avg_pool2d (`op` names the op in
// messages) for an input of `sizes`; returns the window. `dilation` may be
// empty (avg_pool2d: 1).
QPLUGIN_PLAIN_API Pool2dWindow check_pool2d_args(const char* op, IntArrayRef sizes, IntArrayRef kernel_size,
                                                 IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                 bool ceil_mode);
// Output sizes ([C, OH, OW] or [N, C, OH, OW]); raises if OH or OW < 1.
QPLUGIN_PLAIN_API std::vector<int64_t> pool2d_output_sizes(const char* op, IntArrayRef sizes, const Pool2dWindow& w);
QPLUGIN_PLAIN_API std::vector<int64_t> adaptive_output_sizes(const char* op, IntArrayRef sizes,
                                                             IntArrayRef output_size);
QPLUGIN_PLAIN_API void check_pool_input_rank(const char* op, const char* arg, const Tensor& t);

// The memory format pooling keeps: channels_last for 4-D channels_last inputs.
QPLUGIN_PLAIN_API MemoryFormat pool_format(const Tensor& t);

// out: an integer tensor of the output sizes, dense in pool_format(data).
QPLUGIN_PLAIN_API void max_pool2d_int_out(const Tensor& data, const Pool2dWindow& w, const Tensor& out);
// Average pooling of integer data with zero point `zero_point` (output keeps it).
QPLUGIN_PLAIN_API void avg_pool2d_int_out(const Tensor& data, int64_t zero_point, const Pool2dWindow& w,
                                          bool count_include_pad, std::optional<int64_t> divisor_override,
                                          const Tensor& out);
QPLUGIN_PLAIN_API void adaptive_avg_pool2d_int_out(const Tensor& data, const Tensor& out);

// Plain-integer entry points (allocate the output).
Tensor max_pool2d_int(const Tensor& data, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      IntArrayRef dilation, bool ceil_mode);
Tensor avg_pool2d_int(const Tensor& data, int64_t zero_point, IntArrayRef kernel_size, IntArrayRef stride,
                      IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool2d_int(const Tensor& data, IntArrayRef output_size);

// ---- 3-D average pooling (4-D (C, D, H, W) or 5-D (N, C, D, H, W) input; 5-D
// channels_last_3d inputs keep their format), same kernels and rounding as 2-D.
struct Pool3dWindow {
  std::array<int64_t, 3> k, s, p;  // (D, H, W)
  bool ceil_mode;
};
QPLUGIN_PLAIN_API void check_divisor_override(const char* op, std::optional<int64_t> divisor_override);
QPLUGIN_PLAIN_API void check_pool3d_input_rank(const char* op, const char* arg, const Tensor& t);
QPLUGIN_PLAIN_API MemoryFormat pool3d_format(const Tensor& t);
// kernel_size: 1 or 3 entries; stride: 0 (= kernel_size), 1 or 3; padding: 1 or 3.
QPLUGIN_PLAIN_API Pool3dWindow check_pool3d_args(const char* op, IntArrayRef kernel_size, IntArrayRef stride,
                                                 IntArrayRef padding, bool ceil_mode);
QPLUGIN_PLAIN_API std::vector<int64_t> pool3d_output_sizes(const char* op, IntArrayRef sizes, const Pool3dWindow& w);
QPLUGIN_PLAIN_API std::vector<int64_t> adaptive3d_output_sizes(const char* op, IntArrayRef sizes,
                                                               IntArrayRef output_size);
QPLUGIN_PLAIN_API void avg_pool3d_int_out(const Tensor& data, int64_t zero_point, const Pool3dWindow& w,
                                          bool count_include_pad, std::optional<int64_t> divisor_override,
                                          const Tensor& out);
QPLUGIN_PLAIN_API void adaptive_avg_pool3d_int_out(const Tensor& data, const Tensor& out);

}  // namespace cpu
}  // namespace qplugin
