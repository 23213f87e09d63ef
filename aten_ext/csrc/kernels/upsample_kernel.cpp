// Nearest-neighbour 2-D upsampling; see upsample_kernel.h. Pure data
// movement: an output row whose source row equals the previous output row's
// is a copy of that row; NHWC pixels are whole-channel memcpy's.
#include "kernels/upsample_kernel.h"

#include <cstring>

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

template <typename T>
void upsample_nchw(const T* in, T* out, int64_t planes, const Upsample2dGeom& g) {
  for (int64_t p = 0; p < planes; ++p) {
    const T* ip = in + p * g.H * g.W;
    T* op = out + p * g.OH * g.OW;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      T* o = op + oh * g.OW;
      if (oh > 0 && g.hidx[oh] == g.hidx[oh - 1]) {
        std::memcpy(o, o - g.OW, g.OW * sizeof(T));
        continue;
      }
      const T* r = ip + g.hidx[oh] * g.W;
      for (int64_t ow = 0; ow < g.OW; ++ow) o[ow] = r[g.widx[ow]];
    }
  }
}

} // namespace

void upsample_nearest2d_nchw_u8(const uint8_t* in, uint8_t* out, int64_t planes, const Upsample2dGeom& g) {
  upsample_nchw(in, out, planes, g);
}
void upsample_nearest2d_nchw_s32(const int32_t* in, int32_t* out, int64_t planes, const Upsample2dGeom& g) {
  upsample_nchw(in, out, planes, g);
}

void upsample_nearest2d_nhwc(const uint8_t* in, uint8_t* out, int64_t row_bytes, int64_t oh_begin,
                             int64_t oh_end, const Upsample2dGeom& g) {
  // row_bytes: bytes of one pixel (C * element size).
  for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
    uint8_t* o = out + oh * g.OW * row_bytes;
    if (oh > oh_begin && g.hidx[oh] == g.hidx[oh - 1]) {
      std::memcpy(o, o - g.OW * row_bytes, g.OW * row_bytes);
      continue;
    }
    const uint8_t* r = in + g.hidx[oh] * g.W * row_bytes;
    for (int64_t ow = 0; ow < g.OW; ++ow) std::memcpy(o + ow * row_bytes, r + g.widx[ow] * row_bytes, row_bytes);
  }
}

} // namespace QPLUGIN_ISA_NS
} // namespace kernels
} // namespace qplugin
