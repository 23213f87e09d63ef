// Sort / topk kernels (kernels/sort_kernel.h): the counting-sort histogram and stable scatter (with
// the cursors a caller derives from the histogram), row sorts of bytes and int32 keys, and topk
// (the small-k path, k = n, ties everywhere); every tier against scalar.
#include <algorithm>

#include "harness.h"
#include "kernels/sort_kernel.h"

namespace qk = qplugin::kernels;

namespace {

const uint8_t kMasks[4] = {0x00, 0x80, 0xFF, 0x7F};

// Bytes with many ties: uniform, the extremes, or a few distinct values.
void fill_keys(kt::Rng& rng, std::vector<uint8_t>& x) {
  if (rng.chance(25)) {
    const uint8_t a = static_cast<uint8_t>(rng.range(0, 255)), b = static_cast<uint8_t>(rng.range(0, 255));
    for (auto& v : x) v = rng.chance(50) ? a : b;
  } else {
    rng.fill_int(x);
  }
}

void fill_keys32(kt::Rng& rng, std::vector<int32_t>& x) {
  switch (rng.range(0, 2)) {
    case 0: rng.fill_int(x); break;
    case 1: rng.fill_int(x, -3, 3); break;  // ties
    default: rng.fill_int(x, -100000, 100000); break;
  }
}

int64_t sort_len(kt::Rng& rng) { return rng.chance(80) ? rng.size(300) : rng.range(1000, 5000); }

}  // namespace

KT_CASE(hist_u8) {
  for (int it = 0; it < kt::iters(); ++it) {
    std::vector<uint8_t> x(static_cast<size_t>(rng.chance(70) ? rng.size(2000) : rng.range(1000, 20000)));
    fill_keys(rng, x);
    const uint8_t mask = kMasks[rng.range(0, 3)];
    std::vector<int64_t> start(256);
    for (auto& c : start) c = rng.chance(50) ? 0 : rng.range(0, 1000);  // counts accumulate
    std::vector<int64_t> want = start, got;
    KT_CALL(kt::Isa::kScalar, hist_u8, x.data(), static_cast<int64_t>(x.size()), mask, want.data());
    for (kt::Isa isa : kt::tiers()) {
      got = start;
      KT_CALL(isa, hist_u8, x.data(), static_cast<int64_t>(x.size()), mask, got.data());
      kt::same(want, got, isa, kt::fmt("hist_u8 n=%zu mask=0x%02x", x.size(), mask));
    }
  }
}

// One chunk [lo, lo + len) of a larger array scattered with cursors from the histogram's
// exclusive prefix sum (cpu/sort.cpp's split sort, one chunk).
KT_CASE(scatter_u8) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t n = sort_len(rng);
    std::vector<uint8_t> x(static_cast<size_t>(n));
    fill_keys(rng, x);
    const uint8_t mask = kMasks[rng.range(0, 3)];
    const int64_t base = rng.chance(50) ? 0 : rng.range(0, 1 << 20);
    std::vector<int64_t> cursor(256, 0);
    for (uint8_t v : x) cursor[static_cast<uint8_t>(v ^ mask)]++;
    int64_t sum = 0;
    for (auto& c : cursor) {
      const int64_t cnt = c;
      c = sum;
      sum += cnt;
    }
    std::vector<int64_t> idx_want(static_cast<size_t>(n)), idx_got(idx_want.size());
    std::vector<int64_t> cur_want = cursor, cur_got;
    kt::poison(idx_want);
    KT_CALL(kt::Isa::kScalar, scatter_u8, x.data(), n, mask, base, cur_want.data(), idx_want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(idx_got);
      cur_got = cursor;
      KT_CALL(isa, scatter_u8, x.data(), n, mask, base, cur_got.data(), idx_got.data());
      const std::string what = kt::fmt("scatter_u8 n=%lld mask=0x%02x base=%lld", (long long)n, mask, (long long)base);
      kt::same(idx_want, idx_got, isa, what) && kt::same(cur_want, cur_got, isa, what + " (cursors)");
    }
  }
}

KT_CASE(sort_rows_u8) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t n = std::max<int64_t>(1, rng.chance(85) ? rng.size(300) : rng.range(1000, 4000));
    const int64_t rows = rng.range(1, std::max<int64_t>(1, 2000 / n));
    std::vector<uint8_t> x(static_cast<size_t>(rows * n));
    fill_keys(rng, x);
    const uint8_t mask = kMasks[rng.range(0, 3)];
    const bool with_values = rng.chance(70);
    std::vector<uint8_t> v_want(x.size()), v_got(x.size());
    std::vector<int64_t> i_want(x.size()), i_got(x.size());
    kt::poison(v_want);
    kt::poison(i_want);
    KT_CALL(kt::Isa::kScalar, sort_rows_u8, x.data(), rows, n, mask, with_values ? v_want.data() : nullptr,
            i_want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(v_got);
      kt::poison(i_got);
      KT_CALL(isa, sort_rows_u8, x.data(), rows, n, mask, with_values ? v_got.data() : nullptr, i_got.data());
      const std::string what = kt::fmt("sort_rows_u8 rows=%lld n=%lld mask=0x%02x values=%d", (long long)rows,
                                       (long long)n, mask, with_values);
      kt::same(i_want, i_got, isa, what) && kt::same(v_want, v_got, isa, what + " (values)");
    }
  }
}

KT_CASE(topk_u8) {
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    const int64_t n = std::max<int64_t>(1, sort_len(rng));
    int64_t k;
    switch (rng.range(0, 3)) {
      case 0: k = rng.range(1, std::min<int64_t>(n, 16)); break;  // the small-k path
      case 1: k = n; break;
      default: k = rng.range(1, n); break;
    }
    std::vector<uint8_t> x(static_cast<size_t>(n));
    fill_keys(rng, x);
    const uint8_t mask = kMasks[rng.range(0, 3)];
    std::vector<uint8_t> v_want(static_cast<size_t>(k)), v_got(v_want.size());
    std::vector<int64_t> i_want(static_cast<size_t>(k)), i_got(i_want.size());
    kt::poison(v_want);
    kt::poison(i_want);
    KT_CALL(kt::Isa::kScalar, topk_u8, x.data(), n, k, mask, v_want.data(), i_want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(v_got);
      kt::poison(i_got);
      KT_CALL(isa, topk_u8, x.data(), n, k, mask, v_got.data(), i_got.data());
      const std::string what = kt::fmt("topk_u8 n=%lld k=%lld mask=0x%02x", (long long)n, (long long)k, mask);
      kt::same(i_want, i_got, isa, what) && kt::same(v_want, v_got, isa, what + " (values)");
    }
  }
}

KT_CASE(sort_rows_s32) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t n = std::max<int64_t>(1, rng.chance(85) ? rng.size(300) : rng.range(1000, 4000));
    const int64_t rows = rng.range(1, std::max<int64_t>(1, 2000 / n));
    std::vector<int32_t> keys(static_cast<size_t>(rows * n));
    fill_keys32(rng, keys);
    std::vector<int64_t> want(keys.size()), got(keys.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, sort_rows_s32, keys.data(), rows, n, want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, sort_rows_s32, keys.data(), rows, n, got.data());
      kt::same(want, got, isa, kt::fmt("sort_rows_s32 rows=%lld n=%lld", (long long)rows, (long long)n));
    }
  }
}

KT_CASE(topk_s32) {
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    const int64_t n = std::max<int64_t>(1, sort_len(rng));
    const int64_t k = rng.chance(30) ? n : rng.chance(50) ? rng.range(1, std::min<int64_t>(n, 16)) : rng.range(1, n);
    std::vector<int32_t> keys(static_cast<size_t>(n));
    fill_keys32(rng, keys);
    std::vector<int64_t> want(static_cast<size_t>(k)), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, topk_s32, keys.data(), n, k, want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, topk_s32, keys.data(), n, k, got.data());
      kt::same(want, got, isa, kt::fmt("topk_s32 n=%lld k=%lld", (long long)n, (long long)k));
    }
  }
}
