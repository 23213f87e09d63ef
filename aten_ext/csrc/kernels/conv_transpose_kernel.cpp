// Compiled once per ISA (kernels/isa.h): the col2im scatter-add and the row requantize of the
// transposed convolution. Scalar loops are the reference and the tails of the vector loops.
#include "kernels/conv_transpose_kernel.h"

#include "kernels/gemm/requant.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

// dst[j] += src[j], j < n (int32 wrap-around, as the scalar loop: unsigned adds)
inline void add_s32(int32_t* dst, const int32_t* src, int64_t n) {
  int64_t j = 0;
#if QPLUGIN_SIMD
  for (; j + simd::kLanes <= n; j += simd::kLanes) {
    simd::storeu_i(dst + j, simd::add_i(simd::loadu_i(dst + j), simd::loadu_i(src + j)));
  }
#endif
  for (; j < n; ++j) {
    dst[j] = static_cast<int32_t>(static_cast<uint32_t>(dst[j]) + static_cast<uint32_t>(src[j]));
  }
}

}  // namespace

void col2im_add_row_s32(const int32_t* c, const Col2ImRow& r, int32_t* acc) {
  for (int64_t i = 0; i < r.m; ++i) {
    const int64_t base = (r.iw0 + i) * r.sw - r.pw;
    for (int64_t kw = 0; kw < r.kw; ++kw) {
      const int64_t ow = base + kw * r.dw;
      if (ow < r.ow0 || ow >= r.ow1) continue;
      add_s32(acc + (ow - r.ow0) * r.ld_acc, c + i * r.ldc + kw * r.ocg, r.ocg);
    }
  }
}

void requant_rows_s32(const int32_t* acc, int64_t pixels, int64_t oc, const float* mult, const float* bias,
                      int32_t y_zp, int32_t qmin, int32_t qmax, uint8_t* y) {
#if QPLUGIN_SIMD
  const requant::Bounds rb = requant::make_bounds(y_zp, qmin, qmax);
#endif
  for (int64_t p = 0; p < pixels; ++p) {
    const int32_t* a = acc + p * oc;
    uint8_t* o = y + p * oc;
    int64_t j = 0;
#if QPLUGIN_SIMD
    for (; j + simd::kLanes <= oc; j += simd::kLanes) {
      const simd::VF v =
          simd::add_f(simd::mul_f(simd::to_f(simd::loadu_i(a + j)), simd::loadu_f(mult + j)), simd::loadu_f(bias + j));
      simd::store_u8(o + j, requant::requantize(v, rb));
    }
#endif
    for (; j < oc; ++j) {
      const float v = static_cast<float>(a[j]) * mult[j] + bias[j];
      o[j] = static_cast<uint8_t>(requantize<float>(v, y_zp, qmin, qmax));
    }
  }
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
