// comparator kernels (kernels/compare_kernel.h): every tier against scalar. Tensor-scalar ranges
// on 8- and 32-bit data, and 8-bit pairs with the rank tables (or the affine offset) that
// cpu/compare.cpp builds from two sets of qparams.
#include <algorithm>
#include <array>

#include "harness.h"
#include "kernels/compare_kernel.h"

namespace qk = qplugin::kernels;

namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min(), kMax = std::numeric_limits<int32_t>::max();

// The ranges of ==, !=, >=, <=, >, < on a difference (cpu/compare.cpp's diff_range).
qk::CmpRange op_range(kt::Rng& rng) {
  switch (rng.range(0, 5)) {
    case 0: return {0, 0, false};
    case 1: return {0, 0, true};
    case 2: return {0, kMax, false};
    case 3: return {kMin, 0, false};
    case 4: return {1, kMax, false};
    default: return {kMin, -1, false};
  }
}

template <class T>
void check_range(kt::Rng& rng, const char* op,
                 void (*call)(kt::Isa, const T*, int64_t, uint8_t*, int64_t, int64_t, const qk::CmpRange&)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t n = rng.size(600);
    const int64_t qs = rng.chance(80) ? 1 : rng.range(0, 3), ys = rng.chance(85) ? 1 : 2;
    std::vector<T> q(std::max<int64_t>(1, n * std::max<int64_t>(qs, 1)));
    rng.fill_int(q);
    qk::CmpRange r;
    if (rng.chance(30)) {
      r = op_range(rng);
    } else {  // a threshold mapped onto the grid: any interval, empty or past T's range included
      const int64_t lo = std::max<int64_t>(kMin, int64_t{std::numeric_limits<T>::min()} - 3);
      const int64_t hi = std::min<int64_t>(kMax, int64_t{std::numeric_limits<T>::max()} + 3);
      const int64_t a = rng.range(lo, hi), b = rng.range(lo, hi);
      r = {static_cast<int32_t>(std::min(a, b)),
           static_cast<int32_t>(rng.chance(10) ? std::max(lo, std::min(a, b) - 1) : std::max(a, b)), rng.chance(50)};
      if (rng.chance(15)) r.lo = kMin;
      if (rng.chance(15)) r.hi = kMax;
    }
    std::vector<uint8_t> want(std::max<int64_t>(1, n * ys)), got(want.size());
    kt::poison(want);
    call(kt::Isa::kScalar, q.data(), qs, want.data(), ys, n, r);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, q.data(), qs, got.data(), ys, n, r);
      kt::same(want, got, isa,
               kt::fmt("%s n=%lld qs=%lld ys=%lld lo=%d hi=%d invert=%d", op, (long long)n, (long long)qs,
                       (long long)ys, r.lo, r.hi, r.invert));
    }
  }
}

int64_t byte_value(int kind, int v) { return kind == 1 ? static_cast<int8_t>(v) : v; }

}  // namespace

KT_CASE(cmp_range_u8) {
  check_range<uint8_t>(
      rng, "cmp_range_u8",
      [](kt::Isa isa, const uint8_t* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const qk::CmpRange& r) {
        KT_CALL(isa, cmp_range_u8, q, qs, y, ys, n, r);
      });
}
KT_CASE(cmp_range_s8) {
  check_range<int8_t>(
      rng, "cmp_range_s8",
      [](kt::Isa isa, const int8_t* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const qk::CmpRange& r) {
        KT_CALL(isa, cmp_range_s8, q, qs, y, ys, n, r);
      });
}
KT_CASE(cmp_range_s32) {
  check_range<int32_t>(
      rng, "cmp_range_s32",
      [](kt::Isa isa, const int32_t* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n, const qk::CmpRange& r) {
        KT_CALL(isa, cmp_range_s32, q, qs, y, ys, n, r);
      });
}

KT_CASE(cmp_pair8) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int ka = static_cast<int>(rng.range(0, 1)), kb = static_cast<int>(rng.range(0, 1));
    auto zp = [&](int kind) {
      return static_cast<int32_t>(kind == 1 ? rng.range(-128, 127) : rng.range(0, 255));
    };
    const float sa = rng.uniform(0.01f, 2.0f);
    const float sb = rng.chance(40) ? sa : (rng.chance(30) ? 2.0f * sa : rng.uniform(0.01f, 2.0f));
    const int32_t za = zp(ka), zb = zp(kb);
    // ranks in the sorted union of both sides' values; no table when both are shifts of q
    auto da = [&](int64_t q) {
      return static_cast<float>(q - za) * sa;
    };
    auto db = [&](int64_t q) {
      return static_cast<float>(q - zb) * sb;
    };
    std::vector<float> vals;
    for (int v = 0; v < 256; ++v) {
      vals.push_back(da(byte_value(ka, v)));
      vals.push_back(db(byte_value(kb, v)));
    }
    std::sort(vals.begin(), vals.end());
    vals.erase(std::unique(vals.begin(), vals.end(),
                           [](float x, float y) {
                             return x == y;
                           }),
               vals.end());
    auto rank = [&](float x) {
      return static_cast<int32_t>(std::lower_bound(vals.begin(), vals.end(), x) - vals.begin());
    };
    std::array<int32_t, 256> ta{}, tb{};
    std::array<int16_t, 256> ta16{}, tb16{};
    const int32_t ca = rank(da(byte_value(ka, 0))) - static_cast<int32_t>(byte_value(ka, 0));
    const int32_t cb = rank(db(byte_value(kb, 0))) - static_cast<int32_t>(byte_value(kb, 0));
    bool shift = true;
    for (int v = 0; v < 256; ++v) {
      ta[v] = rank(da(byte_value(ka, v)));
      tb[v] = rank(db(byte_value(kb, v)));
      shift = shift && ta[v] == byte_value(ka, v) + ca && tb[v] == byte_value(kb, v) + cb;
      ta16[v] = static_cast<int16_t>(ta[v]);
      tb16[v] = static_cast<int16_t>(tb[v]);
    }
    const int64_t n = rng.size(600);
    const int64_t shape = rng.range(0, 7);  // 0-4 dense, 5 a broadcast, 6 b broadcast, 7 strided output
    const int64_t as = shape == 5 ? 0 : 1, bs = shape == 6 ? 0 : 1, ys = shape == 7 ? 2 : 1;
    std::vector<uint8_t> a(std::max<int64_t>(1, n)), b(std::max<int64_t>(1, n));
    rng.fill_int(a);
    rng.fill_int(b);
    const qk::CmpRange r = op_range(rng);
    std::vector<uint8_t> want(std::max<int64_t>(1, n * ys)), got(want.size());
    qk::Cmp2 c{a.data(),
               as,
               ka,
               b.data(),
               bs,
               kb,
               want.data(),
               ys,
               shift ? nullptr : ta.data(),
               shift ? nullptr : tb.data(),
               ta16.data(),
               tb16.data(),
               ca - cb,
               sa,
               sb,
               za,
               zb};
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, cmp_pair8, c, n, r);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      c.y = got.data();
      KT_CALL(isa, cmp_pair8, c, n, r);
      kt::same(want, got, isa,
               kt::fmt("cmp_pair8 n=%lld kinds=%d%d as=%lld bs=%lld ys=%lld sa=%a za=%d sb=%a zb=%d tables=%d lo=%d "
                       "hi=%d inv=%d",
                       (long long)n, ka, kb, (long long)as, (long long)bs, (long long)ys, sa, za, sb, zb, !shift, r.lo,
                       r.hi, r.invert));
    }
  }
}
