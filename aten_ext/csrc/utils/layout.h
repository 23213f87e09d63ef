// Memory layout helpers of the plain-integer glue (no quantized-tensor API: test/test_plain_wall.py).
#pragma once

#include "utils/torch_api.h"

#include <initializer_list>
#include <vector>

namespace qplugin {

// For a tensor contiguous in `fmt`, the (outer, channels, inner) split of its
// flat data around dim `axis`: element (o, c, i) sits at (o * C + c) * inner + i.
struct AxisSplit {
  int64_t outer;
  int64_t channels;
  int64_t inner;
};

inline AxisSplit axis_split(IntArrayRef sizes, int64_t axis, MemoryFormat fmt) {
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

// Whether strides read as channels-last, by c10's rule (is_channels_last_strides_2d / _3d, what
// suggest_memory_format reports): visiting the dims in channels-last order, innermost first
// (`order`), no stride is below the extent of the dims before it; ambiguous cases (a channel stride
// of 0, a size-0 dim, a batch stride equal to the channel stride) read as contiguous.
inline bool strides_like_channels_last(IntArrayRef sizes, IntArrayRef strides, std::initializer_list<int64_t> order) {
  if (strides[1] == 0) return false;
  int64_t min = 0;
  for (int64_t d : order) {
    if (sizes[d] == 0 || strides[d] < min) return false;
    if (d == 0 && min == strides[1]) return false;
    min = sizes[d] > 1 ? strides[d] * sizes[d] : strides[d];
  }
  return true;
}

// The memory format our kernels keep for an input: channels_last (2-d or 3-d) stays channels_last,
// everything else becomes contiguous. Read from sizes and strides alone.
inline MemoryFormat kept_format(const Tensor& t) {
  const int64_t nd = t.dim();
  if (nd == 4 && strides_like_channels_last(t.sizes(), t.strides(), {1, 3, 2, 0})) {
    return MemoryFormat::ChannelsLast;
  }
  if (nd == 5 && strides_like_channels_last(t.sizes(), t.strides(), {1, 4, 3, 2, 0})) {
    return MemoryFormat::ChannelsLast3d;
  }
  return MemoryFormat::Contiguous;
}

}  // namespace qplugin
