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

// clang-format off
#define QPLUGIN_UPSAMPLE_KERNELS(X)                                                                \
  X(void, upsample_nearest2d_nchw_u8, (const uint8_t* in, uint8_t* out, int64_t planes, const Upsample2dGeom& g))   \
  X(void, upsample_nearest2d_nchw_s32, (const int32_t* in, int32_t* out, int64_t planes, const Upsample2dGeom& g))  \
  X(void, upsample_nearest2d_nhwc, (const uint8_t* in, uint8_t* out, int64_t row_bytes, int64_t oh_begin, int64_t oh_end, const Upsample2dGeom& g))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_UPSAMPLE_KERNELS)

} // namespace kernels
} // namespace qplugin
