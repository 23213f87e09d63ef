// The quantized tier's embeddings: embedding_bag_prepack of a quint8 / quint4x2
// per_channel_affine_float_qparams weight -> EmbeddingPackedParamsBase (QuantizedCPU), and the ops
// on that class (embedding_byte / embedding_4bit / embedding_bag_byte / embedding_bag_4bit, CPU
// key), which run the shared bag glue of cpu/embedding.h.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <numeric>
#include <string>

#include "cpu/embedding.h"
#include "packed_params/embedding_packed_params.h"
#include "utils/checks.h"
#include "utils/class_check.h"

namespace qplugin {
namespace {

using cpu::Bags;
using cpu::bags_of;
using cpu::rows_of;
using cpu::run_bags;

// op names the byte or the 4bit form ("embedding_bag_byte", "embedding_4bit"); the message names
// the other one.
void check_bits(const char* op, const EmbeddingPackedParams& p, int64_t bits) {
  if (p.bits == bits) return;
  std::string other = op;
  const std::string from = bits == 8 ? "byte" : "4bit", to = bits == 8 ? "4bit" : "byte";
  other.replace(other.find(from), from.size(), to);
  TORCH_CHECK_VALUE(false, "qplugin::", op, ": weight should hold ", bits, "-bit rows (",
                    bits == 8 ? "quint8" : "quint4x2", "), got ", p.bits, "-bit rows (use qplugin::", other, ")");
}

at::Tensor embedding_packed(const char* op, int64_t bits, const c10::intrusive_ptr<EmbeddingPackedParams>& w,
                            const at::Tensor& indices, bool pruned_weights) {
  check_bits(op, *w, bits);
  TORCH_CHECK_VALUE(!pruned_weights, "qplugin::", op,
                    ": pruned_weights=True needs compressed_indices_mapping; use embedding_bag_",
                    bits == 8 ? "byte" : "4bit", " with 2-D indices [n, 1]");
  Bags b(rows_of(op, indices, w->rows, false, c10::nullopt));
  const int64_t n = b.idx.numel();
  b.nbags = n;
  b.starts.resize(static_cast<size_t>(n + 1));
  std::iota(b.starts.begin(), b.starts.end(), int64_t{0});
  b.out_sizes = indices.sizes().vec();
  b.out_sizes.push_back(w->dim);
  check_output_size(op, b.out_sizes, 4);
  return run_bags(op, w->view(), b, 0);
}

at::Tensor embedding_byte(const c10::intrusive_ptr<EmbeddingPackedParams>& w, const at::Tensor& indices,
                          bool pruned_weights) {
  return embedding_packed("embedding_byte", 8, w, indices, pruned_weights);
}
at::Tensor embedding_4bit(const c10::intrusive_ptr<EmbeddingPackedParams>& w, const at::Tensor& indices,
                          bool pruned_weights) {
  return embedding_packed("embedding_4bit", 4, w, indices, pruned_weights);
}

at::Tensor embedding_bag_packed(const char* op, int64_t bits, const c10::intrusive_ptr<EmbeddingPackedParams>& w,
                                QPLUGIN_EMBEDDING_BAG_ARGS) {
  check_bits(op, *w, bits);
  const Bags b = bags_of(op, indices, offsets, mode, pruned_weights, per_sample_weights, compressed_indices_mapping,
                         include_last_offset, w->rows, w->dim);
  return run_bags(op, w->view(), b, mode);
}

at::Tensor embedding_bag_byte(const c10::intrusive_ptr<EmbeddingPackedParams>& w, QPLUGIN_EMBEDDING_BAG_ARGS) {
  return embedding_bag_packed("embedding_bag_byte", 8, w, indices, offsets, scale_grad_by_freq, mode, pruned_weights,
                              per_sample_weights, compressed_indices_mapping, include_last_offset);
}
at::Tensor embedding_bag_4bit(const c10::intrusive_ptr<EmbeddingPackedParams>& w, QPLUGIN_EMBEDDING_BAG_ARGS) {
  return embedding_bag_packed("embedding_bag_4bit", 4, w, indices, offsets, scale_grad_by_freq, mode, pruned_weights,
                              per_sample_weights, compressed_indices_mapping, include_last_offset);
}

// embedding_bag_prepack takes a quantized weight (QuantizedCPU adapter); a float one lands here.
c10::intrusive_ptr<EmbeddingPackedParams> embedding_bag_prepack_cpu_error(const at::Tensor& weight) {
  return EmbeddingPackedParams::prepack(weight);  // raises: weight should be a quantized tensor
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  register_embedding_classes();
  m.impl("embedding_bag_prepack", TORCH_FN(EmbeddingPackedParams::prepack));
}

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  register_embedding_classes();
  m.impl("embedding_byte", with_class_check<EmbeddingPackedParams, 0>(TORCH_FN(embedding_byte)));
  m.impl("embedding_4bit", with_class_check<EmbeddingPackedParams, 0>(TORCH_FN(embedding_4bit)));
  m.impl("embedding_bag_byte", with_class_check<EmbeddingPackedParams, 0>(TORCH_FN(embedding_bag_byte)));
  m.impl("embedding_bag_4bit", with_class_check<EmbeddingPackedParams, 0>(TORCH_FN(embedding_bag_4bit)));
  m.impl("embedding_bag_prepack", TORCH_FN(embedding_bag_prepack_cpu_error));
}

}  // namespace qplugin
