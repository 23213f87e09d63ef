// Compiled once per ISA (kernels/isa.h): the fp16-weight linear of kernels/linear_fp16_kernel.h.
// The scalar loop is the definition; the vector paths compute MR rows x NV vectors of outputs
// per tile with the same per-output operations (one accumulator per output, k in order).
#include "kernels/linear_fp16_kernel.h"

#include <algorithm>
#include <cmath>

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

inline float finish(float acc, const float* bias, int64_t n, bool relu) {
  float y = bias != nullptr ? acc + bias[n] : acc;
  return (relu && y < 0.0f) ? 0.0f : y;
}

#if !QPLUGIN_SIMD
// One output column n of rows [m0, m1): the reference order.
void column_scalar(const float* x, int64_t ldx, int64_t m0, int64_t m1, int64_t K, const uint16_t* panel, int64_t j,
                   int64_t n, const float* bias, bool relu, float* y, int64_t ldy) {
  for (int64_t m = m0; m < m1; ++m) {
    const float* xr = x + m * ldx;
    float acc = 0.0f;
    for (int64_t k = 0; k < K; ++k) acc = std::fmaf(xr[k], simd::half_to_float(panel[k * kFp16Panel + j]), acc);
    y[m * ldy + n] = finish(acc, bias, n, relu);
  }
}
#endif

#if QPLUGIN_SIMD
using simd::VF;
constexpr int kL = simd::kLanes;
constexpr int kVecPerPanel = static_cast<int>(kFp16Panel) / kL;
// Tile: MR rows x NV vectors (NV * kL columns). Registers: MR * NV accumulators + NV weight vectors,
// x[m][k] broadcast from memory into the FMAs (AVX-512: 8 x 2 = 16 zmm; AVX2: 4 x 2 = 8 ymm + 4
// broadcasts). Each weight vector loaded feeds MR FMAs; a row block of up to MR rows reads the
// weights once (for M <= MR, the whole call streams them once).
constexpr int kMR = kL == 16 ? 8 : 4;
constexpr int kNV = 2;

// Rows [m, m + MR), vectors [v0, v0 + NV) of the panel block starting at panel pb (columns
// 16 pb + v kL ...). Columns past N are computed (zero weights) but not stored.
template <int MR, int NV>
void tile(const float* x, int64_t ldx, int64_t m, int64_t K, const uint16_t* packed, int64_t pb, int64_t N,
          const float* bias, bool relu, float* y, int64_t ldy) {
  VF acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = simd::set1_f(0.0f);
  const uint16_t* wp[NV];
  for (int v = 0; v < NV; ++v) {
    const int64_t p = pb + v / kVecPerPanel;
    wp[v] = packed + p * K * kFp16Panel + (v % kVecPerPanel) * kL;
  }
  const float* xr[MR];
  for (int r = 0; r < MR; ++r) xr[r] = x + (m + r) * ldx;
  for (int64_t k = 0; k < K; ++k) {
    VF xb[MR];
    for (int r = 0; r < MR; ++r) xb[r] = simd::set1_f(xr[r][k]);
    for (int v = 0; v < NV; ++v) {
      const VF w = simd::load_f16(wp[v] + k * kFp16Panel);
      for (int r = 0; r < MR; ++r) acc[r][v] = simd::fmadd_f(xb[r], w, acc[r][v]);
    }
  }
  const VF zero = simd::set1_f(0.0f);
  for (int v = 0; v < NV; ++v) {
    const int64_t n0 = pb * kFp16Panel + v * kL;
    const int64_t cols = std::min<int64_t>(kL, N - n0);
    if (cols <= 0) break;
    VF b = zero;
    if (bias != nullptr && cols == kL) b = simd::loadu_f(bias + n0);
    for (int r = 0; r < MR; ++r) {
      float* out = y + (m + r) * ldy + n0;
      if (cols == kL) {
        VF t = bias != nullptr ? simd::add_f(acc[r][v], b) : acc[r][v];
        // max(0, t) returns t where t is NaN and for -0 (the scalar (t < 0) ? 0 : t)
        if (relu) t = simd::max_f(zero, t);
        simd::storeu_f(out, t);
      } else {
        alignas(64) float tmp[kL];
        simd::storeu_f(tmp, acc[r][v]);
        for (int64_t j = 0; j < cols; ++j) out[j] = finish(tmp[j], bias, n0 + j, relu);
      }
    }
  }
}

// A tile of MR rows and nv (1..NVMAX) vectors.
template <int MR, int NVMAX>
void tile_nv(int nv, const float* x, int64_t ldx, int64_t m, int64_t K, const uint16_t* packed, int64_t pb, int64_t N,
             const float* bias, bool relu, float* y, int64_t ldy) {
  static_assert(NVMAX == 2 || NVMAX == 4, "tile_nv dispatches NV 1..2 or 1..4");
  switch (NVMAX == 2 ? std::min(nv, 2) : nv) {
    case 4: return tile < MR, NVMAX == 4 ? 4 : 1 > (x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    case 3: return tile < MR, NVMAX == 4 ? 3 : 1 > (x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    case 2: return tile<MR, 2>(x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    default: return tile<MR, 1>(x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
  }
}

// Rows left after the kMR blocks (< kMR): few rows get wide tiles (kNVWide vectors: more
// independent FMA chains, e.g. batch 1), more rows the kNV tiles.
constexpr int kNVWide = 4;
constexpr int kWideRows = kMR / 2;
// (a row count the switch below never reaches for this kMR maps to 1: it must still compile)
constexpr int rest_rows(int r) { return r < kMR ? r : 1; }

void tile_rest(int rows, int nv, const float* x, int64_t ldx, int64_t m, int64_t K, const uint16_t* packed, int64_t pb,
               int64_t N, const float* bias, bool relu, float* y, int64_t ldy) {
  static_assert(kMR <= 8 && kWideRows >= 2, "tile_rest dispatches 1..7 rows");
  switch (rows) {
    case 7: return tile_nv<rest_rows(7), kNV>(nv, x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    case 6: return tile_nv<rest_rows(6), kNV>(nv, x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    case 5: return tile_nv<rest_rows(5), kNV>(nv, x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    case 4:
      return tile_nv < rest_rows(4),
             kWideRows >= 4 ? kNVWide : kNV > (nv, x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    case 3: return tile_nv < 3, kWideRows >= 3 ? kNVWide : kNV > (nv, x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    case 2: return tile_nv<2, kNVWide>(nv, x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    default: return tile_nv<1, kNVWide>(nv, x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
  }
}

// Vectors (of kL columns) that hold at least one column < N, in panels [pb, pb + panels).
int vectors(int64_t pb, int64_t panels, int64_t N) {
  const int64_t cols = std::min<int64_t>(panels * kFp16Panel, N - pb * kFp16Panel);
  return static_cast<int>((cols + kL - 1) / kL);
}
#endif

}  // namespace

void linear_fp16_f32(const float* x, int64_t ldx, int64_t M, int64_t K, const uint16_t* packed, int64_t N, int64_t p0,
                     int64_t p1, const float* bias, bool relu, float* y, int64_t ldy) {
#if QPLUGIN_SIMD
  const int64_t full = M / kMR * kMR;
  constexpr int64_t kStep = kNV / kVecPerPanel;  // panels per kNV tile
  if (full > 0) {
    for (int64_t pb = p0; pb < p1; pb += kStep) {
      const int nv = vectors(pb, std::min<int64_t>(kStep, p1 - pb), N);
      for (int64_t m = 0; m < full; m += kMR) tile_nv<kMR, kNV>(nv, x, ldx, m, K, packed, pb, N, bias, relu, y, ldy);
    }
  }
  const int rest = static_cast<int>(M - full);
  if (rest > 0) {
    const int64_t step = (rest <= kWideRows ? kNVWide : kNV) / kVecPerPanel;
    for (int64_t pb = p0; pb < p1; pb += step) {
      tile_rest(rest, vectors(pb, std::min<int64_t>(step, p1 - pb), N), x, ldx, full, K, packed, pb, N, bias, relu, y,
                ldy);
    }
  }
#else
  for (int64_t p = p0; p < p1; ++p) {
    const uint16_t* panel = packed + p * K * kFp16Panel;
    const int64_t n_end = std::min<int64_t>(N, (p + 1) * kFp16Panel);
    for (int64_t n = p * kFp16Panel; n < n_end; ++n)
      column_scalar(x, ldx, 0, M, K, panel, n - p * kFp16Panel, n, bias, relu, y, ldy);
  }
#endif
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
