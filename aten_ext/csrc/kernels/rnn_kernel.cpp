// Compiled once per ISA (kernels/isa.h): the fused recurrent-cell pointwise steps of
// kernels/rnn_kernel.h. The scalar functions are the definition and the tails of the
// vector loops; the vector ones apply the same float operations lane by lane.
#include "kernels/rnn_kernel.h"

#include <cmath>
#include <cstring>

#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

// exp: x clamped to [-87, 88] (NaN passes), n = round_half_even(x * log2(e)),
// r = x - n * ln2 (two-constant Cody-Waite), exp(r) by Cephes' degree-6 polynomial,
// times 2^n built in the exponent bits (n + 127 is in [1, 254]).
constexpr float kExpHi = 88.0f;
constexpr float kExpLo = -87.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f;
constexpr float kP1 = 1.3981999507e-3f;
constexpr float kP2 = 8.3334519073e-3f;
constexpr float kP3 = 4.1665795894e-2f;
constexpr float kP4 = 1.6666665459e-1f;
constexpr float kP5 = 5.0000001201e-1f;

inline float exp_s(float x) {
  if (std::isnan(x)) return x;
  x = kExpHi < x ? kExpHi : x;
  x = kExpLo > x ? kExpLo : x;
  const float n = std::nearbyint(x * kLog2e);
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = kP0;
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  const float y = p * r * r + r + 1.0f;
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return y * scale;
}
inline float sigmoid_s(float x) { return 1.0f / (1.0f + exp_s(0.0f - x)); }
inline float tanh_s(float x) { return 1.0f - 2.0f / (1.0f + exp_s(x + x)); }

inline void lstm_one(float si, float sf, float sg, float so, float* c, float* h, float* out) {
  const float cn = sigmoid_s(sf) * *c + sigmoid_s(si) * tanh_s(sg);
  const float hn = sigmoid_s(so) * tanh_s(cn);
  *c = cn;
  *h = hn;
  *out = hn;
}

inline void gru_one(float ir, float iz, float in, float hr, float hz, float hn, float* h, float* out) {
  const float r = sigmoid_s(ir + hr);
  const float z = sigmoid_s(iz + hz);
  const float n = tanh_s(in + r * hn);
  const float v = (1.0f - z) * n + z * *h;
  *h = v;
  *out = v;
}

#if QPLUGIN_SIMD
using namespace simd;

inline VF exp_v(VF x) {
  x = min_f(set1_f(kExpHi), x);  // NaN in x stays NaN (MINPS returns the second operand)
  x = max_f(set1_f(kExpLo), x);
  const VF n = round_f(mul_f(x, set1_f(kLog2e)));
  VF r = sub_f(x, mul_f(n, set1_f(kLn2Hi)));
  r = sub_f(r, mul_f(n, set1_f(kLn2Lo)));
  VF p = set1_f(kP0);
  p = add_f(mul_f(p, r), set1_f(kP1));
  p = add_f(mul_f(p, r), set1_f(kP2));
  p = add_f(mul_f(p, r), set1_f(kP3));
  p = add_f(mul_f(p, r), set1_f(kP4));
  p = add_f(mul_f(p, r), set1_f(kP5));
  const VF y = add_f(add_f(mul_f(mul_f(p, r), r), r), set1_f(1.0f));
  return mul_f(y, exp2_bits(n));  // NaN lanes: y is NaN
}
inline VF sigmoid_v(VF x) {
  const VF one = set1_f(1.0f);
  return div_f(one, add_f(one, exp_v(sub_f(set1_f(0.0f), x))));
}
inline VF tanh_v(VF x) {
  const VF one = set1_f(1.0f);
  return sub_f(one, div_f(set1_f(2.0f), add_f(one, exp_v(add_f(x, x)))));
}
#endif  // QPLUGIN_SIMD

}  // namespace

void lstm_pointwise(const float* gi, int64_t gi_stride, const float* gh, int64_t rows, int64_t H, float* c, float* h,
                    float* out, int64_t out_stride) {
  for (int64_t b = 0; b < rows; ++b) {
    const float* xi = gi + b * gi_stride;
    const float* xh = gh + b * 4 * H;
    float* cb = c + b * H;
    float* hb = h + b * H;
    float* ob = out + b * out_stride;
    int64_t j = 0;
#if QPLUGIN_SIMD
    for (; j + kLanes <= H; j += kLanes) {
      const VF si = add_f(loadu_f(xi + j), loadu_f(xh + j));
      const VF sf = add_f(loadu_f(xi + H + j), loadu_f(xh + H + j));
      const VF sg = add_f(loadu_f(xi + 2 * H + j), loadu_f(xh + 2 * H + j));
      const VF so = add_f(loadu_f(xi + 3 * H + j), loadu_f(xh + 3 * H + j));
      const VF cn = add_f(mul_f(sigmoid_v(sf), loadu_f(cb + j)), mul_f(sigmoid_v(si), tanh_v(sg)));
      const VF hn = mul_f(sigmoid_v(so), tanh_v(cn));
      storeu_f(cb + j, cn);
      storeu_f(hb + j, hn);
      storeu_f(ob + j, hn);
    }
#endif
    for (; j < H; ++j) {
      lstm_one(xi[j] + xh[j], xi[H + j] + xh[H + j], xi[2 * H + j] + xh[2 * H + j], xi[3 * H + j] + xh[3 * H + j],
               cb + j, hb + j, ob + j);
    }
  }
}

void gru_pointwise(const float* gi, int64_t gi_stride, const float* gh, int64_t rows, int64_t H, float* h, float* out,
                   int64_t out_stride) {
  for (int64_t b = 0; b < rows; ++b) {
    const float* xi = gi + b * gi_stride;
    const float* xh = gh + b * 3 * H;
    float* hb = h + b * H;
    float* ob = out + b * out_stride;
    int64_t j = 0;
#if QPLUGIN_SIMD
    const VF one = set1_f(1.0f);
    for (; j + kLanes <= H; j += kLanes) {
      const VF r = sigmoid_v(add_f(loadu_f(xi + j), loadu_f(xh + j)));
      const VF z = sigmoid_v(add_f(loadu_f(xi + H + j), loadu_f(xh + H + j)));
      const VF n = tanh_v(add_f(loadu_f(xi + 2 * H + j), mul_f(r, loadu_f(xh + 2 * H + j))));
      const VF v = add_f(mul_f(sub_f(one, z), n), mul_f(z, loadu_f(hb + j)));
      storeu_f(hb + j, v);
      storeu_f(ob + j, v);
    }
#endif
    for (; j < H; ++j) {
      gru_one(xi[j], xi[H + j], xi[2 * H + j], xh[j], xh[H + j], xh[2 * H + j], hb + j, ob + j);
    }
  }
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
