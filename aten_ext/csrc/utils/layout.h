// Memory layout helpers of the plain-integer glue (no quantized-tensor API: test/test_plain_wall.py).
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace qplugin {

// Memory order of the dims of a tensor contiguous in `fmt`, outermost first.
inline std::vector<int64_t> memory_order(int64_t ndim, at::MemoryFormat fmt) {
  std::vector<int64_t> order;
  if (fmt == at::MemoryFormat::ChannelsLast && ndim == 4) {
    order = {0, 2, 3, 1};
  } else if (fmt == at::MemoryFormat::ChannelsLast3d && ndim == 5) {
    order = {0, 2, 3, 4, 1};
  } else {
    for (int64_t i = 0; i < ndim; ++i) order.push_back(i);
  }
  return order;
}

// For a tensor contiguous in `fmt`, the (outer, channels, inner) split of its
// flat data around dim `axis`: element (o, c, i) sits at (o * C + c) * inner + i.
struct AxisSplit {
  int64_t outer;
  int64_t channels;
  int64_t inner;
};

inline AxisSplit axis_split(at::IntArrayRef sizes, int64_t axis, at::MemoryFormat fmt) {
  const auto order = memory_order(static_cast<int64_t>(sizes.size()), fmt);
  AxisSplit s{1, sizes[axis], 1};
  bool after = false;
  for (int64_t d : order) {
    if (d == axis) {
      after = true;
    } else if (after) {
      s.inner *= sizes[d];
    } else {
      s.outer *= sizes[d];
    }
  }
  return s;
}

// The memory format our kernels keep for an input: channels_last stays
// channels_last, everything else becomes contiguous.
inline at::MemoryFormat kept_format(const at::Tensor& t) { return t.suggest_memory_format(); }

}  // namespace qplugin
