// The plain tier's schema file: the only TORCH_LIBRARY(qplugin, m). The kernel-path hooks, the
// plain_* ops on plain integer tensors with explicit qparams and the float / uint8 embedding-row
// ops, grouped as in ../shared/API.md. The quantized tier (../csrc_quantized/library.cpp, in
// libtorch_qplugin.so) adds its classes and ops to the same namespace with
// TORCH_LIBRARY_FRAGMENT(qplugin, m). Kernels are registered next to their code, one
// TORCH_LIBRARY_IMPL block per file and dispatch key:
//   cpu/*.cpp                                  CPU           (float / plain-integer inputs)
//   ../csrc_quantized/quantized/cpu/*.cpp      QuantizedCPU  (quantized inputs)

#include <string>
#include <vector>

#include "cpu/activation.h"
#include "kernels/dispatch.h"
#include "utils/torch_api.h"

namespace qplugin {
namespace {

// ---- kernel-path introspection (test hooks, `python -m torch_qplugin`) ----
std::string active_isa() { return kernels::isa_name(kernels::active_isa()); }
std::string cpu_isa() { return kernels::isa_name(kernels::cpu_isa()); }

std::string set_isa(std::string name) {
  kernels::Isa isa;
  QP_CHECK_VALUE(kernels::parse_isa(name, &isa), "qplugin::_set_isa: isa should be ", kernels::isa_names(), ", got '",
                 name, "'");
  const std::string previous = active_isa();
  QP_CHECK(kernels::set_isa(isa), "qplugin::_set_isa: isa '", name, "' is not supported by this CPU (best: ", cpu_isa(),
           ")");
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

QPLUGIN_LIBRARY(qplugin, m) {
  // One schema a line, however long, so that each op's schema greps whole.
  // clang-format off
  // ---- Kernel paths -----------------------------------------------------------
  m.def("_active_isa() -> str");
  m.def("_cpu_isa() -> str");
  m.def("_supported_isas() -> str[]");
  m.def("_set_isa(str isa) -> str");
  m.def("_cpu_features() -> str[]");
  // Test hook: whether the AVX-512 activation table path uses VBMI (False forces VPSHUFB).
  m.def("_act_use_vbmi(bool? enable=None) -> bool");

  // ---- The plain tier (docs/ops.md "Plain ops"): plain_<op> on uint8 / int8 / int32 tensors with
  // explicit qparams (x_scale / x_zero_point after each input; per-channel as tensors), plain results.
  // Fake kernels: torch_qplugin/_fakes.py.
  m.def("plain_quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor");
  m.def("plain_quantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, int axis, ScalarType dtype) -> Tensor");
  m.def("plain_dequantize_per_tensor(Tensor self, float scale, int zero_point) -> Tensor");
  m.def("plain_dequantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, int axis) -> Tensor");
  for (const char* name : {"plain_add", "plain_add_relu", "plain_mul", "plain_mul_relu", "plain_matmul"}) {
    m.def(((std::string(name) +
          "(Tensor a, float a_scale, int a_zero_point, Tensor b, float b_scale, int b_zero_point, "
          "float scale, int zero_point) -> Tensor").c_str()));
  }
  for (const char* name : {"plain_add_scalar", "plain_add_scalar_relu", "plain_mul_scalar"}) {
    m.def(((std::string(name) + "(Tensor a, float a_scale, int a_zero_point, float b) -> Tensor").c_str()));
  }
  // The output qparams plain_add_scalar(_relu) / plain_mul_scalar give (dtype: the data's).
  m.def("plain_add_scalar_qparams(float scale, int zero_point, ScalarType dtype, float b) -> (float, int)");
  m.def("plain_mul_scalar_qparams(float scale, int zero_point, ScalarType dtype, float b) -> (float, int)");
  m.def("plain_cat(Tensor[] xs, float[] scales, int[] zero_points, int dim, float scale, int zero_point) -> Tensor");
  m.def("plain_cat_relu(Tensor[] xs, float[] scales, int[] zero_points, int dim, float scale, int zero_point) -> Tensor");
  for (const char* name : {"plain_eq", "plain_ne", "plain_ge", "plain_le", "plain_gt", "plain_lt"}) {
    m.def(((std::string(name) +
          "(Tensor self, float self_scale, int self_zero_point, Tensor other, float other_scale, "
          "int other_zero_point) -> Tensor").c_str()));
    m.def(((std::string(name) + ".Scalar(Tensor self, float self_scale, int self_zero_point, float other) -> Tensor").c_str()));
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
  m.def("plain_clamp(Tensor x, float x_scale, int x_zero_point, float? min=None, float? max=None) -> Tensor");
  m.def("plain_leaky_relu(Tensor x, float x_scale, int x_zero_point, float negative_slope, float output_scale, int output_zero_point) -> Tensor");
  for (const char* name : {"plain_hardswish", "plain_hardsigmoid", "plain_sigmoid"}) {
    m.def(((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, float output_scale, int output_zero_point) -> Tensor").c_str()));
  }
  m.def("plain_elu(Tensor x, float x_scale, int x_zero_point, float output_scale, int output_zero_point, float alpha=1., float scale=1., float input_scale=1.) -> Tensor");
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
    m.def(((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor? weight, Tensor? bias, "
                         "Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor").c_str()));
  }
  m.def("plain_group_norm(Tensor x, float x_scale, int x_zero_point, int num_groups, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("plain_instance_norm(Tensor x, float x_scale, int x_zero_point, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor");
  m.def("plain_prelu(Tensor x, float x_scale, int x_zero_point, Tensor weight, float output_scale, int output_zero_point) -> Tensor");
  m.def("plain_celu(Tensor x, float x_scale, int x_zero_point, float output_scale, int output_zero_point, float alpha=1.) -> Tensor");
  m.def("plain_threshold(Tensor x, float x_scale, int x_zero_point, float threshold, float value) -> Tensor");
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
    m.def(((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor w, Tensor w_scales, "
                         "Tensor w_zero_points, Tensor? bias, Tensor packed, float output_scale, "
                         "int output_zero_point) -> Tensor").c_str()));
  }
  for (const char* name : {"plain_linear_dynamic", "plain_linear_relu_dynamic"}) {
    m.def(((std::string(name) + "(Tensor x, Tensor w, Tensor w_scales, Tensor w_zero_points, "
                         "Tensor? bias, Tensor packed, bool reduce_range=False) -> Tensor").c_str()));
  }
  // fp16 dynamic (the plain forms of linear_(relu_)dynamic_fp16 / the fp16 _rnn_layer_dynamic):
  // float32 x, float16 w, float32 bias, packed = plain_linear_prepack_fp16(w) (float16 panels) or empty
  m.def("plain_linear_prepack_fp16(Tensor w) -> Tensor");
  for (const char* name : {"plain_linear_dynamic_fp16", "plain_linear_relu_dynamic_fp16"}) {
    m.def(((std::string(name) + "(Tensor x, Tensor w, Tensor? bias, Tensor packed) -> Tensor").c_str()));
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
    m.def(((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor w, Tensor w_scales, "
                         "Tensor w_zero_points, Tensor? bias, Tensor packed, int[] stride, int[] padding, "
                         "int[] dilation, int groups, float output_scale, int output_zero_point) -> Tensor").c_str()));
  }
  m.def("plain_conv_transpose_prepack(Tensor w, Tensor w_scales, Tensor w_zero_points, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int groups) -> Tensor");
  for (const char* name : {"plain_conv_transpose1d", "plain_conv_transpose2d", "plain_conv_transpose3d"}) {
    m.def(((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor w, Tensor w_scales, "
                         "Tensor w_zero_points, Tensor? bias, Tensor packed, int[] stride, int[] padding, "
                         "int[] output_padding, int[] dilation, int groups, float output_scale, "
                         "int output_zero_point) -> Tensor").c_str()));
  }
  for (const char* name : {"plain_conv2d_add", "plain_conv2d_add_relu"}) {
    m.def(((std::string(name) + "(Tensor x, float x_scale, int x_zero_point, Tensor accum, "
                         "float accum_scale, int accum_zero_point, Tensor w, Tensor w_scales, Tensor w_zero_points, "
                         "Tensor? bias, Tensor packed, int[] stride, int[] padding, int[] dilation, int groups, "
                         "float output_scale, int output_zero_point) -> Tensor").c_str()));
  }

  // ---- Embedding rows (float in, fused uint8 rows out and back): torch's quantized:: schemas ----
  m.def("embedding_bag_byte_prepack(Tensor weight) -> Tensor");
  m.def("embedding_bag_byte_unpack(Tensor weight) -> Tensor");
  m.def("embedding_bag_4bit_prepack(Tensor weight, bool optimized_qparams=False, int nbins=200, float ratio=0.16) -> Tensor");
  m.def("embedding_bag_4bit_unpack(Tensor weight) -> Tensor");
  m.def("embedding_bag_byte_rowwise_offsets(Tensor weight, Tensor indices, Tensor? offsets=None, bool scale_grad_by_freq=False, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  m.def("embedding_bag_4bit_rowwise_offsets(Tensor weight, Tensor indices, Tensor? offsets=None, bool scale_grad_by_freq=False, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  // clang-format on
}

// The kernel-path hooks take no tensor: no dispatch key, so CompositeExplicitAutograd serves them.
QPLUGIN_LIBRARY_IMPL(qplugin, CompositeExplicitAutograd, m) {
  m.impl("_active_isa", QPLUGIN_FN(&qplugin::active_isa));
  m.impl("_cpu_isa", QPLUGIN_FN(&qplugin::cpu_isa));
  m.impl("_supported_isas", QPLUGIN_FN(&qplugin::supported_isas));
  m.impl("_set_isa", QPLUGIN_FN(&qplugin::set_isa));
  m.impl("_cpu_features", QPLUGIN_FN(&qplugin::cpu_features));
  m.impl("_act_use_vbmi", QPLUGIN_FN(&qplugin::cpu::act_use_vbmi));
}
