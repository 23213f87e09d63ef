// Raw-pointer nearest-neighbour 2-D upsampling on plain integer data (any
// element size: it moves bytes). No ATen. Source indices are precomputed by
// the caller (cpu/upsample.cpp) with torch's nearest rule.
//   *_nchw: `planes` dense H x W planes in, dense OH x OW planes out.
//   *_nhwc: one dense H x W x C image in, OH x OW x C out; output rows
//           [oh_begin, oh_end).
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

struct Upsample2dGeom {
  int64_t H, W, OH, OW;
  const int64_t* hidx;  // [OH] source row of each output row
  const int64_t* widx;  // [OW] source column of each output column
};

// Bilinear 2-D upsampling of 8-bit integers (output keeps the input's qparams).
// Per output pixel, with the caller's source rows y0 / y1 and columns x0 / x1
// and float weights (torch's area_pixel source-index rule):
//   top = wl0 * q[y0][x0] + wl1 * q[y0][x1],  bot = wl0 * q[y1][x0] + wl1 * q[y1][x1]
//   out = clamp(round_half_even(hl0 * top + hl1 * bot))
// in float32, each product and sum rounded in that order (no FMA): every path
// and both layouts give the same bits.
struct Bilinear2dGeom {
  int64_t H, W, OH, OW;
  const int64_t* y0;  // [OH]
  const int64_t* y1;
  const float* hl0;
  const float* hl1;
  const int64_t* x0;  // [OW]
  const int64_t* x1;
  const float* wl0;
  const float* wl1;
};

// clang-format off
#define QPLUGIN_UPSAMPLE_KERNELS(X)                                                                \
  X(void, upsample_nearest2d_nchw_u8, (const uint8_t* in, uint8_t* out, int64_t planes, const Upsample2dGeom& g))   \
  X(void, upsample_nearest2d_nchw_s32, (const int32_t* in, int32_t* out, int64_t planes, const Upsample2dGeom& g))  \
  X(void, upsample_nearest2d_nhwc, (const uint8_t* in, uint8_t* out, int64_t row_bytes, int64_t oh_begin, int64_t oh_end, const Upsample2dGeom& g)) \
  /* planes dense H x W in, OH x OW out */                                                         \
  X(void, upsample_bilinear2d_nchw_u8, (const uint8_t* in, uint8_t* out, int64_t planes, const Bilinear2dGeom& g))   \
  X(void, upsample_bilinear2d_nchw_s8, (const int8_t* in, int8_t* out, int64_t planes, const Bilinear2dGeom& g))    \
  /* one H x W x C image in, OH x OW x C out; output rows [oh_begin, oh_end) */                     \
  X(void, upsample_bilinear2d_nhwc_u8, (const uint8_t* in, uint8_t* out, int64_t C, int64_t oh_begin, int64_t oh_end, const Bilinear2dGeom& g)) \
  X(void, upsample_bilinear2d_nhwc_s8, (const int8_t* in, int8_t* out, int64_t C, int64_t oh_begin, int64_t oh_end, const Bilinear2dGeom& g))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_UPSAMPLE_KERNELS)

}  // namespace kernels
}  // namespace qplugin
