// Compiled once per ISA (see kernels/isa.h). The scalar loops are the reference
// and the tails of the vector loops.
#include "kernels/activation_kernel.h"

#include "kernels/bytes_simd.h"
#include "kernels/quantize_math.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

using namespace bytes;  // VB, ldb / stb / vmax / vmin / vset

template <typename T>
void clamp_impl(const T* x, T* y, int64_t n, int32_t lo, int32_t hi) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  constexpr int64_t kPer = kVecBytes / sizeof(T);
  const T tag{};
  const VB vlo = vset(lo, tag);
  const VB vhi = vset(hi, tag);
  if (hi >= QRange<T>::max) {
    // relu and min-only clamps: one max per vector.
    for (; i + 4 * kPer <= n; i += 4 * kPer) {
      const VB a = ldb(x + i), b = ldb(x + i + kPer), c = ldb(x + i + 2 * kPer), d = ldb(x + i + 3 * kPer);
      stb(y + i, vmax(a, vlo, tag));
      stb(y + i + kPer, vmax(b, vlo, tag));
      stb(y + i + 2 * kPer, vmax(c, vlo, tag));
      stb(y + i + 3 * kPer, vmax(d, vlo, tag));
    }
  }
  for (; i + 4 * kPer <= n; i += 4 * kPer) {
    const VB a = ldb(x + i), b = ldb(x + i + kPer), c = ldb(x + i + 2 * kPer), d = ldb(x + i + 3 * kPer);
    stb(y + i, vmin(vmax(a, vlo, tag), vhi, tag));
    stb(y + i + kPer, vmin(vmax(b, vlo, tag), vhi, tag));
    stb(y + i + 2 * kPer, vmin(vmax(c, vlo, tag), vhi, tag));
    stb(y + i + 3 * kPer, vmin(vmax(d, vlo, tag), vhi, tag));
  }
  for (; i + kPer <= n; i += kPer) stb(y + i, vmin(vmax(ldb(x + i), vlo, tag), vhi, tag));
#endif
  for (; i < n; ++i) {
    const int32_t m = x[i] < lo ? lo : x[i];  // max, then min (as torch: lo > hi gives hi)
    y[i] = static_cast<T>(m > hi ? hi : m);
  }
}

}  // namespace

void clamp_u8(const uint8_t* x, uint8_t* y, int64_t n, int32_t lo, int32_t hi) { clamp_impl(x, y, n, lo, hi); }
void clamp_s8(const int8_t* x, int8_t* y, int64_t n, int32_t lo, int32_t hi) { clamp_impl(x, y, n, lo, hi); }
void clamp_s32(const int32_t* x, int32_t* y, int64_t n, int32_t lo, int32_t hi) { clamp_impl(x, y, n, lo, hi); }

void lut_apply8(const uint8_t* x, uint8_t* y, int64_t n, const uint8_t* table, bool use_vbmi) {
  bytes::lut_rows(x, n, y, n, 1, n, table, use_vbmi);
}

void build_act_table8(const ActSpec* spec, bool is_signed, uint8_t* table) {
  const ActSpec s = *spec;
  for (int v = 0; v < 256; ++v) {
    table[v] = is_signed ? static_cast<uint8_t>(act_apply<int8_t>(s, static_cast<int8_t>(v)))
                         : act_apply<uint8_t>(s, static_cast<uint8_t>(v));
  }
}

void act_map_u8(const uint8_t* x, uint8_t* y, int64_t n, const ActSpec* spec) {
  const ActSpec s = *spec;
  for (int64_t i = 0; i < n; ++i) y[i] = act_apply<uint8_t>(s, x[i]);
}

void act_map_s8(const int8_t* x, int8_t* y, int64_t n, const ActSpec* spec) {
  const ActSpec s = *spec;
  for (int64_t i = 0; i < n; ++i) y[i] = act_apply<int8_t>(s, x[i]);
}

void act_map_s32(const int32_t* x, int32_t* y, int64_t n, const ActSpec* spec) {
  const ActSpec s = *spec;
  for (int64_t i = 0; i < n; ++i) y[i] = act_apply<int32_t>(s, x[i]);
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
