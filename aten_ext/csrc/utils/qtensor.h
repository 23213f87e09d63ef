// Helpers between quantized tensors and the plain-integer layer.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "utils/checks.h"

namespace qplugin {

// THE input-qparams check of every op that takes a quantized tensor: torch's
// _make_per_tensor_quantized_tensor / _make_per_channel_quantized_tensor build tensors with any
// scale and zero point (NaN, inf, 0, negative, out of range), so each adapter calls this on each
// quantized input (after its own dtype / qscheme checks) before reading data. Same rules as
// quantize_per_tensor / quantize_per_channel (check_scale / check_zero_point).
inline void check_qparams(const char* op, const char* arg, const at::Tensor& t) {
  TORCH_INTERNAL_ASSERT(t.is_quantized());
  const auto qs = t.qscheme();
  if (qs == at::kPerTensorAffine || qs == at::kPerTensorSymmetric) {
    check_scale(op, arg, t.q_scale(), " scale");
    check_zero_point(op, arg, t.q_zero_point(), t.scalar_type(), " zero_point");
    return;
  }
  TORCH_CHECK(qs == at::kPerChannelAffine || qs == at::kPerChannelSymmetric, "qplugin::", op, ": ", arg,
              " should be per-tensor or per-channel affine quantized, got qscheme ", toString(qs));
  const at::Tensor s = t.q_per_channel_scales().to(at::kDouble).contiguous();
  const at::Tensor z = t.q_per_channel_zero_points().to(at::kLong).contiguous();
  const double* sp = s.const_data_ptr<double>();
  const int64_t* zp = z.const_data_ptr<int64_t>();
  for (int64_t c = 0; c < s.numel(); ++c) check_scale(op, arg, sp[c], " per-channel scale");
  for (int64_t c = 0; c < z.numel(); ++c) check_zero_point(op, arg, zp[c], t.scalar_type(), " per-channel zero_point");
}

// A plain integer tensor (uint8 / int8 / int32) aliasing the data of a
// quantized tensor, same sizes and strides, no copy. Keeps the storage alive.
inline at::Tensor int_view(const at::Tensor& q) {
  TORCH_INTERNAL_ASSERT(q.is_quantized());
  at::ScalarType dt = q.scalar_type() == at::kQUInt8  ? at::kByte
                      : q.scalar_type() == at::kQInt8 ? at::kChar
                                                      : at::kInt;
  c10::Storage storage = q.storage();
  return at::from_blob(
      q.data_ptr(), q.sizes(), q.strides(), [storage](void*) mutable { storage = c10::Storage(); },
      q.options().dtype(dt));
}

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
inline at::MemoryFormat kept_format(const at::Tensor& t) {
  return t.suggest_memory_format();
}

} // namespace qplugin
