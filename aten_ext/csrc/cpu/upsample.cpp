// CPU glue for nearest-neighbour 2-D upsampling: checks, torch's nearest
// source-index rule, tensor::parallel_for, kernels/upsample_kernel.
//
// Source index of output index o (torch's nearest_idx, float math included):
//   out == in: o;  out == 2 * in: o >> 1;
//   else min(int64(floorf(float(o) * (float(in) / out))), in - 1).
#include "cpu/upsample.h"

#include "utils/torch_api.h"

#include <algorithm>
#include <cmath>

#include "cpu/pool.h"
#include "kernels/dispatch.h"
#include "kernels/upsample_kernel.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;

std::vector<int64_t> nearest_indices(int64_t in, int64_t out) {
  std::vector<int64_t> idx(out);
  if (out == in) {
    for (int64_t o = 0; o < out; ++o) idx[o] = o;
  } else if (out == 2 * in) {
    for (int64_t o = 0; o < out; ++o) idx[o] = o >> 1;
  } else {
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    for (int64_t o = 0; o < out; ++o) {
      idx[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
    }
  }
  return idx;
}

// torch's area_pixel_compute_scale / _source_index in float (its quantized bilinear kernel's
// accumulation type): source position of each output index, split into a lower index, the
// offset of the upper one (0 on the last row / column) and the two weights.
struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<float> w_lo, w_hi;
};

Taps bilinear_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  float s;
  if (align_corners) {
    s = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  } else {
    s = (scale.has_value() && *scale > 0) ? static_cast<float>(1.0 / *scale)
                                          : static_cast<float>(in) / static_cast<float>(out);
  }
  Taps t{std::vector<int64_t>(out), std::vector<int64_t>(out), std::vector<float>(out), std::vector<float>(out)};
  for (int64_t o = 0; o < out; ++o) {
    float r;
    if (align_corners) {
      r = s * static_cast<float>(o);
    } else {
      r = s * (static_cast<float>(o) + 0.5f) - 0.5f;
      r = r < 0.0f ? 0.0f : r;
    }
    // A source position at or past the input's end (a tiny scales_h / scales_w: 1 / scale overflows
    // float to inf) reads the last row / column; casting such an r to int64 would be undefined.
    const bool past_end = !(r < static_cast<float>(in));
    const int64_t i = past_end ? in - 1 : std::min(static_cast<int64_t>(r), in - 1);
    t.lo[o] = i;
    t.hi[o] = i < in - 1 ? i + 1 : i;
    t.w_hi[o] = past_end ? 0.0f : r - static_cast<float>(i);
    t.w_lo[o] = 1.0f - t.w_hi[o];
  }
  return t;
}

}  // namespace

std::vector<int64_t> upsample_nearest2d_output_sizes(const char* op, IntArrayRef sizes, IntArrayRef output_size) {
  QP_CHECK_VALUE(sizes.size() == 3 || sizes.size() == 4, "qplugin::", op,
                 ": qx should be 3-D (C, H, W) or 4-D (N, C, H, W), got ", sizes.size(), "-D with shape ", sizes);
  QP_CHECK_VALUE(output_size.size() == 2, "qplugin::", op, ": output_size should have 2 entries, got ",
                 output_size.size(), " (", output_size, ")");
  QP_CHECK_VALUE(output_size[0] >= 1 && output_size[1] >= 1, "qplugin::", op,
                 ": output_size should be at least 1x1, got ", output_size);
  const int64_t H = sizes[sizes.size() - 2], W = sizes[sizes.size() - 1];
  QP_CHECK_VALUE(H >= 1 && W >= 1, "qplugin::", op, ": input should have non-empty spatial dims, got shape ", sizes);
  std::vector<int64_t> out(sizes.begin(), sizes.end());
  out[out.size() - 2] = output_size[0];
  out[out.size() - 1] = output_size[1];
  check_output_size(op, out, 4);  // up to 4 bytes an element (qint32 / int32)
  return out;
}

void upsample_nearest2d_int_out(const Tensor& data, const Tensor& out) {
  const MemoryFormat fmt = pool_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  if (out.numel() == 0) return;
  const int64_t N = x.dim() == 4 ? x.size(0) : 1;
  const int64_t C = x.size(-3), H = x.size(-2), W = x.size(-1);
  const int64_t OH = out.size(-2), OW = out.size(-1);
  const std::vector<int64_t> hidx = nearest_indices(H, OH), widx = nearest_indices(W, OW);
  const kernels::Upsample2dGeom g{H, W, OH, OW, hidx.data(), widx.data()};
  const int64_t esz = x.element_size();
  const auto* ip = static_cast<const uint8_t*>(x.const_data_ptr());
  auto* op = static_cast<uint8_t*>(out.mutable_data_ptr());
  if (fmt == MemoryFormat::ChannelsLast) {
    const int64_t pix = C * esz;
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, OW * pix));
    tensor::parallel_for(0, N * OH, grain, [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e;) {
        const int64_t n = u / OH, oh0 = u % OH, oh1 = std::min(OH, oh0 + (e - u));
        QPLUGIN_ISA_CALL(upsample_nearest2d_nhwc, ip + n * H * W * pix, op + n * OH * OW * pix, pix, oh0, oh1, g);
        u += oh1 - oh0;
      }
    });
  } else {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, OH * OW));
    tensor::parallel_for(0, N * C, grain, [&](int64_t b, int64_t e) {
      if (esz == 1) {
        QPLUGIN_ISA_CALL(upsample_nearest2d_nchw_u8, ip + b * H * W, op + b * OH * OW, e - b, g);
      } else {
        QPLUGIN_ISA_CALL(upsample_nearest2d_nchw_s32, reinterpret_cast<const int32_t*>(ip) + b * H * W,
                         reinterpret_cast<int32_t*>(op) + b * OH * OW, e - b, g);
      }
    });
  }
}

void upsample_bilinear2d_int_out(const Tensor& data, const Tensor& out, bool align_corners,
                                 std::optional<double> scales_h, std::optional<double> scales_w) {
  const MemoryFormat fmt = pool_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  QP_ASSERT(tensor::dtype(x) == kByte || tensor::dtype(x) == kChar);
  if (out.numel() == 0) return;
  const int64_t N = x.dim() == 4 ? x.size(0) : 1;
  const int64_t C = x.size(-3), H = x.size(-2), W = x.size(-1);
  const int64_t OH = out.size(-2), OW = out.size(-1);
  const Taps th = bilinear_taps(H, OH, align_corners, scales_h), tw = bilinear_taps(W, OW, align_corners, scales_w);
  const kernels::Bilinear2dGeom g{H,
                                  W,
                                  OH,
                                  OW,
                                  th.lo.data(),
                                  th.hi.data(),
                                  th.w_lo.data(),
                                  th.w_hi.data(),
                                  tw.lo.data(),
                                  tw.hi.data(),
                                  tw.w_lo.data(),
                                  tw.w_hi.data()};
  const bool u8 = tensor::dtype(x) == kByte;
  const auto* ip = static_cast<const uint8_t*>(x.const_data_ptr());
  auto* op = static_cast<uint8_t*>(out.mutable_data_ptr());
  if (fmt == MemoryFormat::ChannelsLast) {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, OW * C));
    tensor::parallel_for(0, N * OH, grain, [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e;) {
        const int64_t n = u / OH, oh0 = u % OH, oh1 = std::min(OH, oh0 + (e - u));
        const uint8_t* src = ip + n * H * W * C;
        uint8_t* dst = op + n * OH * OW * C;
        if (u8) {
          QPLUGIN_ISA_CALL(upsample_bilinear2d_nhwc_u8, src, dst, C, oh0, oh1, g);
        } else {
          QPLUGIN_ISA_CALL(upsample_bilinear2d_nhwc_s8, reinterpret_cast<const int8_t*>(src),
                           reinterpret_cast<int8_t*>(dst), C, oh0, oh1, g);
        }
        u += oh1 - oh0;
      }
    });
  } else {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, OH * OW));
    tensor::parallel_for(0, N * C, grain, [&](int64_t b, int64_t e) {
      if (u8) {
        QPLUGIN_ISA_CALL(upsample_bilinear2d_nchw_u8, ip + b * H * W, op + b * OH * OW, e - b, g);
      } else {
        QPLUGIN_ISA_CALL(upsample_bilinear2d_nchw_s8, reinterpret_cast<const int8_t*>(ip) + b * H * W,
                         reinterpret_cast<int8_t*>(op) + b * OH * OW, e - b, g);
      }
    });
  }
}

Tensor upsample_nearest2d_int(const Tensor& data, IntArrayRef output_size) {
  constexpr const char* op = "upsample_nearest2d";
  QP_CHECK((tensor::dtype(data) == kByte || tensor::dtype(data) == kChar || tensor::dtype(data) == kInt),
           "qplugin::", op, ": input should hold uint8, int8 or int32 data, got dtype ", tensor::dtype(data));
  Tensor out = tensor::empty(upsample_nearest2d_output_sizes(op, data.sizes(), output_size), tensor::dtype(data),
                             pool_format(data));
  upsample_nearest2d_int_out(data, out);
  return out;
}

}  // namespace cpu

}  // namespace qplugin
