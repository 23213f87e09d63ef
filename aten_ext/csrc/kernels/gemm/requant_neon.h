// requant.h's requantize step on NEON (the aarch64 builds' GEMM epilogue and depthwise conv),
// four lanes at a time, lane by lane the scalar float steps.
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace a64 {

// requantize(v, zp, lo, hi): v < hi ? v : hi (NaN -> hi), then v > lo ? v : lo, round half to even
// (FCVTNS; the value is in range after the clamp), + zp.
struct U8Bounds {
  float32x4_t lo, hi;  // lo - zp, hi - zp
  int32x4_t zp;
};
inline U8Bounds u8_bounds(int32_t zp, int32_t lo, int32_t hi) {
  return {vdupq_n_f32(static_cast<float>(static_cast<int64_t>(lo) - zp)),
          vdupq_n_f32(static_cast<float>(static_cast<int64_t>(hi) - zp)), vdupq_n_s32(zp)};
}
inline int32x4_t requantize4(float32x4_t v, const U8Bounds& b) {
  v = vbslq_f32(vcltq_f32(v, b.hi), v, b.hi);
  v = vbslq_f32(vcgtq_f32(v, b.lo), v, b.lo);
  return vaddq_s32(vcvtnq_s32_f32(v), b.zp);
}

}  // namespace a64
}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
