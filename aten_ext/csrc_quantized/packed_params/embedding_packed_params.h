// torch.classes.qplugin.EmbeddingPackedParamsBase: an embedding table quantized row-wise with
// float qparams (torch's per_channel_affine_float_qparams along axis 0), 8-bit (quint8) or 4-bit
// (quint4x2: two codes a byte, element 2j in the low nibble). The codes are kept as given and each
// row's (scale, bias) as float32 pairs for the kernel (bias = zero_point * scale * -1, torch's
// prepack rule); value = fma(scale, code, bias). The original scales / zero_points are kept, so
// unpack() rebuilds the quantized weight exactly.
//
// Pickled state (docs/serialization.md), version 1:
//   (int version, int bits, int embedding_dim,
//    [Tensor codes uint8 [rows, row_bytes], Tensor scales float32 [rows], Tensor zero_points float32 [rows]])
// row_bytes = embedding_dim (8-bit) or embedding_dim / 2 (4-bit). __setstate__ validates and repacks.
#pragma once

#include <ATen/ATen.h>
#include <torch/custom_class.h>

#include <string>
#include <tuple>
#include <vector>

#include "kernels/embedding_kernel.h"

namespace qplugin {

struct EmbeddingPackedParams : torch::CustomClassHolder {
  static constexpr int64_t kVersion = 1;
  using State = std::tuple<int64_t, int64_t, int64_t, std::vector<at::Tensor>>;

  int64_t bits = 8;
  int64_t rows = 0;
  int64_t dim = 0;
  at::Tensor codes;        // uint8 [rows, row_bytes]
  at::Tensor qp;           // float32 [rows, 2]: scale, bias
  at::Tensor scales;       // float32 [rows] (as given)
  at::Tensor zero_points;  // float32 [rows] (as given)

  kernels::EmbRows view() const;

  // From plain codes and qparams (validated here; `op` names the caller).
  static c10::intrusive_ptr<EmbeddingPackedParams> create(const char* op, int64_t bits, int64_t dim,
                                                          const at::Tensor& codes, const at::Tensor& scales,
                                                          const at::Tensor& zero_points);
  // From a quint8 / quint4x2 per_channel_affine_float_qparams weight (embedding_bag_prepack).
  static c10::intrusive_ptr<EmbeddingPackedParams> prepack(const at::Tensor& weight);
  at::Tensor unpack() const;  // the quantized weight
  State getstate() const;
  static c10::intrusive_ptr<EmbeddingPackedParams> setstate(State state);
  std::string repr() const;
};

// Registers the class once (library.cpp and the TORCH_LIBRARY_IMPL blocks naming it).
void register_embedding_classes();

// embedding_bag_unpack (CatchAll: its only argument is the class).
at::Tensor embedding_bag_unpack(const c10::intrusive_ptr<EmbeddingPackedParams>& packed);

}  // namespace qplugin
