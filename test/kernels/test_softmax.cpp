// Quantized softmax kernels (kernels/softmax_kernel.h): random (outer, dim, inner) layouts, the
// whole inner range or a slice of it (as cpu/softmax.cpp splits few outer blocks), inputs with
// ties and extremes, the exp table built as the caller builds it; every tier against scalar.
#include <cmath>

#include "harness.h"
#include "kernels/softmax_kernel.h"

namespace qk = qplugin::kernels;

namespace {

template <class T>
void check(kt::Rng& rng, const char* op,
           void (*call)(kt::Isa, const T*, T*, int64_t, int64_t, int64_t, int64_t, const qk::SoftmaxSpec*)) {
  constexpr bool is32 = sizeof(T) == 4;
  for (int it = 0; it < kt::iters(); ++it) {
    int64_t outer = rng.range(1, 4), dim, inner;
    switch (rng.range(0, 2)) {
      case 0:  // softmax over the last dim
        inner = 1;
        dim = rng.chance(70) ? rng.range(1, 70) : rng.range(1, 600);
        break;
      case 1:  // an inner dim of any width
        inner = rng.chance(70) ? rng.range(1, 70) : rng.range(1, 200);
        dim = rng.range(1, 12);
        break;
      default:
        inner = rng.range(1, 40);
        dim = rng.range(1, 40);
        break;
    }
    // the positions [i0, i0 + count) of one outer block, or all of them
    int64_t i0 = 0, count = inner;
    if (inner > 1 && rng.chance(30)) {
      outer = 1;
      i0 = rng.range(0, inner - 1);
      count = rng.range(1, inner - i0);
    }
    std::vector<T> x(static_cast<size_t>(outer * dim * inner));
    if (is32 && rng.chance(50)) {
      rng.fill_int(x, -5000, 5000);
    } else {
      rng.fill_int(x);
    }
    double in_scale;
    switch (rng.range(0, 3)) {
      case 0: in_scale = 1.0 / 256.0; break;
      case 1: in_scale = rng.uniform(1.0f, 20.0f); break;  // most exp entries underflow
      default: in_scale = rng.uniform(1e-4f, 0.5f); break;
    }
    if (is32 && rng.chance(30)) in_scale = rng.uniform(1e-9f, 1e-5f);  // wide int32 data, moderate reals
    double table[256];
    for (int k = 0; k < 256; ++k) table[k] = std::exp(-static_cast<double>(k) * in_scale);
    const double out_scale = rng.chance(50) ? 1.0 / 256.0 : rng.uniform(1e-4f, 0.1f);
    const int32_t out_zp =
        is32 ? static_cast<int32_t>(rng.range(-1000, 1000))
             : static_cast<int32_t>(rng.range(std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
    const qk::SoftmaxSpec spec{in_scale, table, out_scale, out_zp};
    std::vector<T> want(x.size()), got(x.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data() + i0, want.data() + i0, outer, dim, count, inner, &spec);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data() + i0, got.data() + i0, outer, dim, count, inner, &spec);
      kt::same(want, got, isa,
               kt::fmt("%s outer=%lld dim=%lld inner=%lld positions=[%lld,+%lld) in_scale=%a out_scale=%a out_zp=%d",
                       op, (long long)outer, (long long)dim, (long long)inner, (long long)i0, (long long)count,
                       in_scale, out_scale, out_zp));
    }
  }
}

}  // namespace

KT_CASE(softmax_u8) {
  check<uint8_t>(rng, "softmax_u8",
                 [](kt::Isa isa, const uint8_t* x, uint8_t* y, int64_t o, int64_t d, int64_t c, int64_t s,
                    const qk::SoftmaxSpec* sp) {
                   KT_CALL(isa, softmax_u8, x, y, o, d, c, s, sp);
                 });
}

KT_CASE(softmax_s8) {
  check<int8_t>(rng, "softmax_s8",
                [](kt::Isa isa, const int8_t* x, int8_t* y, int64_t o, int64_t d, int64_t c, int64_t s,
                   const qk::SoftmaxSpec* sp) {
                  KT_CALL(isa, softmax_s8, x, y, o, d, c, s, sp);
                });
}

KT_CASE(softmax_s32) {
  check<int32_t>(rng, "softmax_s32",
                 [](kt::Isa isa, const int32_t* x, int32_t* y, int64_t o, int64_t d, int64_t c, int64_t s,
                    const qk::SoftmaxSpec* sp) {
                   KT_CALL(isa, softmax_s32, x, y, o, d, c, s, sp);
                 });
}
