// CPU glue for the quantize family on plain data: validate, lay out, allocate, call kernels/. The
// quantized-dtype forms (quantize_per_tensor / _channel / _dynamic, make_per_*_quantized_tensor)
// allocate their output in quantized/cpu/quantize.cpp and fill it through these.
#include "cpu/quantize.h"

#include "utils/torch_api.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/quantize_kernel.h"
#include "kernels/quantize_math.h"
#include "utils/checks.h"
#include "utils/layout.h"

namespace qplugin {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;                  // elements per task
constexpr int64_t kStreamBytes = int64_t(48) << 20;  // non-temporal stores above this output size

// The wrapped channel axis of a per-channel tensor.
int64_t check_channel_axis(const char* op, const Tensor& self, int64_t axis) {
  QP_CHECK_VALUE(self.dim() > 0, "qplugin::", op,
                 ": self should have at least one dim for per-channel quantization, got a 0-dim tensor");
  return check_dim(op, "axis", axis, self.dim());
}

// Validated per-channel qparams, in the forms the kernels take.
struct ChannelParams {
  Tensor scales;                  // float64, as quantized tensors store them
  Tensor zero_points;             // int64
  std::vector<float> inv_scales;  // kernels::inv_scale_of (8-bit)
  std::vector<double> scales_d;   // qint32
  std::vector<int32_t> zps;
};

ChannelParams check_channel_params(const char* op, const Tensor& scales, const Tensor& zero_points, int64_t channels,
                                   ScalarType qdtype) {
  QP_CHECK(is_floating_dtype(tensor::dtype(scales)), "qplugin::", op,
           ": scales should be a float32 or float64 tensor, got dtype ", tensor::dtype(scales));
  QP_CHECK(is_integral_dtype(tensor::dtype(zero_points)), "qplugin::", op,
           ": zero_points should be an int32 or int64 tensor, got dtype ", tensor::dtype(zero_points));
  QP_CHECK_VALUE(scales.dim() == 1 && scales.numel() == channels, "qplugin::", op,
                 ": scales should be 1-D with one entry per channel (", channels, "), got shape ", scales.sizes());
  QP_CHECK_VALUE(zero_points.dim() == 1 && zero_points.numel() == channels, "qplugin::", op,
                 ": zero_points should be 1-D with one entry per channel (", channels, "), got shape ",
                 zero_points.sizes());
  ChannelParams p;
  p.scales = tensor::contiguous(tensor::to(scales, kDouble));
  p.zero_points = tensor::contiguous(tensor::to(zero_points, kLong));
  const double* s = tensor::mutable_data<double>(p.scales);
  const int64_t* z = tensor::mutable_data<int64_t>(p.zero_points);
  const auto range = qrange(qdtype);
  for (int64_t c = 0; c < channels; ++c) {
    const float fs = static_cast<float>(s[c]);
    const float inv = kernels::inv_scale_of(s[c]);
    QP_CHECK_VALUE(std::isfinite(s[c]) && s[c] > 0 && fs > 0.0f && std::isfinite(fs) && std::isfinite(inv),
                   "qplugin::", op, ": scales[", c,
                   "] should be a positive finite number with a finite float32 reciprocal, got ", s[c]);
    QP_CHECK_VALUE(z[c] >= range.first && z[c] <= range.second, "qplugin::", op, ": zero_points[", c,
                   "] should be in [", range.first, ", ", range.second, "] for ", range_name(qdtype), ", got ", z[c]);
    p.inv_scales.push_back(inv);
    p.scales_d.push_back(s[c]);
    p.zps.push_back(static_cast<int32_t>(z[c]));
  }
  return p;
}

// Runs fn(begin, end) over [0, n) in tasks of about kGrain elements.
template <typename F>
void parallel_elems(int64_t n, F fn) {
  tensor::parallel_for(0, n, kGrain, fn);
}

// Per-channel data is walked either as rows (one channel's contiguous run of
// `inner` elements; long runs) or as repeating periods of channels * inner
// elements with per-element parameters (channel varies fast: channels_last,
// last-dim axis). Short periods are repeated so vectors stay full.
struct PerChannelWalk {
  AxisSplit split;
  bool rows;
  int64_t period;                   // elements per period (periodic walk)
  std::vector<int64_t> channel_of;  // channel of each element of a period
};

PerChannelWalk plan_walk(IntArrayRef sizes, int64_t axis, MemoryFormat fmt) {
  PerChannelWalk w{axis_split(sizes, axis, fmt), false, 0, {}};
  // No elements (any dim of size 0, the channel axis included): nothing is walked, and no
  // period may index the (possibly empty) per-channel vectors.
  w.rows = w.split.inner >= 64 || w.split.outer * w.split.channels * w.split.inner == 0;
  if (!w.rows) {
    const int64_t base = std::max<int64_t>(1, w.split.channels * w.split.inner);
    const int64_t reps = std::max<int64_t>(1, (256 + base - 1) / base);
    w.period = base * reps;
    w.channel_of.resize(w.period);
    for (int64_t j = 0; j < w.period; ++j) w.channel_of[j] = (j % base) / std::max<int64_t>(1, w.split.inner);
  }
  return w;
}

template <typename T, typename V>
std::vector<T> expand(const std::vector<V>& per_channel, const std::vector<int64_t>& channel_of) {
  std::vector<T> out(channel_of.size());
  for (size_t j = 0; j < channel_of.size(); ++j) out[j] = static_cast<T>(per_channel[channel_of[j]]);
  return out;
}

// Runs row_fn(row, channel) over all rows, or period_fn(offset, len) over
// period-aligned chunks, in parallel.
template <typename RowFn, typename PeriodFn>
void walk_per_channel(const PerChannelWalk& w, int64_t numel, RowFn row_fn, PeriodFn period_fn) {
  if (numel == 0) return;
  if (w.rows) {
    const int64_t rows = w.split.outer * w.split.channels;
    const int64_t grain = std::max<int64_t>(1, kGrain / w.split.inner);
    tensor::parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) row_fn(r * w.split.inner, r % w.split.channels);
    });
  } else {
    const int64_t periods = (numel + w.period - 1) / w.period;
    const int64_t grain = std::max<int64_t>(1, kGrain / w.period);
    tensor::parallel_for(0, periods, grain, [&](int64_t b, int64_t e) {
      const int64_t off = b * w.period;
      period_fn(off, std::min(e * w.period, numel) - off);
    });
  }
}

}  // namespace

Tensor as_float_input(const char* op, const Tensor& self) {
  check_float_input(op, "self", self);
  return tensor::contiguous(self, kept_format(self));
}

QParams choose_qparams(float min, float max, int32_t qmin, int32_t qmax, bool reduce_range) {
  if (reduce_range) {
    qmin /= 2;
    qmax /= 2;
  }
  min = std::min(min, 0.0f);
  max = std::max(max, 0.0f);
  double scale = (static_cast<double>(max) - min) / (qmax - qmin);
  if (static_cast<float>(scale) == 0.0f || std::isinf(1.0f / static_cast<float>(scale))) {
    scale = 0.1;
  }
  constexpr float kSmallScale = 6.1e-5f;  // fp16 min normal, as torch
  if (scale < kSmallScale) {
    const float org_scale = static_cast<float>(scale);
    scale = kSmallScale;
    if (min == 0.0f) {
      max = kSmallScale * (qmax - qmin);
    } else if (max == 0.0f) {
      min = -kSmallScale * (qmax - qmin);
    } else {
      const float amplifier = kSmallScale / org_scale;
      min *= amplifier;
      max *= amplifier;
    }
  }
  const double zp_from_min = qmin - min / scale;
  const double zp_from_max = qmax - max / scale;
  const double err_min = std::abs(qmin) - std::abs(min / scale);
  const double err_max = std::abs(qmax) - std::abs(max / scale);
  const double zp = err_min < err_max ? zp_from_min : zp_from_max;
  int32_t nudged;
  if (zp < qmin) {
    nudged = qmin;
  } else if (zp > qmax) {
    nudged = qmax;
  } else {
    nudged = static_cast<int32_t>(std::nearbyint(zp));
  }
  return {scale, nudged};
}

void parallel_copy(void* dst, const void* src, int64_t nbytes) {
  if (nbytes <= 0) return;
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  tensor::parallel_for(0, nbytes, 1 << 20, [&](int64_t b, int64_t e) {
    std::memcpy(d + b, s + b, e - b);
  });
}

// q = quantize(x) into yp (dense in x's layout); int_dtype: uint8 / int8 / int32.
void quantize_tensor_into(const Tensor& x, double scale, int64_t zero_point, ScalarType int_dtype, void* yp) {
  const float inv = kernels::inv_scale_of(scale);
  const int32_t zp = static_cast<int32_t>(zero_point);
  const float* xp = tensor::data<float>(x);
  // A huge input streams through the caches and evicts the output anyway: write it with
  // non-temporal stores (no read-for-ownership of every output line).
  const bool stream = x.numel() * static_cast<int64_t>(sizeof(float)) >= kStreamBytes;
  parallel_elems(x.numel(), [&](int64_t b, int64_t e) {
    if (int_dtype == kByte) {
      if (stream) {
        QPLUGIN_ISA_CALL(quantize_u8_stream, xp + b, static_cast<uint8_t*>(yp) + b, e - b, inv, zp);
      } else {
        QPLUGIN_ISA_CALL(quantize_u8, xp + b, static_cast<uint8_t*>(yp) + b, e - b, inv, zp);
      }
    } else if (int_dtype == kChar) {
      if (stream) {
        QPLUGIN_ISA_CALL(quantize_s8_stream, xp + b, static_cast<int8_t*>(yp) + b, e - b, inv, zp);
      } else {
        QPLUGIN_ISA_CALL(quantize_s8, xp + b, static_cast<int8_t*>(yp) + b, e - b, inv, zp);
      }
    } else {
      QPLUGIN_ISA_CALL(quantize_s32, xp + b, static_cast<int32_t*>(yp) + b, e - b, scale, zp);
    }
  });
}

Tensor quantize_per_tensor_int(const char* op, const Tensor& self, double scale, int64_t zero_point, ScalarType dtype) {
  check_int_dtype(op, "dtype", dtype);
  check_scale(op, "scale", scale);
  check_zero_point(op, "zero_point", zero_point, dtype);
  const Tensor x = as_float_input(op, self);
  Tensor out = tensor::empty(x.sizes(), dtype, kept_format(self));
  quantize_tensor_into(x, scale, zero_point, dtype, out.mutable_data_ptr());
  return out;
}

Tensor quantize_per_channel_with(const char* op, const Tensor& self, const Tensor& scales, const Tensor& zero_points,
                                 int64_t axis, ScalarType int_dtype, const PerChannelAlloc& make_out) {
  const int64_t ax = check_channel_axis(op, self, axis);
  const Tensor x = as_float_input(op, self);
  ChannelParams p = check_channel_params(op, scales, zero_points, x.size(ax), int_dtype);
  const MemoryFormat fmt = kept_format(self);
  Tensor out = make_out(x, p.scales, p.zero_points, ax, fmt);
  const PerChannelWalk w = plan_walk(x.sizes(), ax, fmt);
  const float* xp = tensor::data<float>(x);
  void* yp = out.mutable_data_ptr();
  const int64_t inner = w.split.inner;
  // The periodic walk's per-element parameters: 8-bit takes inverse scales, qint32 scales.
  std::vector<float> inv_p;
  std::vector<double> s_p;
  std::vector<int32_t> z_p;
  if (!w.rows) {
    if (int_dtype == kInt) {
      s_p = expand<double>(p.scales_d, w.channel_of);
    } else {
      inv_p = expand<float>(p.inv_scales, w.channel_of);
    }
    z_p = expand<int32_t>(p.zps, w.channel_of);
  }
  walk_per_channel(
      w, x.numel(),
      [&](int64_t off, int64_t c) {
        const float inv = p.inv_scales[c];
        const int32_t zp = p.zps[c];
        if (int_dtype == kByte) {
          QPLUGIN_ISA_CALL(quantize_ch_u8, xp + off, static_cast<uint8_t*>(yp) + off, inner, inv, zp);
        } else if (int_dtype == kChar) {
          QPLUGIN_ISA_CALL(quantize_ch_s8, xp + off, static_cast<int8_t*>(yp) + off, inner, inv, zp);
        } else {
          QPLUGIN_ISA_CALL(quantize_s32, xp + off, static_cast<int32_t*>(yp) + off, inner, p.scales_d[c], zp);
        }
      },
      [&](int64_t off, int64_t len) {
        if (int_dtype == kByte) {
          QPLUGIN_ISA_CALL(quantize_periodic_u8, xp + off, static_cast<uint8_t*>(yp) + off, len, w.period, inv_p.data(),
                           z_p.data());
        } else if (int_dtype == kChar) {
          QPLUGIN_ISA_CALL(quantize_periodic_s8, xp + off, static_cast<int8_t*>(yp) + off, len, w.period, inv_p.data(),
                           z_p.data());
        } else {
          QPLUGIN_ISA_CALL(quantize_periodic_s32, xp + off, static_cast<int32_t*>(yp) + off, len, w.period, s_p.data(),
                           z_p.data());
        }
      });
  return out;
}

Tensor quantize_per_channel_int(const char* op, const Tensor& self, const Tensor& scales, const Tensor& zero_points,
                                int64_t axis, ScalarType dtype) {
  check_int_dtype(op, "dtype", dtype);
  return quantize_per_channel_with(op, self, scales, zero_points, axis, dtype,
                                   [dtype](const Tensor& x, const Tensor&, const Tensor&, int64_t, MemoryFormat fmt) {
                                     return tensor::empty(x.sizes(), dtype, fmt);
                                   });
}

void check_per_channel_qparams(const char* op, const Tensor& data, const Tensor& scales, const Tensor& zero_points,
                               int64_t* axis) {
  *axis = check_channel_axis(op, data, *axis);
  check_channel_params(op, scales, zero_points, data.size(*axis), tensor::dtype(data));
}

Tensor dequantize_per_tensor_int(const Tensor& data, double scale, int64_t zero_point) {
  const MemoryFormat fmt = kept_format(data);
  const Tensor q = tensor::contiguous(data, fmt);
  Tensor out = tensor::empty(q.sizes(), kFloat, fmt);
  const float s = static_cast<float>(scale);
  const int32_t zp = static_cast<int32_t>(zero_point);
  const void* qp = q.const_data_ptr();
  float* yp = tensor::mutable_data<float>(out);
  const ScalarType dt = tensor::dtype(q);
  // Outputs far beyond the last-level cache go around it (no read-for-ownership).
  const bool stream = q.numel() * static_cast<int64_t>(sizeof(float)) >= kStreamBytes;
  parallel_elems(q.numel(), [&](int64_t b, int64_t e) {
    if (dt == kByte) {
      QPLUGIN_ISA_CALL(dequantize_u8, static_cast<const uint8_t*>(qp) + b, yp + b, e - b, s, zp, stream);
    } else if (dt == kChar) {
      QPLUGIN_ISA_CALL(dequantize_s8, static_cast<const int8_t*>(qp) + b, yp + b, e - b, s, zp, stream);
    } else {
      QPLUGIN_ISA_CALL(dequantize_s32, static_cast<const int32_t*>(qp) + b, yp + b, e - b, s, zp, stream);
    }
  });
  return out;
}

Tensor dequantize_per_channel_int(const Tensor& data, const Tensor& scales, const Tensor& zero_points, int64_t axis) {
  const MemoryFormat fmt = kept_format(data);
  const Tensor q = tensor::contiguous(data, fmt);
  Tensor out = tensor::empty(q.sizes(), kFloat, fmt);
  const int64_t channels = q.size(axis);
  const Tensor sc = tensor::contiguous(tensor::to(scales, kDouble));
  const Tensor zc = tensor::contiguous(tensor::to(zero_points, kInt));
  QP_ASSERT(sc.numel() == channels && zc.numel() == channels);
  std::vector<double> s(tensor::data<double>(sc), tensor::data<double>(sc) + channels);
  std::vector<int32_t> z(tensor::data<int32_t>(zc), tensor::data<int32_t>(zc) + channels);
  const PerChannelWalk w = plan_walk(q.sizes(), axis, fmt);
  std::vector<double> s_p;
  std::vector<int32_t> z_p;
  if (!w.rows) {
    s_p = expand<double>(s, w.channel_of);
    z_p = expand<int32_t>(z, w.channel_of);
  }
  const void* qp = q.const_data_ptr();
  float* yp = tensor::mutable_data<float>(out);
  const ScalarType dt = tensor::dtype(q);
  const int64_t inner = w.split.inner;
  walk_per_channel(
      w, q.numel(),
      [&](int64_t off, int64_t c) {
        if (dt == kByte) {
          QPLUGIN_ISA_CALL(dequantize_channel_u8, static_cast<const uint8_t*>(qp) + off, yp + off, inner, s[c], z[c]);
        } else if (dt == kChar) {
          QPLUGIN_ISA_CALL(dequantize_channel_s8, static_cast<const int8_t*>(qp) + off, yp + off, inner, s[c], z[c]);
        } else {
          QPLUGIN_ISA_CALL(dequantize_channel_s32, static_cast<const int32_t*>(qp) + off, yp + off, inner, s[c], z[c]);
        }
      },
      [&](int64_t off, int64_t len) {
        if (dt == kByte) {
          QPLUGIN_ISA_CALL(dequantize_periodic_u8, static_cast<const uint8_t*>(qp) + off, yp + off, len, w.period,
                           s_p.data(), z_p.data());
        } else if (dt == kChar) {
          QPLUGIN_ISA_CALL(dequantize_periodic_s8, static_cast<const int8_t*>(qp) + off, yp + off, len, w.period,
                           s_p.data(), z_p.data());
        } else {
          QPLUGIN_ISA_CALL(dequantize_periodic_s32, static_cast<const int32_t*>(qp) + off, yp + off, len, w.period,
                           s_p.data(), z_p.data());
        }
      });
  return out;
}

Tensor dense_copy(const Tensor& data) {
  const MemoryFormat fmt = kept_format(data);
  if (!tensor::is_contiguous(data, fmt)) {
    return tensor::contiguous(data, fmt);  // already a fresh dense copy
  }
  Tensor out = tensor::empty(data.sizes(), tensor::dtype(data), fmt);
  parallel_copy(out.mutable_data_ptr(), data.const_data_ptr(),
                data.numel() * static_cast<int64_t>(data.element_size()));
  return out;
}

}  // namespace cpu

}  // namespace qplugin
