// The embedding glue both tiers share (cpu/embedding.cpp): index checks, bag boundaries, the
// pruned-row mapping, and the threaded bag kernel over a kernels::EmbRows view.
#pragma once

#include "utils/torch_api.h"

#include <vector>

#include "kernels/embedding_kernel.h"
#include "utils/export.h"

namespace qplugin {
namespace cpu {

struct Bags {
  explicit Bags(Tensor rows) : idx(std::move(rows)) {}
  Tensor idx;                   // int64, n values (any shape, contiguous): row per index (-1: pruned away)
  std::vector<int64_t> starts;  // [nbags + 1]
  std::optional<Tensor> psw;    // float32 [n], or none
  int64_t nbags = 0;
  bool pruned = false;  // idx went through compressed_indices_mapping (-1: a pruned row)
  std::vector<int64_t> out_sizes;
};

// Maps indices to rows (pruned weights: through compressed_indices_mapping, whose range is
// checked here). Unmapped indices are checked by the kernel as it reads them (run_bags raises).
QPLUGIN_PLAIN_API Tensor rows_of(const char* op, const Tensor& indices, int64_t rows, bool pruned_weights,
                                 const std::optional<Tensor>& mapping);

// The bags of an embedding_bag call (mode 0 sum, 1 mean, 2 max) over a table of rows x dim.
QPLUGIN_PLAIN_API Bags bags_of(const char* op, const Tensor& indices, const std::optional<Tensor>& offsets,
                               int64_t mode, bool pruned_weights, const std::optional<Tensor>& per_sample_weights,
                               const std::optional<Tensor>& mapping, bool include_last_offset, int64_t rows,
                               int64_t dim);

// The float32 output of the bags b over the table w (an index outside the table raises).
QPLUGIN_PLAIN_API Tensor run_bags(const char* op, const kernels::EmbRows& w, const Bags& b, int64_t mode);

}  // namespace cpu
}  // namespace qplugin

// The arguments of torch's embedding_bag_* schemas after the weight.
#define QPLUGIN_EMBEDDING_BAG_ARGS                                                                   \
  const Tensor &indices, const std::optional<Tensor>&offsets, bool scale_grad_by_freq, int64_t mode, \
      bool pruned_weights, const std::optional<Tensor>&per_sample_weights,                           \
      const std::optional<Tensor>&compressed_indices_mapping, bool include_last_offset
