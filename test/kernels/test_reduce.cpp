// reduction kernels (kernels/reduce_kernel.h): every tier against scalar. argmax / argmin keys
// over [outer, n, inner] views, row sums and middle-dim sums / means.
#include <algorithm>

#include "harness.h"
#include "kernels/reduce_kernel.h"

namespace qk = qplugin::kernels;

namespace {

// [outer, n, inner] with n >= 1; inner mostly 1 (a last-dim reduce) or small.
void shape3(kt::Rng& rng, int64_t* outer, int64_t* n, int64_t* inner) {
  *outer = rng.range(1, 4);
  *inner = rng.chance(50) ? 1 : rng.range(1, 40);
  *n = rng.chance(20) ? rng.range(1, 3000) : rng.range(1, 300);
}

template <class T, class Fn>
void check_sums(kt::Rng& rng, const char* op, bool mid, Fn call) {
  for (int it = 0; it < kt::iters(); ++it) {
    int64_t rows = rng.range(1, 5), n = rng.size(2000);
    int64_t len = 0, stride = 0;
    if (mid) {
      n = rng.chance(10) ? rng.range(300, 1200) : rng.range(0, 40);
      len = rng.size(200);
      stride = len + (rng.chance(50) ? 0 : rng.range(0, 30));
      rows = 1;
    }
    std::vector<T> x(std::max<int64_t>(1, mid ? n * stride : rows * n));
    rng.fill_int(x);
    const int64_t outs = mid ? len : rows;
    std::vector<int64_t> want(std::max<int64_t>(1, outs)), got(want.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data(), rows, n, len, stride, want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data(), rows, n, len, stride, got.data());
      kt::same(want, got, isa,
               kt::fmt("%s rows=%lld n=%lld len=%lld stride=%lld", op, (long long)rows, (long long)n, (long long)len,
                       (long long)stride));
    }
  }
}

template <class T>
void check_mean_mid(kt::Rng& rng, const char* op, void (*call)(kt::Isa, const T*, int64_t, int64_t, int64_t, T*)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t n = rng.chance(10) ? rng.range(300, 3000) : rng.range(1, 40);
    const int64_t len = rng.size(200), stride = len + (rng.chance(50) ? 0 : rng.range(0, 30));
    std::vector<T> x(std::max<int64_t>(1, n * stride));
    rng.fill_int(x);
    std::vector<T> want(std::max<int64_t>(1, len)), got(want.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data(), n, len, stride, want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data(), n, len, stride, got.data());
      kt::same(want, got, isa,
               kt::fmt("%s n=%lld len=%lld stride=%lld", op, (long long)n, (long long)len, (long long)stride));
    }
  }
}

}  // namespace

KT_CASE(argmax_u8) {
  for (int it = 0; it < kt::iters(); ++it) {
    int64_t outer, n, inner;
    shape3(rng, &outer, &n, &inner);
    std::vector<uint8_t> x(outer * n * inner);
    rng.fill_int(x);
    if (rng.chance(30)) {  // few distinct values: long runs of ties
      for (auto& v : x) v = static_cast<uint8_t>(v & 0x81);
    }
    const uint8_t mask =
        static_cast<uint8_t>(rng.chance(50) ? (rng.chance(50) ? 0x00 : 0x80) : (rng.chance(50) ? 0xFF : 0x7F));
    std::vector<int64_t> want(outer * inner), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, argmax_u8, x.data(), outer, n, inner, mask, want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, argmax_u8, x.data(), outer, n, inner, mask, got.data());
      kt::same(want, got, isa,
               kt::fmt("argmax_u8 outer=%lld n=%lld inner=%lld mask=%#x", (long long)outer, (long long)n,
                       (long long)inner, mask));
    }
  }
}

KT_CASE(argmax_s32) {
  for (int it = 0; it < kt::iters(); ++it) {
    int64_t outer, n, inner;
    shape3(rng, &outer, &n, &inner);
    std::vector<int32_t> x(outer * n * inner);
    rng.fill_int(x);
    if (rng.chance(30)) {
      for (auto& v : x) v &= 3;
    }
    std::vector<int64_t> want(outer * inner), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, argmax_s32, x.data(), outer, n, inner, want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, argmax_s32, x.data(), outer, n, inner, got.data());
      kt::same(want, got, isa,
               kt::fmt("argmax_s32 outer=%lld n=%lld inner=%lld", (long long)outer, (long long)n, (long long)inner));
    }
  }
}

#define KT_SUM_ROWS(fn, T)                                                                             \
  KT_CASE(fn) {                                                                                        \
    check_sums<T>(rng, #fn, false,                                                                     \
                  [](kt::Isa isa, const T* x, int64_t rows, int64_t n, int64_t, int64_t, int64_t* s) { \
                    KT_CALL(isa, fn, x, rows, n, s);                                                   \
                  });                                                                                  \
  }
#define KT_SUM_MID(fn, T)                                                                                    \
  KT_CASE(fn) {                                                                                              \
    check_sums<T>(rng, #fn, true,                                                                            \
                  [](kt::Isa isa, const T* x, int64_t, int64_t n, int64_t len, int64_t stride, int64_t* s) { \
                    KT_CALL(isa, fn, x, n, len, stride, s);                                                  \
                  });                                                                                        \
  }
KT_SUM_ROWS(sum_rows_u8, uint8_t)
KT_SUM_ROWS(sum_rows_s8, int8_t)
KT_SUM_ROWS(sum_rows_s32, int32_t)
KT_SUM_MID(sum_mid_u8, uint8_t)
KT_SUM_MID(sum_mid_s8, int8_t)
KT_SUM_MID(sum_mid_s32, int32_t)

KT_CASE(mean_mid_u8) {
  check_mean_mid<uint8_t>(rng, "mean_mid_u8",
                          [](kt::Isa isa, const uint8_t* x, int64_t n, int64_t len, int64_t stride, uint8_t* y) {
                            KT_CALL(isa, mean_mid_u8, x, n, len, stride, y);
                          });
}
KT_CASE(mean_mid_s8) {
  check_mean_mid<int8_t>(rng, "mean_mid_s8",
                         [](kt::Isa isa, const int8_t* x, int64_t n, int64_t len, int64_t stride, int8_t* y) {
                           KT_CALL(isa, mean_mid_s8, x, n, len, stride, y);
                         });
}
