// Convolution glue on plain integer data (uint8 activations, packed int8 weights).
#pragma once

#include "utils/torch_api.h"

#include <optional>
#include <vector>

#include "cpu/conv_weights.h"
#include "kernels/conv_kernel.h"
#include "utils/export.h"

namespace qplugin {
namespace cpu {

// Checks x (N, C, spatial...) against the packed weights and returns the output
// sizes (N, OC, spatial...).
QPLUGIN_PLAIN_API std::vector<int64_t> conv_output_sizes(const char* op, IntArrayRef x_sizes, const ConvWeights& p);

// The 3-d geometry (D = 1 for 1d / 2d, H = 1 for 1d) of input sizes xs and output sizes ys
// against p (conv or transposed conv).
kernels::ConvGeom conv_geom(IntArrayRef xs, const ConvWeights& p, const std::vector<int64_t>& ys);

// The memory format of conv outputs (and the one inputs are brought to).
QPLUGIN_PLAIN_API MemoryFormat conv_memory_format(int64_t dim);

// A uint8 conv input's bytes as a dense channels_last (N, [D,] H, W, C) buffer (1-d: as (N, C, 1, L)).
// `data` points into x itself when it is one; into a copy otherwise: for a default-order input of
// at most 256 KiB this thread's scratch buffer `slot` (0 or 1, reused from call to call: valid until
// this thread's next conv), else a new tensor held in `tensor`.
struct ConvInput {
  const uint8_t* data = nullptr;
  std::optional<Tensor> tensor;
};
ConvInput conv_channels_last_input(const Tensor& x, int64_t spatial, int slot);

// An empty output of sizes ys and dtype `dtype` in conv's output layout (channels_last; 1-d: the
// squeezed channels_last 4-d tensor).
Tensor conv_empty_output(const std::vector<int64_t>& ys, ScalarType dtype);

// The activation / output qparams checks of every conv (quint8 range).
void check_conv_io_qparams(const char* op, double x_scale, int64_t x_zp, double y_scale, int64_t y_zp);

// Transposed conv (cpu/conv_transpose.cpp): checks x against p (made by conv_transpose*_prepack)
// and returns the output sizes (N, OC, spatial...):
//   out = (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
QPLUGIN_PLAIN_API std::vector<int64_t> conv_transpose_output_sizes(const char* op, IntArrayRef x_sizes,
                                                                   const ConvWeights& p);

// y = requant(conv_transpose(x)) into y_int (uint8, output sizes, conv's output layout); x_int
// uint8, any layout.
QPLUGIN_PLAIN_API void conv_transpose_forward_int(const char* op, const Tensor& x_int, double x_scale, int64_t x_zp,
                                                  ConvWeights& p, double y_scale, int64_t y_zp, Tensor& y_int);
// The same reading the kernel layouts k (made for path k.isa) instead of p's own; p describes the
// conv (conv_describe_int is enough).
void conv_transpose_forward_view(const char* op, const Tensor& x_int, double x_scale, int64_t x_zp,
                                 const ConvWeights& p, const ConvPackedView& k, double y_scale, int64_t y_zp,
                                 Tensor& y_int);

// y = requant(conv(x) [+ dequant(add)]) into y_int (uint8, output sizes, channels_last for
// 4-d / 5-d, the squeezed channels_last 4-d for 1-d). x_int / add_int: uint8, any layout.
QPLUGIN_PLAIN_API void conv_forward_int(const char* op, const Tensor& x_int, double x_scale, int64_t x_zp,
                                        ConvWeights& p, double y_scale, int64_t y_zp, bool relu, const Tensor* add_int,
                                        double add_scale, int64_t add_zp, Tensor& y_int);
// The same reading the kernel layouts k (made for path k.isa) instead of p's own; p describes the
// conv (conv_describe_int is enough).
void conv_forward_view(const char* op, const Tensor& x_int, double x_scale, int64_t x_zp, const ConvWeights& p,
                       const ConvPackedView& k, double y_scale, int64_t y_zp, bool relu, const Tensor* add_int,
                       double add_scale, int64_t add_zp, Tensor& y_int);

}  // namespace cpu
}  // namespace qplugin
