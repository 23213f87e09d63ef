// Compiled once per ISA (kernels/isa.h). The scalar loops are the reference and
// the tails of the vector loops; each vector lane repeats the scalar steps.
#include "kernels/add_kernel.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/bytes_simd.h"
#include "kernels/gemm/requant.h"
#include "kernels/quantize_math.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

template <bool kMul>
inline int32_t binary8_one(int32_t ka, int32_t kb, const BinaryParams& p) {
  float v;
  if constexpr (kMul) {
    v = static_cast<float>(ka * kb) * p.fa + static_cast<float>(p.zo);
  } else {
    v = static_cast<float>(ka) * p.fa + static_cast<float>(kb) * p.fb + static_cast<float>(p.zo);
  }
  return requantize<float>(v, 0, p.lo, p.hi);  // v holds the output zero point already
}

#if QPLUGIN_SIMD
// The vector loops of binary8, one instantiation per operand shape (kAVec / kBVec: dense, else
// broadcast from element 0) and relu, so each loop is straight-line code. Returns the elements done.
template <typename T, bool kMul, bool kAVec, bool kBVec, bool kRelu>
int64_t binary8_vec(const T* a, const T* b, T* y, int64_t n, const BinaryParams& p, bool int_clamp) {
  using namespace simd;
  const VI za = set1_i(p.za), zb = set1_i(p.zb);
  const VF fa = set1_f(p.fa), fb = set1_f(p.fb), zo = set1_f(static_cast<float>(p.zo));
  const VF lo = set1_f(static_cast<float>(p.lo)), hi = set1_f(static_cast<float>(p.hi));
  // The broadcast operand's a - za: exact in float32 (|.| < 2^24).
  const VF a_bc = set1_f(static_cast<float>(static_cast<int32_t>(a[0]) - p.za));
  const VF b_bc = set1_f(static_cast<float>(static_cast<int32_t>(b[0]) - p.zb));
  auto value = [&](int64_t j) {
    VF va = a_bc, vb = b_bc;
    if constexpr (kAVec) va = to_f(sub_i(load_q(a + j), za));
    if constexpr (kBVec) vb = to_f(sub_i(load_q(b + j), zb));
    if constexpr (kMul) {
      return add_f(mul_f(mul_f(va, vb), fa), zo);  // va * vb is exact (|.| <= 2^16)
    } else {
      return add_f(add_f(mul_f(va, fa), mul_f(vb, fb)), zo);
    }
  };
  auto one = [&](int64_t j) {
    return requant::clamp_round(value(j), lo, hi);
  };
  int64_t i = 0;
  if (int_clamp) {
    // Round first, clamp as integers: the 8-bit pack saturates to T's range, a byte max applies
    // relu's lo (see binary8 for when this equals clamping the float and rounding).
    const bytes::VB vlo = bytes::vset(p.lo, T());
    for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
      bytes::VB q = pack4_(to_i32_round(value(i)), to_i32_round(value(i + kLanes)), to_i32_round(value(i + 2 * kLanes)),
                           to_i32_round(value(i + 3 * kLanes)), std::is_signed_v<T>);
      if constexpr (kRelu) q = bytes::vmax(q, vlo, T());
      bytes::stb(y + i, q);
    }
  }
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    store4_q(y + i, one(i), one(i + kLanes), one(i + 2 * kLanes), one(i + 3 * kLanes));
  }
  for (; i + kLanes <= n; i += kLanes) store_q(y + i, one(i));
  return i;
}

template <typename T, bool kMul, bool kRelu>
int64_t binary8_vec_shape(const Strided& s, int64_t n, const BinaryParams& p, bool int_clamp) {
  const T* a = static_cast<const T*>(s.a);
  const T* b = static_cast<const T*>(s.b);
  T* y = static_cast<T*>(s.y);
  if (s.as == 1 && s.bs == 1) return binary8_vec<T, kMul, true, true, kRelu>(a, b, y, n, p, int_clamp);
  if (s.as == 1) return binary8_vec<T, kMul, true, false, kRelu>(a, b, y, n, p, int_clamp);
  return binary8_vec<T, kMul, false, true, kRelu>(a, b, y, n, p, int_clamp);
}
#endif

template <typename T, bool kMul>
void binary8(const Strided& s, int64_t n, const BinaryParams& p) {
  const T* a = static_cast<const T*>(s.a);
  const T* b = static_cast<const T*>(s.b);
  T* y = static_cast<T*>(s.y);
  int64_t i = 0;
#if QPLUGIN_SIMD
  const bool a_ok = s.as == 1 || s.as == 0;
  const bool b_ok = s.bs == 1 || s.bs == 0;
  if (s.ys == 1 && a_ok && b_ok && (s.as | s.bs) != 0) {
    // While |v| stays inside int32 (checked once from the bounds of |a - za|, |b - zb| and the
    // multipliers: false for inf / NaN), the vector loops round first and clamp as integers --
    // the same integers as clamping the float to the integral bounds and rounding, two float
    // ops fewer per vector.
    const double ka_max = 255.0 + std::fabs(static_cast<double>(p.za));
    const double kb_max = 255.0 + std::fabs(static_cast<double>(p.zb));
    const double bound =
        (kMul ? ka_max * kb_max * std::fabs(static_cast<double>(p.fa))
              : ka_max * std::fabs(static_cast<double>(p.fa)) + kb_max * std::fabs(static_cast<double>(p.fb))) +
        std::fabs(static_cast<double>(p.zo));
    const bool int_clamp = bound < 1e9 && p.hi == QRange<T>::max && p.lo >= QRange<T>::min;
    i = p.lo > QRange<T>::min ? binary8_vec_shape<T, kMul, true>(s, n, p, int_clamp)
                              : binary8_vec_shape<T, kMul, false>(s, n, p, int_clamp);
  }
#endif
  for (; i < n; ++i) {
    const int32_t ka = static_cast<int32_t>(a[i * s.as]) - p.za;
    const int32_t kb = static_cast<int32_t>(b[i * s.bs]) - p.zb;
    y[i * s.ys] = static_cast<T>(binary8_one<kMul>(ka, kb, p));
  }
}

template <bool kMul>
void binary32(const Strided& s, int64_t n, const BinaryParams& p) {
  const int32_t* a = static_cast<const int32_t*>(s.a);
  const int32_t* b = static_cast<const int32_t*>(s.b);
  int32_t* y = static_cast<int32_t*>(s.y);
  for (int64_t i = 0; i < n; ++i) {
    const double ka = static_cast<double>(static_cast<int64_t>(a[i * s.as]) - p.za);
    const double kb = static_cast<double>(static_cast<int64_t>(b[i * s.bs]) - p.zb);
    const double v = kMul ? ka * kb * p.da + p.zo : ka * p.da + kb * p.db + p.zo;
    y[i * s.ys] = requantize<double>(v, 0, p.lo, p.hi);
  }
}

template <typename T>
void add_scalar_requant(const T* x, T* y, int64_t n, int32_t zi, int64_t c, float m, int32_t zo, int32_t lo,
                        int32_t hi) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  if constexpr (sizeof(T) == 1) {
    using namespace simd;
    const VI vz = set1_i(zi), vc = set1_i(static_cast<int32_t>(c)), vzo = set1_i(zo), vlo = set1_i(lo),
             vhi = set1_i(hi);
    const VF vm = set1_f(m);
    auto one = [&](int64_t j) {
      const VI k = add_i(sub_i(load_q(x + j), vz), vc);
      return max_i(min_i(add_i(to_i32_round(mul_f(to_f(k), vm)), vzo), vhi), vlo);
    };
    if (c > -(1 << 30) && c < (1 << 30)) {
      for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
        store4_q(y + i, one(i), one(i + kLanes), one(i + 2 * kLanes), one(i + 3 * kLanes));
      }
      for (; i + kLanes <= n; i += kLanes) store_q(y + i, one(i));
    }
  }
#endif
  for (; i < n; ++i) {
    const int64_t k = static_cast<int64_t>(x[i]) - zi + c;
    int64_t q = zo + static_cast<int64_t>(std::lrintf(static_cast<float>(k) * m));
    q = std::min<int64_t>(std::max<int64_t>(q, lo), hi);
    y[i] = static_cast<T>(q);
  }
}

template <typename T>
void flip_clamp(const T* x, T* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  if constexpr (sizeof(T) == 1) {
    using namespace simd;
    const VI vk = set1_i(k), vlo = set1_i(lo), vhi = set1_i(hi);
    auto one = [&](int64_t j) {
      VI v = load_q(x + j);
      if (flip) v = sub_i(vk, v);
      return max_i(min_i(v, vhi), vlo);
    };
    for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
      store4_q(y + i, one(i), one(i + kLanes), one(i + 2 * kLanes), one(i + 3 * kLanes));
    }
    for (; i + kLanes <= n; i += kLanes) store_q(y + i, one(i));
  }
#endif
  for (; i < n; ++i) {
    int32_t v = flip ? k - static_cast<int32_t>(x[i]) : static_cast<int32_t>(x[i]);
    v = std::min(std::max(v, lo), hi);
    y[i] = static_cast<T>(v);
  }
}

}  // namespace

void add_u8(const Strided& s, int64_t n, const BinaryParams& p) { binary8<uint8_t, false>(s, n, p); }
void add_s8(const Strided& s, int64_t n, const BinaryParams& p) { binary8<int8_t, false>(s, n, p); }
void add_s32(const Strided& s, int64_t n, const BinaryParams& p) { binary32<false>(s, n, p); }
void mul_u8(const Strided& s, int64_t n, const BinaryParams& p) { binary8<uint8_t, true>(s, n, p); }
void mul_s8(const Strided& s, int64_t n, const BinaryParams& p) { binary8<int8_t, true>(s, n, p); }
void mul_s32(const Strided& s, int64_t n, const BinaryParams& p) { binary32<true>(s, n, p); }

void add_scalar_requant_u8(const uint8_t* x, uint8_t* y, int64_t n, int32_t zi, int64_t c, float m, int32_t zo,
                           int32_t lo, int32_t hi) {
  add_scalar_requant(x, y, n, zi, c, m, zo, lo, hi);
}
void add_scalar_requant_s8(const int8_t* x, int8_t* y, int64_t n, int32_t zi, int64_t c, float m, int32_t zo,
                           int32_t lo, int32_t hi) {
  add_scalar_requant(x, y, n, zi, c, m, zo, lo, hi);
}
void add_scalar_requant_s32(const int32_t* x, int32_t* y, int64_t n, int32_t zi, int64_t c, double m, int32_t zo,
                            int32_t lo, int32_t hi) {
  // float64: q - zi + c (|.| < 2^34) times m is within 2^-52 relative, no float32 rounding of k
  for (int64_t i = 0; i < n; ++i) {
    const double k = static_cast<double>(static_cast<int64_t>(x[i]) - zi + c);
    const double v = static_cast<double>(zo) + std::nearbyint(k * m);
    y[i] = static_cast<int32_t>(std::min<double>(std::max<double>(v, lo), hi));
  }
}
void flip_clamp_u8(const uint8_t* x, uint8_t* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi) {
  flip_clamp(x, y, n, flip, k, lo, hi);
}
void flip_clamp_s8(const int8_t* x, int8_t* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi) {
  flip_clamp(x, y, n, flip, k, lo, hi);
}
void flip_clamp_s32(const int32_t* x, int32_t* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi) {
  flip_clamp(x, y, n, flip, k, lo, hi);
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
