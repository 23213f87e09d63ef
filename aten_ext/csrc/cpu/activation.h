// ATen glue for the activation and normalization families (CPU layer):
// plain-integer entry points (uint8 / int8 / int32 data + per-tensor qparams)
// that the QuantizedCPU adapters (quantized/cpu/{activation,norm,softmax}.cpp)
// call with int_view() of their tensors.
//
// *_out functions write into `out`: a dense tensor of data's sizes and dtype,
// contiguous in kept_format(data) (it may be `data` itself when data is dense:
// every kernel here reads element i before writing it).
#pragma once

#include "utils/torch_api.h"

#include <vector>

#include "kernels/activation_math.h"
#include "utils/export.h"

namespace qplugin {
namespace cpu {

// ---- activations (cpu/activation.cpp) ----
// out = min(max(data, lo), hi) on the integers (relu, relu6, clamp).
QPLUGIN_PLAIN_API void clamp_int_out(const Tensor& data, const Tensor& out, int64_t lo, int64_t hi);
// The same on n raw elements (x may equal y): elem_size 1 (is_signed: int8, else
// uint8) or 4 (int32). For adapters whose tensors are already dense.
QPLUGIN_PLAIN_API void clamp_raw(const void* x, void* y, int64_t n, int64_t elem_size, bool is_signed, int64_t lo,
                                 int64_t hi);
// Requantizing activation described by spec (in/out qparams inside):
// 8-bit data through a 256-entry table, int32 element by element.
QPLUGIN_PLAIN_API void activation_int_out(const Tensor& data, const Tensor& out, const kernels::ActSpec& spec);
// One bound (relu6, clamp) quantized: quantize_per_tensor's rule on float32(value) (kernels/quantize_math.h).
int64_t quantize_bound(double value, double scale, int64_t zero_point, ScalarType qdtype);
// ---- argument logic shared by the QuantizedCPU and plain adapters ----
// `t` names the integer range: a quantized dtype or the plain uint8 / int8 / int32.
QPLUGIN_PLAIN_API double finite_scalar(const char* op, const char* arg, double v);
// Input and output qparams of a requantizing activation.
QPLUGIN_PLAIN_API void check_act_qparams(const char* op, double in_scale, int64_t in_zp, double out_scale,
                                         int64_t out_zp, ScalarType t);
// Integer bounds of relu / relu6 / clamp on data with qparams (scale, zp).
QPLUGIN_PLAIN_API std::pair<int64_t, int64_t> relu_bounds(int64_t zp, ScalarType t);
QPLUGIN_PLAIN_API std::pair<int64_t, int64_t> relu6_bounds(double scale, int64_t zp, ScalarType t);
QPLUGIN_PLAIN_API std::pair<int64_t, int64_t> clamp_bounds(const char* op, double scale, int64_t zp, ScalarType t,
                                                           std::optional<double> min, std::optional<double> max);
QPLUGIN_PLAIN_API kernels::ActSpec act_spec(kernels::ActKind kind, double in_scale, int64_t in_zp, double out_scale,
                                            int64_t out_zp, double p0 = 0, double p1 = 0, double p2 = 0);
// Whether the AVX-512 table path uses VBMI (test hook: enable=false forces the
// VPSHUFB path; enable=true uses VBMI when the CPU has it). Returns the new state.
bool act_use_vbmi(std::optional<bool> enable);

// ---- softmax (cpu/softmax.cpp) ----
QPLUGIN_PLAIN_API void softmax_int_out(const Tensor& data, const Tensor& out, int64_t dim, double in_scale,
                                       int64_t in_zp, double out_scale, int64_t out_zp);

// ---- normalization (cpu/norm.cpp) ----
// weight / bias: float tensors of normalized_shape (or undefined).
QPLUGIN_PLAIN_API void layer_norm_int_out(const Tensor& data, const Tensor& out, IntArrayRef normalized_shape,
                                          const Tensor& weight, const Tensor& bias, double eps, double in_scale,
                                          int64_t in_zp, double out_scale, int64_t out_zp);
// data: [N, C, ...] (any memory format); weight / bias / mean / var: float [C]; relu clamps the
// output below at out_zp (batch_norm*_relu).
QPLUGIN_PLAIN_API void batch_norm_int_out(const char* op, const Tensor& data, const Tensor& out, const Tensor& weight,
                                          const Tensor& bias, const Tensor& mean, const Tensor& var, double eps,
                                          double in_scale, int64_t in_zp, double out_scale, int64_t out_zp, bool relu);
// data: [N, C, ...], C divisible by groups; weight / bias: float [C] (or undefined). The
// statistics run over each (n, group) block; instance_norm is groups = C.
QPLUGIN_PLAIN_API void group_norm_int_out(const Tensor& data, const Tensor& out, int64_t groups, const Tensor& weight,
                                          const Tensor& bias, double eps, double in_scale, int64_t in_zp,
                                          double out_scale, int64_t out_zp);
// prelu: y = x if x > 0 else slope_c * x, requantized; slopes: 1 (shared) or C entries (dim 1).
// 8-bit data. The output scale must keep the requantize multiplier in range (check_requant_multiplier).
QPLUGIN_PLAIN_API void prelu_int_out(const char* op, const Tensor& data, const Tensor& out,
                                     const std::vector<double>& slopes, double in_scale, int64_t in_zp,
                                     double out_scale, int64_t out_zp);

// Argument checks shared by both tiers' norm adapters (t: the integer range dtype).
QPLUGIN_PLAIN_API void check_norm_qparams(const char* op, double in_scale, int64_t in_zp, double eps, double out_scale,
                                          int64_t out_zp, ScalarType t);
QPLUGIN_PLAIN_API void check_layer_norm_args(const char* op, const char* arg, IntArrayRef sizes,
                                             IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias);
// sizes: a dims-D [N, C, ...] input (batch_norm2d: 4, batch_norm3d: 5).
QPLUGIN_PLAIN_API void check_batch_norm_args(const char* op, const char* arg, IntArrayRef sizes, int64_t dims,
                                             const Tensor& weight, const Tensor& bias, const Tensor& mean,
                                             const Tensor& var, double eps);
// A float32 / float64 parameter tensor of the given shape (undefined passes: optional).
void check_norm_param(const char* op, const char* arg, const Tensor& t, IntArrayRef shape);
// group_norm / instance_norm (num_groups None: one group per channel) on an input of sizes
// [N, C, ...]: checks and returns the number of groups.
QPLUGIN_PLAIN_API int64_t check_group_norm_args(const char* op, const char* arg, IntArrayRef sizes,
                                                std::optional<int64_t> num_groups, const Tensor& weight,
                                                const Tensor& bias);
// prelu's slopes from a float weight of 1 or C = x_sizes[1] entries (finite).
QPLUGIN_PLAIN_API std::vector<double> prelu_slopes(const char* op, const char* arg, IntArrayRef x_sizes,
                                                   const Tensor& w);

}  // namespace cpu
}  // namespace qplugin
