// Nearest-neighbour and bilinear 2-D upsampling; see upsample_kernel.h.
// Nearest is pure data movement: NCHW output rows sharing a source row are
// written two at a time (each vector stored twice), further ones copied; NHWC
// output rows whose source row equals the previous one's are copies of that
// row, pixels whole-channel register moves. Bilinear interpolates in float32 (NCHW: vector along W after a
// scalar horizontal pass; NHWC: vector along C).
#include "kernels/upsample_kernel.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/bytes_simd.h"
#include "kernels/quantize_math.h"
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
    for (int64_t oh = 0; oh < g.OH;) {
      // Output rows [oh, oh + reps) share one source row: the first two are written together
      // (each vector stored twice; a memcpy of the second row cost as much as the first), the
      // rest copied.
      int64_t reps = 1;
      while (oh + reps < g.OH && g.hidx[oh + reps] == g.hidx[oh]) ++reps;
      T* o = op + oh * g.OW;
      const int64_t dup = reps >= 2 ? g.OW : 0;  // the second row's offset, 0: none
      const T* r = ip + g.hidx[oh] * g.W;
      int64_t ow = 0;
#if QPLUGIN_SIMD
      // Exact 2x along the width (source column ow >> 1): widen each byte to 16 bits
      // and copy it into the high byte.
      if (sizeof(T) == 1 && g.OW == 2 * g.W) {
        const auto* rb = reinterpret_cast<const uint8_t*>(r);
        auto* ob = reinterpret_cast<uint8_t*>(o);
        // The row's end: AVX-512 under masks, AVX2 / NEON one vector ending at OW (OW = 2W is even); a
        // scalar tail of up to 62 bytes a row made AVX-512 twice as slow as AVX2 on 112-wide rows.
#if defined(QPLUGIN_ISA_AVX512)
        for (; ow + 64 <= g.OW; ow += 64) {
          const __m512i v = bytes::load16(rb + ow / 2);
          const __m512i y = _mm512_or_si512(v, _mm512_slli_epi16(v, 8));
          _mm512_storeu_si512(ob + ow, y);
          _mm512_storeu_si512(ob + ow + dup, y);
        }
        if (ow < g.OW) {
          const int64_t m = g.OW - ow;
          const __m512i v =
              _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(_bzhi_u32(~0u, static_cast<uint32_t>(m / 2)), rb + ow / 2));
          const __m512i y = _mm512_or_si512(v, _mm512_slli_epi16(v, 8));
          const __mmask64 k = _bzhi_u64(~0ULL, static_cast<uint32_t>(m));
          _mm512_mask_storeu_epi8(ob + ow, k, y);
          _mm512_mask_storeu_epi8(ob + ow + dup, k, y);
          ow = g.OW;
        }
#elif defined(QPLUGIN_ISA_NEON)
        auto put = [&](int64_t at) {
          const uint8x16_t v = vld1q_u8(rb + at / 2);
          const uint8x16x2_t y = {{vzip1q_u8(v, v), vzip2q_u8(v, v)}};
          vst1q_u8_x2(ob + at, y);
          vst1q_u8_x2(ob + at + dup, y);
        };
        for (; ow + 32 <= g.OW; ow += 32) put(ow);
        if (ow < g.OW && g.OW >= 32) {
          put(g.OW - 32);
          ow = g.OW;
        }
#else
        auto put = [&](int64_t at) {
          const __m256i v = bytes::load16(rb + at / 2);
          const __m256i y = _mm256_or_si256(v, _mm256_slli_epi16(v, 8));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(ob + at), y);
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(ob + at + dup), y);
        };
        for (; ow + 32 <= g.OW; ow += 32) put(ow);
        if (ow < g.OW && g.OW >= 32) {
          put(g.OW - 32);
          ow = g.OW;
        }
#endif
      }
#endif
      if (ow < g.OW) {  // the scalar path: one row, then its copy
        for (int64_t w = ow; w < g.OW; ++w) o[w] = r[g.widx[w]];
        if (dup) std::memcpy(o + g.OW, o, g.OW * sizeof(T));
      }
      for (int64_t k = 2; k < reps; ++k) std::memcpy(o + k * g.OW, o, g.OW * sizeof(T));
      oh += reps;
    }
  }
}

}  // namespace

void upsample_nearest2d_nchw_u8(const uint8_t* in, uint8_t* out, int64_t planes, const Upsample2dGeom& g) {
  upsample_nchw(in, out, planes, g);
}
void upsample_nearest2d_nchw_s32(const int32_t* in, int32_t* out, int64_t planes, const Upsample2dGeom& g) {
  upsample_nchw(in, out, planes, g);
}

void upsample_nearest2d_nhwc(const uint8_t* in, uint8_t* out, int64_t row_bytes, int64_t oh_begin, int64_t oh_end,
                             const Upsample2dGeom& g) {
  // row_bytes: bytes of one pixel (C * element size).
  for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
    uint8_t* o = out + oh * g.OW * row_bytes;
    if (oh > oh_begin && g.hidx[oh] == g.hidx[oh - 1]) {
      std::memcpy(o, o - g.OW * row_bytes, g.OW * row_bytes);
      continue;
    }
    const uint8_t* r = in + g.hidx[oh] * g.W * row_bytes;
    // A pixel's channels with whole-register moves (a memcpy call a pixel cost more than the copy).
    for (int64_t ow = 0; ow < g.OW; ++ow) bytes::copy_short(o + ow * row_bytes, r + g.widx[ow] * row_bytes, row_bytes);
  }
}

namespace {

// v holds the output zero point: the requantize step with zp = 0 (kernels/gemm/requant.h).
template <typename T>
inline T bilinear_out(float v) {
  return static_cast<T>(clamp_round(v, static_cast<float>(QRange<T>::min), static_cast<float>(QRange<T>::max)));
}

// The vector loops below round without a float clamp: a bilinear value is a convex combination
// of two or four 8-bit inputs (weights in [0, 1]), so it is finite and |v| < 2^9; store4_q's
// saturating pack (bytes::clamp_sat for single vectors) then equals clamping the float to the
// integral bounds and rounding.
template <typename T>
void bilinear_nchw(const T* in, T* out, int64_t planes, const Bilinear2dGeom& g) {
  // Rows interpolated along W once into float buffers (reused while consecutive output rows
  // read the same source rows), then combined along H.
  std::vector<float> top(g.OW), bot(g.OW);
  for (int64_t p = 0; p < planes; ++p) {
    const T* ip = in + p * g.H * g.W;
    T* op = out + p * g.OH * g.OW;
    int64_t have_top = -1, have_bot = -1;
    auto fill = [&](std::vector<float>& buf, int64_t row) {
      const T* r = ip + row * g.W;
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        buf[ow] = g.wl0[ow] * static_cast<float>(r[g.x0[ow]]) + g.wl1[ow] * static_cast<float>(r[g.x1[ow]]);
      }
    };
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      if (g.y0[oh] != have_top) {
        if (g.y0[oh] == have_bot) {
          top.swap(bot);
          have_bot = -1;
        } else {
          fill(top, g.y0[oh]);
        }
        have_top = g.y0[oh];
      }
      if (g.y1[oh] != have_bot) {
        fill(bot, g.y1[oh]);
        have_bot = g.y1[oh];
      }
      T* orow = op + oh * g.OW;
      const float h0 = g.hl0[oh], h1 = g.hl1[oh];
      int64_t ow = 0;
#if QPLUGIN_SIMD
      using namespace simd;
      const VF vh0 = set1_f(h0), vh1 = set1_f(h1);
      auto one = [&](int64_t k) {
        return to_i32_round(add_f(mul_f(vh0, loadu_f(top.data() + k)), mul_f(vh1, loadu_f(bot.data() + k))));
      };
      for (; ow + 4 * kLanes <= g.OW; ow += 4 * kLanes) {
        store4_q(orow + ow, one(ow), one(ow + kLanes), one(ow + 2 * kLanes), one(ow + 3 * kLanes));
      }
      for (; ow + kLanes <= g.OW; ow += kLanes) store_q(orow + ow, bytes::clamp_sat<T>(one(ow)));
#endif
      for (; ow < g.OW; ++ow) orow[ow] = bilinear_out<T>(h0 * top[ow] + h1 * bot[ow]);
    }
  }
}

template <typename T>
void bilinear_nhwc(const T* in, T* out, int64_t C, int64_t oh_begin, int64_t oh_end, const Bilinear2dGeom& g) {
  for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
    const T* r0 = in + g.y0[oh] * g.W * C;
    const T* r1 = in + g.y1[oh] * g.W * C;
    const float h0 = g.hl0[oh], h1 = g.hl1[oh];
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const T* a = r0 + g.x0[ow] * C;
      const T* b = r0 + g.x1[ow] * C;
      const T* c = r1 + g.x0[ow] * C;
      const T* d = r1 + g.x1[ow] * C;
      const float w0 = g.wl0[ow], w1 = g.wl1[ow];
      T* o = out + (oh * g.OW + ow) * C;
      int64_t k = 0;
#if QPLUGIN_SIMD
      using namespace simd;
      const VF vh0 = set1_f(h0), vh1 = set1_f(h1), vw0 = set1_f(w0), vw1 = set1_f(w1);
      auto one = [&](int64_t j) {
        const VF t = add_f(mul_f(vw0, to_f(load_q(a + j))), mul_f(vw1, to_f(load_q(b + j))));
        const VF u = add_f(mul_f(vw0, to_f(load_q(c + j))), mul_f(vw1, to_f(load_q(d + j))));
        return to_i32_round(add_f(mul_f(vh0, t), mul_f(vh1, u)));
      };
      for (; k + 4 * kLanes <= C; k += 4 * kLanes)
        store4_q(o + k, one(k), one(k + kLanes), one(k + 2 * kLanes), one(k + 3 * kLanes));
      for (; k + kLanes <= C; k += kLanes) store_q(o + k, bytes::clamp_sat<T>(one(k)));
#endif
      for (; k < C; ++k) {
        const float t = w0 * static_cast<float>(a[k]) + w1 * static_cast<float>(b[k]);
        const float u = w0 * static_cast<float>(c[k]) + w1 * static_cast<float>(d[k]);
        o[k] = bilinear_out<T>(h0 * t + h1 * u);
      }
    }
  }
}

}  // namespace

void upsample_bilinear2d_nchw_u8(const uint8_t* in, uint8_t* out, int64_t planes, const Bilinear2dGeom& g) {
  bilinear_nchw(in, out, planes, g);
}
void upsample_bilinear2d_nchw_s8(const int8_t* in, int8_t* out, int64_t planes, const Bilinear2dGeom& g) {
  bilinear_nchw(in, out, planes, g);
}
void upsample_bilinear2d_nhwc_u8(const uint8_t* in, uint8_t* out, int64_t C, int64_t oh_begin, int64_t oh_end,
                                 const Bilinear2dGeom& g) {
  bilinear_nhwc(in, out, C, oh_begin, oh_end, g);
}
void upsample_bilinear2d_nhwc_s8(const int8_t* in, int8_t* out, int64_t C, int64_t oh_begin, int64_t oh_end,
                                 const Bilinear2dGeom& g) {
  bilinear_nhwc(in, out, C, oh_begin, oh_end, g);
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
