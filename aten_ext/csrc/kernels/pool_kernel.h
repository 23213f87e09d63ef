// Raw-pointer 2-D pooling kernels (max / average / adaptive average) on plain
// integer data (uint8 / int8 / int32). No ATen. Threading and argument checks
// are the caller's (cpu/pool.cpp); docs/design/pooling.md explains the design.
//
// Layouts:
//   *_nchw: `planes` dense H x W planes in, dense OH x OW planes out.
//   *_nhwc: one dense H x W x C image in, OH x OW x C out; the kernel does
//           output rows [oh_begin, oh_end) and channels [c_begin, c_end).
// 3-D average pooling uses the same kernels: a plane is D x H x W (NCDHW) or
// the image D x H x W x C (NDHWC), and the NHWC row range counts rows of all
// OD output slices (row r is slice r / OH, row r % OH).
//
// Max pooling: out = max over the valid window taps (padding never wins); a
// window with no valid tap (possible only with dilation on tiny inputs) gives
// the type's lowest value, as torch.
//
// Average pooling (avg_pool2d / 3d and adaptive_avg_pool2d / 3d share the
// kernels): the window of output (od, oh, ow) is slices [ds[od], de[od]) x rows
// [hs[oh], he[oh]) x cols [ws[ow], we[ow]) (already clipped to the input; 2-D
// pooling has D = OD = 1 and no depth tables). With s the integer sum over the window:
//   q = clamp(nearbyint(float(float(s - off[p]) * mult[p]) + zadd))
// where p = (dcls[od] * nrc + rcls[oh]) * ncc + ccls[ow]; the caller fills off / mult / zadd for the op's
// rounding rule (cpu/pool.cpp). int32 data instead uses the exact quotient
// nearbyint(double(s - off[p]) / div[p]) + zadd_d (float32 would drift on large values). Sums are int32 for 8-bit data
// (the caller uses the *_wide variants, int64 sums, when a window may overflow int32) and int64 for int32 data.
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

struct MaxPool2dGeom {
  int64_t H, W, OH, OW;
  int64_t kH, kW, sH, sW, pH, pW, dH, dW;
};

struct AvgPool2dGeom {
  int64_t H, W, OH, OW;
  const int64_t* hs;  // [OH]
  const int64_t* he;  // [OH]
  const int64_t* ws;  // [OW]
  const int64_t* we;  // [OW]
  // off / mult are per window class: output (oh, ow) uses entry rcls[oh] * ncc + ccls[ow]
  // (windows fall into a few classes: edges and interior), so tables stay tiny.
  const int32_t* rcls;  // [OH]
  const int32_t* ccls;  // [OW]
  int64_t ncc;
  const int64_t* off;
  const float* mult;
  float zadd;
  float qmin, qmax;
  // int32 data is requantized exactly: q = clamp(nearbyint(double(s - off[k]) / div[k]) + zadd_d)
  const int64_t* div;  // the window's divisor per class
  double zadd_d;
  // Depth (3-D pooling); the 2-D caller leaves the defaults (one slice, no tables).
  int64_t D = 1, OD = 1;
  const int64_t* ds = nullptr;    // [OD]
  const int64_t* de = nullptr;    // [OD]
  const int32_t* dcls = nullptr;  // [OD]
  int64_t nrc = 0;                // row classes (a depth class spans nrc * ncc entries)
};

// clang-format off
#define QPLUGIN_POOL_KERNELS(X)                                                                    \
  X(void, max_pool2d_nchw_u8, (const uint8_t* in, uint8_t* out, int64_t planes, const MaxPool2dGeom& g)) \
  X(void, max_pool2d_nchw_s8, (const int8_t* in, int8_t* out, int64_t planes, const MaxPool2dGeom& g))   \
  X(void, max_pool2d_nchw_s32, (const int32_t* in, int32_t* out, int64_t planes, const MaxPool2dGeom& g)) \
  X(void, max_pool2d_nhwc_u8, (const uint8_t* in, uint8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin, int64_t oh_end, const MaxPool2dGeom& g)) \
  X(void, max_pool2d_nhwc_s8, (const int8_t* in, int8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin, int64_t oh_end, const MaxPool2dGeom& g))   \
  X(void, max_pool2d_nhwc_s32, (const int32_t* in, int32_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin, int64_t oh_end, const MaxPool2dGeom& g)) \
  X(void, avg_pool2d_nchw_u8, (const uint8_t* in, uint8_t* out, int64_t planes, const AvgPool2dGeom& g)) \
  X(void, avg_pool2d_nchw_s8, (const int8_t* in, int8_t* out, int64_t planes, const AvgPool2dGeom& g))   \
  X(void, avg_pool2d_nchw_wide_u8, (const uint8_t* in, uint8_t* out, int64_t planes, const AvgPool2dGeom& g)) \
  X(void, avg_pool2d_nchw_wide_s8, (const int8_t* in, int8_t* out, int64_t planes, const AvgPool2dGeom& g))   \
  X(void, avg_pool2d_nchw_s32, (const int32_t* in, int32_t* out, int64_t planes, const AvgPool2dGeom& g)) \
  X(void, avg_pool2d_nhwc_u8, (const uint8_t* in, uint8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g)) \
  X(void, avg_pool2d_nhwc_s8, (const int8_t* in, int8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g))   \
  X(void, avg_pool2d_nhwc_wide_u8, (const uint8_t* in, uint8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g)) \
  X(void, avg_pool2d_nhwc_wide_s8, (const int8_t* in, int8_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g))   \
  X(void, avg_pool2d_nhwc_s32, (const int32_t* in, int32_t* out, int64_t C, int64_t c_begin, int64_t c_end, int64_t oh_begin, int64_t oh_end, const AvgPool2dGeom& g))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_POOL_KERNELS)

}  // namespace kernels
}  // namespace qplugin
