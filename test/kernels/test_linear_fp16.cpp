// fp16 dynamic linear kernel (kernels/linear_fp16_kernel.h): random M / K / N around every panel
// and vector width, panel ranges as cpu/linear_fp16.cpp splits them, weights of any float16 bit
// pattern (a float16 weight is packed as given: subnormals, -0, +-inf and NaN included), x and
// bias with the float specials, with and without bias and relu; every tier against scalar.
#include <algorithm>

#include "harness.h"
#include "kernels/linear_fp16_kernel.h"

namespace qk = qplugin::kernels;

namespace {

// A float16 bit pattern: mostly normal values of moderate magnitude, sometimes the specials.
uint16_t draw_half(kt::Rng& rng, bool specials) {
  const uint16_t sign = static_cast<uint16_t>(rng.chance(50) ? 0x8000 : 0);
  const int64_t r = rng.range(0, 99);
  if (specials && r < 2) return static_cast<uint16_t>(sign | 0x7C00);                 // inf
  if (specials && r < 3) return static_cast<uint16_t>(0x7E00 | rng.range(0, 0x1FF));  // NaN
  if (specials && r < 4) return static_cast<uint16_t>(sign | 0x7BFF);                 // 65504
  if (r < 6) return sign;                                                             // +-0
  if (r < 9) return static_cast<uint16_t>(sign | rng.range(1, 0x3FF));                // subnormal
  const int64_t exp = rng.range(9, 19);                                               // 2^-6 .. 2^4
  return static_cast<uint16_t>(sign | (exp << 10) | rng.range(0, 0x3FF));
}

}  // namespace

KT_CASE(linear_fp16_f32) {
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    const int64_t M = rng.chance(70) ? rng.range(1, 6) : rng.range(1, 40);
    const int64_t K = rng.chance(70) ? rng.range(0, 70) : rng.range(0, 400);
    const int64_t N = rng.chance(70) ? rng.range(1, 70) : rng.range(1, 200);
    const int64_t P = (N + qk::kFp16Panel - 1) / qk::kFp16Panel;
    int64_t p0 = 0, p1 = P;
    if (P > 1 && rng.chance(40)) {
      p0 = rng.range(0, P - 1);
      p1 = rng.range(p0 + 1, P);
    }
    const bool specials = rng.chance(30);
    std::vector<float> x(static_cast<size_t>(M * K));
    rng.fill_float(x, rng.chance(50) ? 2.0f : 100.0f, specials);
    std::vector<uint16_t> packed(static_cast<size_t>(P * K * qk::kFp16Panel), 0);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t k = 0; k < K; ++k) {
        packed[static_cast<size_t>(((n / qk::kFp16Panel) * K + k) * qk::kFp16Panel + n % qk::kFp16Panel)] =
            draw_half(rng, specials);
      }
    }
    std::vector<float> bias;
    if (rng.chance(70)) {
      bias.resize(static_cast<size_t>(N));
      rng.fill_float(bias, 50.0f, specials);
    }
    const bool relu = rng.chance(40);
    std::vector<float> want(static_cast<size_t>(M * N)), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, linear_fp16_f32, x.data(), K, M, K, packed.data(), N, p0, p1,
            bias.empty() ? nullptr : bias.data(), relu, want.data(), N);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, linear_fp16_f32, x.data(), K, M, K, packed.data(), N, p0, p1, bias.empty() ? nullptr : bias.data(),
              relu, got.data(), N);
      kt::same(
          want, got, isa,
          kt::fmt("linear_fp16_f32 M=%lld K=%lld N=%lld panels=[%lld,%lld) bias=%d relu=%d specials=%d", (long long)M,
                  (long long)K, (long long)N, (long long)p0, (long long)p1, !bias.empty(), relu, specials));
    }
  }
}
