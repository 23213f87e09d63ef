// QuantizedCPU adapter for embedding_bag_prepack: a quint8 / quint4x2
// per_channel_affine_float_qparams weight -> EmbeddingPackedParamsBase.
#include <torch/library.h>

#include "packed_params/embedding_packed_params.h"

namespace qplugin {

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  register_embedding_classes();
  m.impl("embedding_bag_prepack", TORCH_FN(EmbeddingPackedParams::prepack));
}

} // namespace qplugin
