// THE schema file: the only TORCH_LIBRARY(qplugin, m). Custom classes first,
// then every op, grouped as in ../shared/API.md. Kernels are registered next
// to their code, one TORCH_LIBRARY_IMPL block per file and dispatch key:
//   cpu/*.cpp            CPU           (float / plain-integer inputs)
//   quantized/cpu/*.cpp  QuantizedCPU  (quantized inputs)
#include <torch/library.h>

#include <string>
#include <vector>

#include "cpu/activation.h"
#include "kernels/dispatch.h"
#include "packed_params/conv_packed_params.h"
#include "packed_params/embedding_packed_params.h"
#include "packed_params/linear_packed_params.h"
#include "utils/class_check.h"

namespace qplugin {
namespace {

// ---- kernel-path introspection (test hooks, `python -m torch_qplugin`) ----
std::string active_isa() { return kernels::isa_name(kernels::active_isa()); }
std::string cpu_isa() { return kernels::isa_name(kernels::cpu_isa()); }

std::string set_isa(std::string name) {
  kernels::Isa isa;
  TORCH_CHECK_VALUE(kernels::parse_isa(name, &isa), "qplugin::_set_isa: isa should be ", kernels::isa_names(),
                    ", got '", name, "'");
  const std::string previous = active_isa();
  TORCH_CHECK(kernels::set_isa(isa), "qplugin::_set_isa: isa '", name,
              "' is not supported by this CPU (best: ", cpu_isa(), ")");
  return previous;
}

std::vector<std::string> supported_isas() {
  std::vector<std::string> out;
  for (kernels::Isa isa : kernels::compiled_isas()) {
    if (kernels::cpu_supports(isa)) out.push_back(kernels::isa_name(isa));
  }
  return out;
}

std::vector<std::string> cpu_features() {
  std::vector<std::string> out;
  for (const auto& f : kernels::cpu_features()) {
    if (f.second) out.push_back(f.first);
  }
  return out;
}

}  // namespace
}  // namespace qplugin

TORCH_LIBRARY(qplugin, m) {
  // One schema a line, however long, so that each op's schema greps whole.
  // clang-format off
  // ---- Packed-parameter classes (linear, conv) -------------------------------
  // [linear classes]
  qplugin::register_linear_classes();
  // [conv classes]
  qplugin::register_conv_classes(m);
  // [embedding classes]
  qplugin::register_embedding_classes();

  // ---- Kernel paths -----------------------------------------------------------
  m.def("_active_isa() -> str", &qplugin::active_isa);
  m.def("_cpu_isa() -> str", &qplugin::cpu_isa);
  m.def("_supported_isas() -> str[]", &qplugin::supported_isas);
  m.def("_set_isa(str isa) -> str", &qplugin::set_isa);
  m.def("_cpu_features() -> str[]", &qplugin::cpu_features);

  // ---- Creation and inspection ----------------------------------------------------
  m.def("quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor");
  m.def("quantize_per_tensor_dynamic(Tensor self, ScalarType dtype, bool reduce_range) -> Tensor");
  m.def("quantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, int axis, ScalarType dtype) -> Tensor");
  m.def("dequantize(Tensor self) -> Tensor");
  m.def("int_repr(Tensor self) -> Tensor");
  m.def("make_per_tensor_quantized_tensor(Tensor self, float scale, int zero_point) -> Tensor");
  m.def("make_per_channel_quantized_tensor(Tensor self, Tensor scale, Tensor zero_point, int axis) -> Tensor");

  // ---- Elementwise arithmetic ---------------------------------------------------------
  m.def("add(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor");
  m.def("add_relu(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor");
  m.def("add_scalar(Tensor qa, Scalar b) -> Tensor");
  m.def("add_scalar_relu(Tensor qa, Scalar b) -> Tensor");
  m.def("mul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor");
  m.def("mul_relu(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor");
  m.def("mul_scalar(Tensor qa, Scalar b) -> Tensor");
  m.def("cat(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor");
  m.def("cat_relu(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor");
  m.def("matmul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor");

  // ---- Comparators --------------------------------------------------------------------
  m.def("eq(Tensor self, Tensor other) -> Tensor");
  m.def("eq.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("ne(Tensor self, Tensor other) -> Tensor");
  m.def("ne.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("ge(Tensor self, Tensor other) -> Tensor");
  m.def("ge.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("le(Tensor self, Tensor other) -> Tensor");
  m.def("le.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("gt(Tensor self, Tensor other) -> Tensor");
  m.def("gt.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("lt(Tensor self, Tensor other) -> Tensor");
  m.def("lt.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("equal(Tensor self, Tensor other) -> bool");

  // ---- Sorting and reductions ------------------------------------------------------
  m.def("sort(Tensor self, int dim=-1, bool descending=False, *, bool? stable=None) -> (Tensor values, Tensor indices)");
  m.def("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor");
  m.def("topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)");
  m.def("max(Tensor self) -> Tensor");
  m.def("min(Tensor self) -> Tensor");
  m.def("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  m.def("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  m.def("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  m.def("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  m.def("mean(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor");

  // ---- Activations and pooling ------------------------------------------------------
  m.def("relu(Tensor qx) -> Tensor");
  m.def("relu6(Tensor qx, bool inplace=False) -> Tensor");
  m.def("leaky_relu(Tensor qx, Scalar negative_slope, bool inplace, float output_scale, int output_zero_point) -> Tensor");
  m.def("hardswish(Tensor input, float output_scale, int output_zero_point) -> Tensor");
  m.def("hardsigmoid(Tensor input, float output_scale, int output_zero_point) -> Tensor");
  m.def("sigmoid(Tensor qx, float output_scale, int output_zero_point) -> Tensor");
  m.def("elu(Tensor self, float output_scale, int output_zero_point, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor");
  m.def("clamp(Tensor qx, Scalar? min=None, Scalar? max=None) -> Tensor");
  m.def("celu(Tensor self, float output_scale, int output_zero_point, Scalar alpha=1) -> Tensor");
  m.def("threshold(Tensor qx, Scalar threshold, Scalar value) -> Tensor");
  m.def("max_pool2d(Tensor qx, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode) -> Tensor");
  m.def("avg_pool2d(Tensor qx, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor");
  m.def("adaptive_avg_pool2d(Tensor qx, int[] output_size) -> Tensor");
  // 3-D average pooling: aten::avg_pool3d / adaptive_avg_pool3d's arguments
  m.def("avg_pool3d(Tensor qx, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor");
  m.def("adaptive_avg_pool3d(Tensor qx, int[] output_size) -> Tensor");
  m.def("upsample_nearest2d(Tensor qx, int[] output_size) -> Tensor");
  m.def("upsample_bilinear2d(Tensor qx, int[] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor");
  m.def("softmax(Tensor qx, int dim, float output_scale, int output_zero_point) -> Tensor");
  m.def("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("batch_norm2d(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("batch_norm3d(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("batch_norm2d_relu(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("batch_norm3d_relu(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("group_norm(Tensor input, int num_groups, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("instance_norm(Tensor input, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("prelu(Tensor qx, Tensor weight, float output_scale, int output_zero_point) -> Tensor");
  // Test hook: whether the AVX-512 activation table path uses VBMI (False forces VPSHUFB).
  m.def("_act_use_vbmi(bool? enable=None) -> bool", &qplugin::cpu::act_use_vbmi);

  // ---- Linear -------------------------------------------------------------------------
  // [linear ops]
  m.def("linear_prepack(Tensor W, Tensor? B=None) -> __torch__.torch.classes.qplugin.LinearPackedParamsBase");
  m.def("linear_unpack(__torch__.torch.classes.qplugin.LinearPackedParamsBase W_prepack) -> (Tensor W, Tensor? B)",
        qplugin::with_class_check<qplugin::LinearPackedParams, 0>(TORCH_FN(qplugin::linear_unpack)));
  m.def("linear(Tensor X, __torch__.torch.classes.qplugin.LinearPackedParamsBase W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor");
  m.def("linear_relu(Tensor X, __torch__.torch.classes.qplugin.LinearPackedParamsBase W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor");
  m.def("linear_dynamic(Tensor X, __torch__.torch.classes.qplugin.LinearPackedParamsBase W_prepack, bool reduce_range=False) -> Tensor");
  m.def("linear_relu_dynamic(Tensor X, __torch__.torch.classes.qplugin.LinearPackedParamsBase W_prepack, bool reduce_range=False) -> Tensor");
  // fp16 dynamic scheme (torch's quantized::linear_*_fp16): float16 weights in the same class, float
  // activations, float32 accumulation (cpu/linear_fp16.cpp); no int8 step.
  m.def("linear_prepack_fp16(Tensor W, Tensor? B=None) -> __torch__.torch.classes.qplugin.LinearPackedParamsBase");
  m.def("linear_unpack_fp16(__torch__.torch.classes.qplugin.LinearPackedParamsBase W_prepack) -> (Tensor W, Tensor? B)",
        qplugin::with_class_check<qplugin::LinearPackedParams, 0>(TORCH_FN(qplugin::linear_unpack_fp16)));
  m.def("linear_dynamic_fp16(Tensor X, __torch__.torch.classes.qplugin.LinearPackedParamsBase W_prepack) -> Tensor");
  m.def("linear_relu_dynamic_fp16(Tensor X, __torch__.torch.classes.qplugin.LinearPackedParamsBase W_prepack) -> Tensor");
  // Internal (torch_qplugin.nn.quantized.dynamic.LSTM / GRU): one layer, one direction, over a whole
  // sequence; input [T, B, I], states [B, H]; num_gates 4 = LSTM, 3 = GRU (c0 passed through);
  // w_ih / w_hh qint8 (dynamic int8 GEMMs) or fp16 (the fp16 kernel): each GEMM follows its weight.
  m.def("_rnn_layer_dynamic(Tensor input, Tensor h0, Tensor c0, __torch__.torch.classes.qplugin.LinearPackedParamsBase w_ih, __torch__.torch.classes.qplugin.LinearPackedParamsBase w_hh, int num_gates, bool reverse) -> (Tensor output, Tensor h_n, Tensor c_n)");

  // ---- Convolution --------------------------------------------------------------------
  // [conv ops]
  m.def("conv1d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> __torch__.torch.classes.qplugin.Conv2dPackedParamsBase");
  m.def("conv2d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> __torch__.torch.classes.qplugin.Conv2dPackedParamsBase");
  m.def("conv3d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> __torch__.torch.classes.qplugin.Conv3dPackedParamsBase");
  m.def("conv1d_unpack(__torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weights) -> (Tensor weight, Tensor? bias)",
        qplugin::with_class_check<qplugin::Conv2dPackedParamsBase, 0>(TORCH_FN(qplugin::conv1d_unpack)));
  m.def("conv2d_unpack(__torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weights) -> (Tensor weight, Tensor? bias)",
        qplugin::with_class_check<qplugin::Conv2dPackedParamsBase, 0>(TORCH_FN(qplugin::conv2d_unpack)));
  m.def("conv3d_unpack(__torch__.torch.classes.qplugin.Conv3dPackedParamsBase packed_weights) -> (Tensor weight, Tensor? bias)",
        qplugin::with_class_check<qplugin::Conv3dPackedParamsBase, 0>(TORCH_FN(qplugin::conv3d_unpack)));
  m.def("conv1d(Tensor qx, __torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("conv1d_relu(Tensor qx, __torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("conv2d(Tensor qx, __torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("conv2d_relu(Tensor qx, __torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("conv3d(Tensor qx, __torch__.torch.classes.qplugin.Conv3dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("conv3d_relu(Tensor qx, __torch__.torch.classes.qplugin.Conv3dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("conv2d_add(Tensor qx, Tensor qaccum, __torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("conv2d_add_relu(Tensor qx, Tensor qaccum, __torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  // transposed conv (cpu/conv_transpose.cpp): torch's quantized:: schemas; packed params with
  // transpose() == True (1d / 2d: Conv2dPackedParamsBase, 3d: Conv3dPackedParamsBase)
  m.def("conv_transpose1d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int groups) -> __torch__.torch.classes.qplugin.Conv2dPackedParamsBase");
  m.def("conv_transpose2d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int groups) -> __torch__.torch.classes.qplugin.Conv2dPackedParamsBase");
  m.def("conv_transpose3d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int groups) -> __torch__.torch.classes.qplugin.Conv3dPackedParamsBase");
  m.def("conv_transpose1d_unpack(__torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weights) -> (Tensor weight, Tensor? bias)",
        qplugin::with_class_check<qplugin::Conv2dPackedParamsBase, 0>(TORCH_FN(qplugin::conv_transpose1d_unpack)));
  m.def("conv_transpose2d_unpack(__torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weights) -> (Tensor weight, Tensor? bias)",
        qplugin::with_class_check<qplugin::Conv2dPackedParamsBase, 0>(TORCH_FN(qplugin::conv_transpose2d_unpack)));
  m.def("conv_transpose3d_unpack(__torch__.torch.classes.qplugin.Conv3dPackedParamsBase packed_weights) -> (Tensor weight, Tensor? bias)",
        qplugin::with_class_check<qplugin::Conv3dPackedParamsBase, 0>(TORCH_FN(qplugin::conv_transpose3d_unpack)));
  m.def("conv_transpose1d(Tensor qx, __torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("conv_transpose2d(Tensor qx, __torch__.torch.classes.qplugin.Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("conv_transpose3d(Tensor qx, __torch__.torch.classes.qplugin.Conv3dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor");

  // ---- The plain tier (docs/ops.md "Plain ops"): plain_<op> on uint8 / int8 / int32 tensors with
  // explicit qparams (x_scale / x_zero_point after each input; per-channel as tensors), plain results.
  // Fake kernels: torch_qplugin/_fakes.py.
  m.def("plain_quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor");
  m.def("plain_quantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, int axis, ScalarType dtype) -> Tensor");
  m.def("plain_dequantize_per_tensor(Tensor self, float scale, int zero_point) -> Tensor");
  m.def("plain_dequantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, int axis) -> Tensor");
  for (const char* name : {"plain_add", "plain_add_relu", "plain_mul", "plain_mul_relu", "plain_matmul"}) {
    m.def(torch::schema((std::string(name) +
          "(Tensor a, float a_scale, int a_zero_point, Tensor b, float b_scale, int b_zero_point, "
          "float scale, int zero_point) -> Tensor").c_str()));
  }
  for (const char* name : {"plain_add_scalar", "plain_add_scalar_relu", "plain_mul_scalar"}) {
    m.def(torch::schema((std::string(name) + "(Tensor a, float a_scale, int a_zero_point, Scalar b) -> Tensor").c_str()));
  }
  // The output qparams plain_add_scalar(_relu) / plain_mul_scalar give (dtype: the data's).
  m.def("plain_add_scalar_qparams(float scale, int zero_point, ScalarType dtype, Scalar b) -> (float, int)");
  m.def("plain_mul_scalar_qparams(float scale, int zero_point, ScalarType dtype, Scalar b) -> (float, int)");
  m.def("plain_cat(Tensor[] xs, float[] scales, int[] zero_points, int dim, float scale, int zero_point) -> Tensor");
  m.def("plain_cat_relu(Tensor[] xs, float[] scales, int[] zero_points, int dim, float scale, int zero_point) -> Tensor");
  for (const char* name : {"plain_eq", "plain_ne", "plain_ge", "plain_le", "plain_gt", "plain_lt"}) {
    m.def(torch::schema((std::string(name) +
          "(Tensor self, float self_scale, int self_zero_point, Tensor other, float other_scale, "
          "int other_zero_point) -> Tensor").c_str()));
    m.def(torch::schema((std::string(name) + ".Scalar(Tensor self, float self_scale, int self_zero_point, Scalar other) -> Tensor").c_str()));
  }
  m.def("plain_sort(Tensor self, float scale, int zero_point, int dim=-1, bool descending=False, *, bool? stable=None) -> (Tensor values, Tensor indices)");
  m.def("plain_argsort(Tensor self, float scale, int zero_point, int dim=-1, bool descending=False) -> Tensor");
  m.def("plain_topk(Tensor self, float scale, int zero_point, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)");
  m.def("plain_max(Tensor self, float scale, int zero_point) -> Tensor");
  m.def("plain_min(Tensor self, float scale, int zero_point) -> Tensor");
  m.def("plain_max.dim(Tensor self, float scale, int zero_point, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  m.def("plain_min.dim(Tensor self, float scale, int zero_point, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  m.def("plain_argmax(Tensor self, float scale, int zero_point, int? dim=None, bool keepdim=False) -> Tensor");
  m.def("plain_argmin(Tensor self, float scale, int zero_point, int? dim=None, bool keepdim=False) -> Tensor");
  m.def("plain_mean(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor");
  m.def("plain_relu(Tensor x, float x_scale, int x_zero_point) -> Tensor");
  m.def("plain_relu6(Tensor x, float x_scale, int x_zero_point) -> Tensor");
  m.def("plain_clamp(Tensor x, float x_scale, int x_zero_point, Scalar? min=None, Scalar? max=None) -> Tensor");
  m.def("plain_leaky_relu(Tensor x, float x_scale, int x_zero_point, Scalar negative_slope, float output_scale, int output_zero_point) -> Tensor");
  for (const char* name : {"plain_hardswish", "plain_hardsigmoid", "plain_sigmoid"}) {
    m.def(torch::schema((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, float output_scale, int output_zero_point) -> Tensor").c_str()));
  }
  m.def("plain_elu(Tensor x, float x_scale, int x_zero_point, float output_scale, int output_zero_point, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor");
  m.def("plain_softmax(Tensor x, float x_scale, int x_zero_point, int dim, float output_scale, int output_zero_point) -> Tensor");
  m.def("plain_layer_norm(Tensor x, float x_scale, int x_zero_point, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("plain_batch_norm2d(Tensor x, float x_scale, int x_zero_point, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("plain_max_pool2d(Tensor x, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode) -> Tensor");
  m.def("plain_avg_pool2d(Tensor x, int x_zero_point, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor");
  m.def("plain_adaptive_avg_pool2d(Tensor x, int[] output_size) -> Tensor");
  m.def("plain_avg_pool3d(Tensor x, int x_zero_point, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor");
  m.def("plain_adaptive_avg_pool3d(Tensor x, int[] output_size) -> Tensor");
  m.def("plain_upsample_nearest2d(Tensor x, int[] output_size) -> Tensor");
  // the plain forms of the later seed ops (cpu/plain.cpp)
  m.def("plain_upsample_bilinear2d(Tensor x, int[] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor");
  for (const char* name : {"plain_batch_norm2d_relu", "plain_batch_norm3d", "plain_batch_norm3d_relu"}) {
    m.def(torch::schema((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor? weight, Tensor? bias, "
                         "Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor").c_str()));
  }
  m.def("plain_group_norm(Tensor x, float x_scale, int x_zero_point, int num_groups, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("plain_instance_norm(Tensor x, float x_scale, int x_zero_point, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("plain_prelu(Tensor x, float x_scale, int x_zero_point, Tensor weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("plain_celu(Tensor x, float x_scale, int x_zero_point, float output_scale, int output_zero_point, Scalar alpha=1) -> Tensor");
  m.def("plain_threshold(Tensor x, float x_scale, int x_zero_point, Scalar threshold, Scalar value) -> Tensor");
  // ---- plain linear / conv (cpu/plain_weights.cpp): the weight as plain tensors + its packed
  // buffer (packed_params/plain_buffer.h, from plain_linear_prepack / plain_conv_prepack).
  // ---- plain embedding tables (cpu/embedding.cpp): fused rows in a checked buffer
  // (packed_params/plain_buffer.h kind kEmbedding); float out. plain_embedding_bag's
  // num_embeddings / embedding_dim are checked against the buffer (and give traced output shapes).
  m.def("plain_embedding_prepack(Tensor fused_rows, int bits=8) -> Tensor");
  m.def("plain_embedding_unpack(Tensor packed) -> Tensor");
  m.def("plain_embedding_bag(Tensor packed, int num_embeddings, int embedding_dim, Tensor indices, Tensor? offsets=None, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  m.def("plain_linear_prepack(Tensor w, Tensor w_scales, Tensor w_zero_points) -> Tensor");
  for (const char* name : {"plain_linear", "plain_linear_relu"}) {
    m.def(torch::schema((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor w, Tensor w_scales, "
                         "Tensor w_zero_points, Tensor? bias, Tensor packed, float output_scale, "
                         "int output_zero_point) -> Tensor").c_str()));
  }
  for (const char* name : {"plain_linear_dynamic", "plain_linear_relu_dynamic"}) {
    m.def(torch::schema((std::string(name) + "(Tensor x, Tensor w, Tensor w_scales, Tensor w_zero_points, "
                         "Tensor? bias, Tensor packed, bool reduce_range=False) -> Tensor").c_str()));
  }
  // fp16 dynamic (the plain forms of linear_(relu_)dynamic_fp16 / the fp16 _rnn_layer_dynamic):
  // float32 x, float16 w, float32 bias, packed = plain_linear_prepack_fp16(w) (float16 panels) or empty
  m.def("plain_linear_prepack_fp16(Tensor w) -> Tensor");
  for (const char* name : {"plain_linear_dynamic_fp16", "plain_linear_relu_dynamic_fp16"}) {
    m.def(torch::schema((std::string(name) + "(Tensor x, Tensor w, Tensor? bias, Tensor packed) -> Tensor").c_str()));
  }
  m.def("plain_rnn_layer_dynamic(Tensor input, Tensor h0, Tensor c0, Tensor w_ih, Tensor w_ih_scales, "
        "Tensor w_ih_zero_points, Tensor? b_ih, Tensor packed_ih, Tensor w_hh, Tensor w_hh_scales, "
        "Tensor w_hh_zero_points, Tensor? b_hh, Tensor packed_hh, int num_gates, bool reverse) "
        "-> (Tensor output, Tensor h_n, Tensor c_n)");
  m.def("plain_rnn_layer_dynamic_fp16(Tensor input, Tensor h0, Tensor c0, Tensor w_ih, Tensor? b_ih, Tensor packed_ih, "
        "Tensor w_hh, Tensor? b_hh, Tensor packed_hh, int num_gates, bool reverse) -> (Tensor output, Tensor h_n, Tensor c_n)");
  m.def("plain_conv_prepack(Tensor w, Tensor w_scales, Tensor w_zero_points, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> Tensor");
  for (const char* name : {"plain_conv1d", "plain_conv1d_relu", "plain_conv2d", "plain_conv2d_relu", "plain_conv3d",
                           "plain_conv3d_relu"}) {
    m.def(torch::schema((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor w, Tensor w_scales, "
                         "Tensor w_zero_points, Tensor? bias, Tensor packed, int[] stride, int[] padding, "
                         "int[] dilation, int groups, float output_scale, int output_zero_point) -> Tensor").c_str()));
  }
  m.def("plain_conv_transpose_prepack(Tensor w, Tensor w_scales, Tensor w_zero_points, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int groups) -> Tensor");
  for (const char* name : {"plain_conv_transpose1d", "plain_conv_transpose2d", "plain_conv_transpose3d"}) {
    m.def(torch::schema((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor w, Tensor w_scales, "
                         "Tensor w_zero_points, Tensor? bias, Tensor packed, int[] stride, int[] padding, "
                         "int[] output_padding, int[] dilation, int groups, float output_scale, "
                         "int output_zero_point) -> Tensor").c_str()));
  }
  for (const char* name : {"plain_conv2d_add", "plain_conv2d_add_relu"}) {
    m.def(torch::schema((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor accum, "
                         "float accum_scale, int accum_zero_point, Tensor w, Tensor w_scales, Tensor w_zero_points, "
                         "Tensor? bias, Tensor packed, int[] stride, int[] padding, int[] dilation, int groups, "
                         "float output_scale, int output_zero_point) -> Tensor").c_str()));
  }

  // ---- Embeddings on row-wise quantized weights: torch's quantized:: schemas ----
  m.def("embedding_bag_prepack(Tensor weight) -> __torch__.torch.classes.qplugin.EmbeddingPackedParamsBase W_prepack");
  m.def("embedding_bag_unpack(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase W_prepack) -> Tensor W_origin",
        qplugin::with_class_check<qplugin::EmbeddingPackedParams, 0>(TORCH_FN(qplugin::embedding_bag_unpack)));
  m.def("embedding_byte(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase weight, Tensor indices, bool pruned_weights=False) -> Tensor");
  m.def("embedding_4bit(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase weight, Tensor indices, bool pruned_weights=False) -> Tensor");
  m.def("embedding_bag_byte(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase weight, Tensor indices, Tensor? offsets=None, bool scale_grad_by_freq=False, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  m.def("embedding_bag_4bit(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase weight, Tensor indices, Tensor? offsets=None, bool scale_grad_by_freq=False, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  m.def("embedding_bag_byte_prepack(Tensor weight) -> Tensor");
  m.def("embedding_bag_byte_unpack(Tensor weight) -> Tensor");
  m.def("embedding_bag_4bit_prepack(Tensor weight, bool optimized_qparams=False, int nbins=200, float ratio=0.16) -> Tensor");
  m.def("embedding_bag_4bit_unpack(Tensor weight) -> Tensor");
  m.def("embedding_bag_byte_rowwise_offsets(Tensor weight, Tensor indices, Tensor? offsets=None, bool scale_grad_by_freq=False, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  m.def("embedding_bag_4bit_rowwise_offsets(Tensor weight, Tensor indices, Tensor? offsets=None, bool scale_grad_by_freq=False, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  // clang-format on
}
