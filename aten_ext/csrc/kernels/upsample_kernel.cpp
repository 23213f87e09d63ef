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
      int64_t ow = 0;
#if QPLUGIN_SIMD
      // Exact 2x along the width (source column ow >> 1): widen each byte to 16 bits
      // and copy it into the high byte.
      if (sizeof(T) == 1 && g.OW == 2 * g.W) {
        const auto* rb = reinterpret_cast<const uint8_t*>(r);
        auto* ob = reinterpret_cast<uint8_t*>(o);
#if defined(QPLUGIN_ISA_AVX512)
        for (; ow + 64 <= g.OW; ow += 64) {
          const __m512i v = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rb + ow / 2)));
          _mm512_storeu_si512(ob + ow, _mm512_or_si512(v, _mm512_slli_epi16(v, 8)));
        }
#else
        for (; ow + 32 <= g.OW; ow += 32) {
          const __m256i v = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rb + ow / 2)));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(ob + ow), _mm256_or_si256(v, _mm256_slli_epi16(v, 8)));
        }
#endif
      }
#endif
      for (; ow < g.OW; ++ow) o[ow] = r[g.widx[ow]];
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
