// Raw-pointer layer_norm / batch_norm kernels on plain integer data. No ATen.
// Threading is the caller's (cpu/norm.cpp).
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// layer_norm over rows of m elements. Per row, from exact integer sums (8-bit)
// or two float64 passes (int32): mean_q, var_q of q; rstd = 1 / sqrt(var_q * s^2 + eps);
//   y[j] = clamp(round_half_even((q[j] - mean_q) * (s * rstd) * wq[j] + bq[j] + out_zp))
// where wq = weight / out_scale and bq = bias / out_scale (the caller's). The
// per-element steps run in float32 for 8-bit data (each product and sum rounded
// to float, no FMA: every path gives the same bits) and in float64 for int32.
struct LayerNormSpec {
  double in_scale;
  double eps;
  const double* wq;  // m entries (int32 path)
  const double* bq;
  const float* wqf;  // m entries (8-bit path)
  const float* bqf;
  int32_t out_zp;
  double wq_max;  // max |wq| and |bq|, NaN if any is NaN: an 8-bit row whose multiplier
                  // s * rstd * wq_max or bias exceeds kNormFloatBound, or is NaN, runs in float64
                  // (float32 overflowed to inf, 0 * inf = NaN; the float32 vector steps assume
                  // finite values)
};

// Above this many output steps per input step (or bias steps) the 8-bit float32 norm steps lose
// exactness or overflow: the row runs in float64 instead.
constexpr double kNormFloatBound = 4096.0;

// group_norm over rows of groups: row r (the (n, g) pair r = n * groups + g)
// holds cpg channels of `inner` elements each. Per row the statistics of
// layer_norm; channel c = g * cpg + k then gets one affine map of the integers,
//   y = clamp(round_half_even(q * A_c + B_c)), A_c = s * rstd * wq[c],
//   B_c = bq[c] - mean_q * A_c + out_zp
// (A, B in float64, applied as channel_affine: float32 for 8-bit data, float64
// for int32). instance_norm: groups = C, cpg = 1.
struct GroupNormSpec {
  LayerNormSpec norm;  // wq / bq / wqf / bqf: C entries
  int64_t groups;
  int64_t cpg;
  int64_t inner;
};

// clang-format off
#define QPLUGIN_NORM_KERNELS(X)                                                                          \
  X(void, layer_norm_u8, (const uint8_t* x, uint8_t* y, int64_t rows, int64_t m, const LayerNormSpec* spec)) \
  X(void, layer_norm_s8, (const int8_t* x, int8_t* y, int64_t rows, int64_t m, const LayerNormSpec* spec))   \
  X(void, layer_norm_s32, (const int32_t* x, int32_t* y, int64_t rows, int64_t m, const LayerNormSpec* spec)) \
  /* rows row0 .. row0 + rows - 1; x / y point at row row0 */                                          \
  X(void, group_norm_u8, (const uint8_t* x, uint8_t* y, int64_t row0, int64_t rows, const GroupNormSpec* spec)) \
  X(void, group_norm_s8, (const int8_t* x, int8_t* y, int64_t row0, int64_t rows, const GroupNormSpec* spec))   \
  X(void, group_norm_s32, (const int32_t* x, int32_t* y, int64_t row0, int64_t rows, const GroupNormSpec* spec)) \
  /* Per-channel affine requantize (batch_norm): element (o, c, i) at (o * channels + c) * inner + i, \
     y = clamp(round_half_even(float(q) * a[c] + b[c]), max(qmin, lo), qmax) in float32 (out_zp folded \
     into b; lo = out_zp gives the fused relu, lo = INT32_MIN none) */                                 \
  X(void, channel_affine_u8, (const uint8_t* x, uint8_t* y, int64_t outer, int64_t channels, int64_t inner, const float* a, const float* b, int32_t lo)) \
  X(void, channel_affine_s8, (const int8_t* x, int8_t* y, int64_t outer, int64_t channels, int64_t inner, const float* a, const float* b, int32_t lo))   \
  /* prelu with per-channel slopes: d = float(q) - zp, y = clamp(round_half_even(max(d, 0) * ap +     \
     min(d, 0) * an[c] + out_zp)) in float32 in that order (channel layout as channel_affine) */       \
  X(void, channel_prelu_u8, (const uint8_t* x, uint8_t* y, int64_t outer, int64_t channels, int64_t inner, int32_t zp, float ap, const float* an, int32_t out_zp)) \
  X(void, channel_prelu_s8, (const int8_t* x, int8_t* y, int64_t outer, int64_t channels, int64_t inner, int32_t zp, float ap, const float* an, int32_t out_zp))   \
  /* int32: the same in float64 */                                                                     \
  X(void, channel_affine_s32, (const int32_t* x, int32_t* y, int64_t outer, int64_t channels, int64_t inner, const double* a, const double* b, int32_t lo))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_NORM_KERNELS)

}  // namespace kernels
}  // namespace qplugin
