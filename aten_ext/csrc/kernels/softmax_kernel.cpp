// Compiled once per ISA (see kernels/isa.h). Plain loops in float64 (the
// compiler vectorizes the inner ones per ISA); every path gives the same bits.
#include "kernels/softmax_kernel.h"

#include <cmath>
#include <vector>

#include "kernels/quantize_math.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

template <typename T>
inline double exp_of(const SoftmaxSpec& s, int64_t k) {
  if constexpr (sizeof(T) == 1) {
    return s.exp_table[k];
  } else {
    return std::exp(-static_cast<double>(k) * s.in_scale);
  }
}

// The requantize step in float64 (kernels/gemm/requant.h); v is finite and >= 0 here.
template <typename T>
inline T out_of(double v, int32_t zp) {
  return static_cast<T>(requantize<double>(v, zp, QRange<T>::min, QRange<T>::max));
}

// One softmax row of `dim` elements `stride` apart (kUnit: stride == 1, known
// to the compiler so the max loop vectorizes).
template <typename T, bool kUnit>
void softmax_row(const T* xo, T* yo, int64_t dim, int64_t stride_arg, const SoftmaxSpec& s) {
  const int64_t stride = kUnit ? 1 : stride_arg;
  int64_t mx = xo[0];
  for (int64_t d = 1; d < dim; ++d) mx = xo[d * stride] > mx ? xo[d * stride] : mx;
  // Four partial sums (one fixed order on every path): the adds are not one long chain.
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t d = 0;
  for (; d + 4 <= dim; d += 4) {
    s0 += exp_of<T>(s, mx - xo[d * stride]);
    s1 += exp_of<T>(s, mx - xo[(d + 1) * stride]);
    s2 += exp_of<T>(s, mx - xo[(d + 2) * stride]);
    s3 += exp_of<T>(s, mx - xo[(d + 3) * stride]);
  }
  for (; d < dim; ++d) s0 += exp_of<T>(s, mx - xo[d * stride]);
  const double sum = (s0 + s1) + (s2 + s3);
  const double f = 1.0 / (sum * s.out_scale);
  if constexpr (sizeof(T) == 1) {
    if (dim >= 256) {
      // Long rows: the output of each of the 256 distances once, then byte lookups
      // (the same values as the per-element formula below).
      T out[256];
      for (int k = 0; k < 256; ++k) out[k] = out_of<T>(exp_of<T>(s, k) * f, s.out_zp);
      for (int64_t i = 0; i < dim; ++i) yo[i * stride] = out[mx - xo[i * stride]];
      return;
    }
  }
  for (int64_t i = 0; i < dim; ++i) yo[i * stride] = out_of<T>(exp_of<T>(s, mx - xo[i * stride]) * f, s.out_zp);
}

template <typename T>
void softmax_impl(const T* x, T* y, int64_t outer, int64_t dim, int64_t count, int64_t stride,
                  const SoftmaxSpec* spec) {
  const SoftmaxSpec s = *spec;
  if (dim == 0 || count == 0) return;
  if (count == 1) {
    for (int64_t o = 0; o < outer; ++o) {
      if (stride == 1) {
        softmax_row<T, true>(x + o * dim, y + o * dim, dim, 1, s);
      } else {
        softmax_row<T, false>(x + o * dim * stride, y + o * dim * stride, dim, stride, s);
      }
    }
    return;
  }
  std::vector<int64_t> mx(count);
  std::vector<double> sum(count);
  for (int64_t o = 0; o < outer; ++o) {
    const T* xo = x + o * dim * stride;
    T* yo = y + o * dim * stride;
    for (int64_t i = 0; i < count; ++i) mx[i] = xo[i];
    for (int64_t d = 1; d < dim; ++d) {
      const T* r = xo + d * stride;
      for (int64_t i = 0; i < count; ++i) mx[i] = r[i] > mx[i] ? r[i] : mx[i];
    }
    for (int64_t i = 0; i < count; ++i) sum[i] = 0;
    for (int64_t d = 0; d < dim; ++d) {
      const T* r = xo + d * stride;
      for (int64_t i = 0; i < count; ++i) sum[i] += exp_of<T>(s, mx[i] - r[i]);
    }
    for (int64_t i = 0; i < count; ++i) sum[i] = 1.0 / (sum[i] * s.out_scale);
    for (int64_t d = 0; d < dim; ++d) {
      const T* r = xo + d * stride;
      T* w = yo + d * stride;
      for (int64_t i = 0; i < count; ++i) w[i] = out_of<T>(exp_of<T>(s, mx[i] - r[i]) * sum[i], s.out_zp);
    }
  }
}

}  // namespace

void softmax_u8(const uint8_t* x, uint8_t* y, int64_t outer, int64_t dim, int64_t count, int64_t stride,
                const SoftmaxSpec* spec) {
  softmax_impl(x, y, outer, dim, count, stride, spec);
}
void softmax_s8(const int8_t* x, int8_t* y, int64_t outer, int64_t dim, int64_t count, int64_t stride,
                const SoftmaxSpec* spec) {
  softmax_impl(x, y, outer, dim, count, stride, spec);
}
void softmax_s32(const int32_t* x, int32_t* y, int64_t outer, int64_t dim, int64_t count, int64_t stride,
                 const SoftmaxSpec* spec) {
  softmax_impl(x, y, outer, dim, count, stride, spec);
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
