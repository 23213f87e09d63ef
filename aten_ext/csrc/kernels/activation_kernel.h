// Raw-pointer activation kernels on plain integer data. No ATen.
// Numerics: kernels/activation_math.h. Threading is the caller's (cpu/activation.cpp).
#pragma once

#include <cstdint>

#include "kernels/activation_math.h"
#include "kernels/isa.h"

namespace qplugin {
namespace kernels {

// clang-format off
#define QPLUGIN_ACTIVATION_KERNELS(X)                                                         \
  /* y[i] = min(max(x[i], lo), hi): relu / relu6 / clamp (exact, qparams kept) */             \
  X(void, clamp_u8, (const uint8_t* x, uint8_t* y, int64_t n, int32_t lo, int32_t hi))        \
  X(void, clamp_s8, (const int8_t* x, int8_t* y, int64_t n, int32_t lo, int32_t hi))          \
  X(void, clamp_s32, (const int32_t* x, int32_t* y, int64_t n, int32_t lo, int32_t hi))       \
  /* y[i] = table[uint8(x[i])]: 8-bit activations (either signedness, bytes in, bytes out).   \
     use_vbmi: the AVX-512 path may use VPERMI2B (the caller checked the CPU has VBMI). */      \
  X(void, lut_apply8, (const uint8_t* x, uint8_t* y, int64_t n, const uint8_t* table, bool use_vbmi)) \
  /* table[b] = act_apply(spec, b) for each byte b (read as int8 when is_signed) */           \
  X(void, build_act_table8, (const ActSpec* spec, bool is_signed, uint8_t* table))             \
  /* y[i] = act_apply(spec, x[i]) (qint32: no table; 8-bit: inputs too short for a table) */  \
  X(void, act_map_u8, (const uint8_t* x, uint8_t* y, int64_t n, const ActSpec* spec))        \
  X(void, act_map_s8, (const int8_t* x, int8_t* y, int64_t n, const ActSpec* spec))          \
  X(void, act_map_s32, (const int32_t* x, int32_t* y, int64_t n, const ActSpec* spec))
// clang-format on

QPLUGIN_DECLARE_ISA_KERNELS(QPLUGIN_ACTIVATION_KERNELS)

}  // namespace kernels
}  // namespace qplugin
