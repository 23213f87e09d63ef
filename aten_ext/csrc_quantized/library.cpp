// The quantized tier's schema file: TORCH_LIBRARY_FRAGMENT(qplugin, m) adds to the namespace that
// the plain library's TORCH_LIBRARY(qplugin, m) defines (../csrc/library.cpp). Custom classes
// first, then the ops on quantized tensors and packed-parameter classes, grouped as in
// ../shared/API.md. Kernels are registered next to their code: quantized/cpu/*.cpp, one
// TORCH_LIBRARY_IMPL block per dispatch key.
#include <torch/library.h>

#include "packed_params/conv_packed_params.h"
#include "packed_params/embedding_packed_params.h"
#include "packed_params/linear_packed_params.h"
#include "utils/class_check.h"

TORCH_LIBRARY_FRAGMENT(qplugin, m) {
  // One schema a line, however long, so that each op's schema greps whole.
  // clang-format off
  // ---- Packed-parameter classes (linear, conv) -------------------------------
  // [linear classes]
  qplugin::register_linear_classes();
  // [conv classes]
  qplugin::register_conv_classes(m);
  // [embedding classes]
  qplugin::register_embedding_classes();

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

  // ---- Embeddings on row-wise quantized weights: torch's quantized:: schemas ----
  m.def("embedding_bag_prepack(Tensor weight) -> __torch__.torch.classes.qplugin.EmbeddingPackedParamsBase W_prepack");
  m.def("embedding_bag_unpack(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase W_prepack) -> Tensor W_origin",
        qplugin::with_class_check<qplugin::EmbeddingPackedParams, 0>(TORCH_FN(qplugin::embedding_bag_unpack)));
  m.def("embedding_byte(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase weight, Tensor indices, bool pruned_weights=False) -> Tensor");
  m.def("embedding_4bit(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase weight, Tensor indices, bool pruned_weights=False) -> Tensor");
  m.def("embedding_bag_byte(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase weight, Tensor indices, Tensor? offsets=None, bool scale_grad_by_freq=False, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  m.def("embedding_bag_4bit(__torch__.torch.classes.qplugin.EmbeddingPackedParamsBase weight, Tensor indices, Tensor? offsets=None, bool scale_grad_by_freq=False, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  // clang-format on
}
