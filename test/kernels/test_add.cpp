// add / mul kernels (kernels/add_kernel.h): every tier against scalar. Dense and broadcast
// operands (the vector loops), strided ones (the scalar loop), relu bounds, and the integer
// transforms behind add_scalar / mul_scalar.
#include <type_traits>

#include "harness.h"
#include "kernels/add_kernel.h"

namespace qk = qplugin::kernels;

namespace {

// A scale ratio as cpu/add.cpp forms one: mostly moderate, sometimes tiny or large.
double ratio(kt::Rng& rng) {
  const int64_t r = rng.range(0, 9);
  if (r == 0) return rng.uniform(1e-6f, 1e-3f);
  if (r == 1) return rng.uniform(10.0f, 1000.0f);
  if (r == 2) return 1.0;
  return rng.uniform(0.01f, 3.0f);
}

// One binary problem on T: operands, strides (dense 1, broadcast 0, or strided), parameters.
template <class T>
void check_binary(kt::Rng& rng, bool mul, const char* op,
                  void (*call)(kt::Isa, const qk::Strided&, int64_t, const qk::BinaryParams&)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t n = rng.size(600);
    const int64_t shape = rng.range(0, 9);  // 0-5 dense, 6 a broadcast, 7 b broadcast, 8 strided a, 9 y strided
    const int64_t as = shape == 6 ? 0 : (shape == 8 ? 2 : 1);
    const int64_t bs = shape == 7 ? 0 : 1;
    const int64_t ys = shape == 9 ? 3 : 1;
    std::vector<T> a(std::max<int64_t>(1, n * std::max<int64_t>(as, 1))), b(std::max<int64_t>(1, n));
    rng.fill_int(a);
    rng.fill_int(b);
    qk::BinaryParams p{};
    p.za = static_cast<int32_t>(rng.range(kt::qmin<T>(), kt::qmax<T>()));
    p.zb = static_cast<int32_t>(rng.range(kt::qmin<T>(), kt::qmax<T>()));
    p.zo = static_cast<int32_t>(rng.range(kt::qmin<T>(), kt::qmax<T>()));
    p.da = mul ? ratio(rng) * ratio(rng) : ratio(rng);
    p.db = mul ? 0.0 : ratio(rng);
    p.fa = static_cast<float>(p.da);
    p.fb = static_cast<float>(p.db);
    const bool relu = rng.chance(30);
    p.lo = relu ? std::max(kt::qmin<T>(), p.zo) : kt::qmin<T>();
    p.hi = kt::qmax<T>();
    std::vector<T> want(std::max<int64_t>(1, n * ys)), got(want.size());
    kt::poison(want);
    qk::Strided s{a.data(), as, b.data(), bs, want.data(), ys};
    call(kt::Isa::kScalar, s, n, p);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      s.y = got.data();
      call(isa, s, n, p);
      kt::same(want, got, isa,
               kt::fmt("%s n=%lld as=%lld bs=%lld ys=%lld za=%d zb=%d zo=%d fa=%a fb=%a lo=%d", op,
                       static_cast<long long>(n), static_cast<long long>(as), static_cast<long long>(bs),
                       static_cast<long long>(ys), p.za, p.zb, p.zo, p.fa, p.fb, p.lo));
    }
  }
}

template <class T>
void check_add_scalar(kt::Rng& rng, const char* op,
                      void (*call)(kt::Isa, const T*, T*, int64_t, int32_t, int64_t, float, int32_t, int32_t,
                                   int32_t)) {
  for (int it = 0; it < kt::iters(); ++it) {
    std::vector<T> x(rng.size(600));
    rng.fill_int(x);
    const int32_t zi = static_cast<int32_t>(rng.range(kt::qmin<T>(), kt::qmax<T>()));
    const int32_t zo = static_cast<int32_t>(rng.range(kt::qmin<T>(), kt::qmax<T>()));
    // c in steps of the input scale; m = in / out scale <= 1 (cpu/add.cpp widens the output range)
    const int64_t c = rng.chance(80) ? rng.range(-1000, 1000) : rng.range(-(int64_t{1} << 29), int64_t{1} << 29);
    const float m = rng.chance(10) ? 1.0f : rng.uniform(1e-4f, 1.0f);
    const bool relu = rng.chance(30);
    const int32_t lo = relu ? std::max(kt::qmin<T>(), zo) : kt::qmin<T>(), hi = kt::qmax<T>();
    std::vector<T> want(x.size()), got(x.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data(), want.data(), x.size(), zi, c, m, zo, lo, hi);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data(), got.data(), x.size(), zi, c, m, zo, lo, hi);
      kt::same(
          want, got, isa,
          kt::fmt("%s n=%zu zi=%d c=%lld m=%a zo=%d lo=%d", op, x.size(), zi, static_cast<long long>(c), m, zo, lo));
    }
  }
}

template <class T>
void check_flip_clamp(kt::Rng& rng, const char* op,
                      void (*call)(kt::Isa, const T*, T*, int64_t, bool, int32_t, int32_t, int32_t)) {
  for (int it = 0; it < kt::iters(); ++it) {
    std::vector<T> x(rng.size(600));
    rng.fill_int(x);
    const bool flip = rng.chance(50);
    const int32_t k = kt::qmin<T>() + kt::qmax<T>();
    const int32_t lo = static_cast<int32_t>(rng.chance(50) ? kt::qmin<T>() : rng.range(kt::qmin<T>(), kt::qmax<T>()));
    const int32_t hi = kt::qmax<T>();
    std::vector<T> want(x.size()), got(x.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data(), want.data(), x.size(), flip, k, lo, hi);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data(), got.data(), x.size(), flip, k, lo, hi);
      kt::same(want, got, isa, kt::fmt("%s n=%zu flip=%d lo=%d", op, x.size(), flip, lo));
    }
  }
}

}  // namespace

#define KT_BINARY(fn, T, is_mul)                                                                                    \
  KT_CASE(fn) {                                                                                                     \
    check_binary<T>(rng, is_mul, #fn, [](kt::Isa isa, const qk::Strided& s, int64_t n, const qk::BinaryParams& p) { \
      KT_CALL(isa, fn, s, n, p);                                                                                    \
    });                                                                                                             \
  }
KT_BINARY(add_u8, uint8_t, false)
KT_BINARY(add_s8, int8_t, false)
KT_BINARY(add_s32, int32_t, false)
KT_BINARY(mul_u8, uint8_t, true)
KT_BINARY(mul_s8, int8_t, true)
KT_BINARY(mul_s32, int32_t, true)

KT_CASE(add_scalar_requant_u8) {
  check_add_scalar<uint8_t>(rng, "add_scalar_requant_u8",
                            [](kt::Isa isa, const uint8_t* x, uint8_t* y, int64_t n, int32_t zi, int64_t c, float m,
                               int32_t zo, int32_t lo, int32_t hi) {
                              KT_CALL(isa, add_scalar_requant_u8, x, y, n, zi, c, m, zo, lo, hi);
                            });
}
KT_CASE(add_scalar_requant_s8) {
  check_add_scalar<int8_t>(rng, "add_scalar_requant_s8",
                           [](kt::Isa isa, const int8_t* x, int8_t* y, int64_t n, int32_t zi, int64_t c, float m,
                              int32_t zo, int32_t lo, int32_t hi) {
                             KT_CALL(isa, add_scalar_requant_s8, x, y, n, zi, c, m, zo, lo, hi);
                           });
}
KT_CASE(flip_clamp_u8) {
  check_flip_clamp<uint8_t>(
      rng, "flip_clamp_u8",
      [](kt::Isa isa, const uint8_t* x, uint8_t* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi) {
        KT_CALL(isa, flip_clamp_u8, x, y, n, flip, k, lo, hi);
      });
}
KT_CASE(flip_clamp_s8) {
  check_flip_clamp<int8_t>(
      rng, "flip_clamp_s8",
      [](kt::Isa isa, const int8_t* x, int8_t* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi) {
        KT_CALL(isa, flip_clamp_s8, x, y, n, flip, k, lo, hi);
      });
}
KT_CASE(flip_clamp_s32) {
  check_flip_clamp<int32_t>(
      rng, "flip_clamp_s32",
      [](kt::Isa isa, const int32_t* x, int32_t* y, int64_t n, bool flip, int32_t k, int32_t lo, int32_t hi) {
        KT_CALL(isa, flip_clamp_s32, x, y, n, flip, k, lo, hi);
      });
}
