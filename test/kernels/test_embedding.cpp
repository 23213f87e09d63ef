// Embedding-bag kernels (kernels/embedding_kernel.h): embedding_bag_rows on the three row layouts
// the callers build (fused 8-bit rows with float32 qparams, fused 4-bit rows with fp16 qparams,
// packed params' codes with a separate float32 qparam array), every mode, per-sample weights,
// pruned rows, empty bags, bag ranges, indices outside the table, small tables and ones past the
// prefetch threshold; bag_bounds_ok on good and bad starts; index_range. Every tier against scalar.
#include <algorithm>

#include "harness.h"
#include "kernels/embedding_kernel.h"

namespace qk = qplugin::kernels;

namespace {

uint16_t draw_half(kt::Rng& rng, bool specials) {
  const uint16_t sign = static_cast<uint16_t>(rng.chance(50) ? 0x8000 : 0);
  const int64_t r = rng.range(0, 99);
  if (specials && r < 3) return static_cast<uint16_t>(sign | 0x7C00);                 // inf
  if (specials && r < 5) return static_cast<uint16_t>(0x7E00 | rng.range(0, 0x1FF));  // NaN
  if (r < 8) return sign;                                                             // +-0
  if (r < 10) return static_cast<uint16_t>(sign | rng.range(1, 0x3FF));               // subnormal
  return static_cast<uint16_t>(sign | (rng.range(8, 20) << 10) | rng.range(0, 0x3FF));
}

// One table: codes, qparams (in the rows or apart) and the kernel's view of them.
struct Table {
  std::vector<uint8_t> data, qp;
  qk::EmbRows rows;
};

Table draw_table(kt::Rng& rng, int bits, int layout, bool specials) {
  Table t;
  const bool big = rng.chance(4);
  // D = 0 (the callers return before the kernel then; the kernel still only checks indices)
  int64_t D = rng.chance(5) ? 0 : rng.chance(75) ? rng.range(1, 70) : rng.range(1, 300);
  if (big) D = rng.range(40, 80);
  if (bits == 4) D += D % 2;  // 4-bit rows hold an even number of elements
  const int64_t code_bytes = bits == 8 ? D : D / 2;
  // layout 0: fused rows (codes, then scale and bias: float32 for 8-bit, fp16 for 4-bit);
  // layout 1: codes apart, float32 (scale, bias) pairs in their own array (packed params)
  const bool fused = layout == 0;
  const int64_t tail = fused ? (bits == 8 ? 8 : 4) : 0;
  const int64_t row_bytes = code_bytes + tail;
  // a big table holds more than the kernel's 1 MiB prefetch threshold (rows * row_bytes)
  const int64_t nrows = big ? (int64_t{1} << 20) / row_bytes + rng.range(1, 2000) : rng.range(1, 60);
  t.data.resize(static_cast<size_t>(std::max<int64_t>(1, nrows * row_bytes)));
  // codes: random for small tables; a big table repeats a random block (filling is the cost)
  const size_t block = std::min<size_t>(t.data.size(), 4096);
  for (size_t i = 0; i < block; ++i) t.data[i] = static_cast<uint8_t>(rng.next());
  for (size_t i = block; i < t.data.size(); ++i) t.data[i] = t.data[i % block];
  const bool half = fused && bits == 4;
  auto qparam_float = [&](bool is_scale) -> float {
    const int64_t r = rng.range(0, 99);
    if (specials && r < 3) return std::numeric_limits<float>::quiet_NaN();
    if (specials && r < 6) return rng.chance(50) ? INFINITY : -INFINITY;
    if (r < 9) return 0.0f;
    return is_scale ? rng.uniform(1e-4f, 0.1f) : rng.uniform(-10.0f, 10.0f);
  };
  uint8_t* qp_base;
  int64_t qp_stride;
  if (fused) {
    qp_base = t.data.data() + code_bytes;
    qp_stride = row_bytes;
  } else {
    t.qp.resize(static_cast<size_t>(std::max<int64_t>(1, nrows) * 8));
    qp_base = t.qp.data();
    qp_stride = 8;
  }
  for (int64_t r = 0; r < nrows; ++r) {
    uint8_t* p = qp_base + r * qp_stride;
    if (half) {
      const uint16_t s = draw_half(rng, specials), b = draw_half(rng, specials);
      std::memcpy(p, &s, 2);
      std::memcpy(p + 2, &b, 2);
    } else {
      const float s = qparam_float(true), b = qparam_float(false);
      std::memcpy(p, &s, 4);
      std::memcpy(p + 4, &b, 4);
    }
  }
  t.rows = qk::EmbRows{t.data.data(), row_bytes, D, bits, qp_base, qp_stride, half, nrows};
  return t;
}

}  // namespace

KT_CASE(embedding_bag_rows) {
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    const int bits = rng.chance(50) ? 8 : 4;
    const int layout = static_cast<int>(rng.range(0, 1));
    const bool specials = rng.chance(20);
    const Table t = draw_table(rng, bits, layout, specials);
    const int mode = static_cast<int>(rng.range(0, 2));
    const bool pruned = rng.chance(25);
    const bool bad = rng.chance(8);  // an index outside the table (not a pruned -1)
    // nbags >= 1 and a non-empty bag range [b0, b1): the caller's parallel_for chunks of a non-empty output
    const int64_t nbags = rng.chance(70) ? rng.range(1, 8) : rng.range(1, 60);
    // bag lengths: mostly short, some empty
    std::vector<int64_t> starts(static_cast<size_t>(nbags + 1), 0);
    for (int64_t b = 0; b < nbags; ++b) {
      const int64_t len = rng.chance(15) ? 0 : (rng.chance(80) ? rng.range(1, 6) : rng.range(1, 60));
      starts[static_cast<size_t>(b + 1)] = starts[static_cast<size_t>(b)] + len;
    }
    const int64_t n = starts.back() + (rng.chance(20) ? rng.range(0, 5) : 0);  // include_last_offset: extra indices
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (auto& i : idx) {
      i = rng.range(0, t.rows.rows - 1);
      if (pruned && rng.chance(10)) i = -1;
    }
    if (rng.chance(20) && n > 0) {  // repeats of one row
      for (auto& i : idx) i = idx[0];
    }
    if (bad && starts.back() > 0) {
      idx[static_cast<size_t>(rng.range(0, starts.back() - 1))] = rng.chance(50) ? t.rows.rows + rng.range(0, 3) : -2;
    }
    std::vector<float> psw;
    if (mode == 0 && rng.chance(40)) {
      psw.resize(static_cast<size_t>(n));
      rng.fill_float(psw, 3.0f, specials);
    }
    int64_t b0 = 0, b1 = nbags;
    if (nbags > 1 && rng.chance(30)) {
      b0 = rng.range(0, nbags - 1);
      b1 = rng.range(b0 + 1, nbags);
    }
    const int64_t D = t.rows.D;
    std::vector<float> want(static_cast<size_t>(nbags * D)), got(want.size());
    kt::poison(want);
    const bool ok_want = KT_CALL(kt::Isa::kScalar, embedding_bag_rows, t.rows, idx.data(), starts.data(),
                                 psw.empty() ? nullptr : psw.data(), mode, pruned, b0, b1, want.data());
    const std::string what = kt::fmt(
        "embedding_bag_rows bits=%d layout=%s rows=%lld D=%lld mode=%d pruned=%d psw=%d nbags=%lld bags=[%lld,%lld) "
        "n=%lld specials=%d",
        bits, layout == 0 ? "fused" : "packed", (long long)t.rows.rows, (long long)D, mode, pruned, !psw.empty(),
        (long long)nbags, (long long)b0, (long long)b1, (long long)n, specials);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      const bool ok_got = KT_CALL(isa, embedding_bag_rows, t.rows, idx.data(), starts.data(),
                                  psw.empty() ? nullptr : psw.data(), mode, pruned, b0, b1, got.data());
      if (ok_want != ok_got) {
        kt::fail("%s [%s]: returned %d, scalar %d", what.c_str(), kt::name(isa), ok_got, ok_want);
        continue;
      }
      if (ok_want) kt::same(want, got, isa, what);  // after a false return the output is not meaningful
    }
  }
}

KT_CASE(bag_bounds_ok) {
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    const int64_t nbags = rng.chance(70) ? rng.range(0, 40) : rng.range(0, 500);
    std::vector<int64_t> s(static_cast<size_t>(nbags + 1), 0);
    for (int64_t b = 0; b < nbags; ++b) s[static_cast<size_t>(b + 1)] = s[static_cast<size_t>(b)] + rng.range(0, 3);
    int64_t n = s.back() + (rng.chance(50) ? 0 : rng.range(0, 4));
    std::string broke = "none";
    if (rng.chance(50)) {
      const int64_t at = rng.range(0, nbags);
      switch (rng.range(0, 2)) {
        case 0:  // a decrease
          s[static_cast<size_t>(at)] -= rng.range(1, 3);
          broke = kt::fmt("decrease at %lld", (long long)at);
          break;
        case 1:  // past n
          n = std::max<int64_t>(0, s.back() - rng.range(1, 3));
          broke = "past n";
          break;
        default:  // a huge value
          s[static_cast<size_t>(at)] =
              rng.chance(50) ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
          broke = kt::fmt("extreme at %lld", (long long)at);
          break;
      }
    }
    const bool want = KT_CALL(kt::Isa::kScalar, bag_bounds_ok, s.data(), nbags, n);
    for (kt::Isa isa : kt::tiers()) {
      const bool got = KT_CALL(isa, bag_bounds_ok, s.data(), nbags, n);
      if (got != want) {
        kt::fail("bag_bounds_ok nbags=%lld n=%lld broken=%s [%s]: %d, scalar %d", (long long)nbags, (long long)n,
                 broke.c_str(), kt::name(isa), got, want);
      }
    }
  }
}

KT_CASE(index_range) {
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    std::vector<int64_t> x(static_cast<size_t>(std::max<int64_t>(1, rng.size(500))));
    switch (rng.range(0, 2)) {
      case 0:
        for (auto& v : x) v = static_cast<int64_t>(rng.next());  // the whole int64 range
        break;
      case 1:
        for (auto& v : x) v = rng.range(-1, 1000);
        break;
      default:
        for (auto& v : x)
          v = rng.chance(50) ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
        break;
    }
    // the extreme at a random position (the vector loop's tail included)
    if (rng.chance(50))
      x[static_cast<size_t>(rng.range(0, static_cast<int64_t>(x.size()) - 1))] = rng.range(-5000, -4000);
    std::vector<int64_t> want(2), got(2);
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, index_range, x.data(), static_cast<int64_t>(x.size()), &want[0], &want[1]);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, index_range, x.data(), static_cast<int64_t>(x.size()), &got[0], &got[1]);
      kt::same(want, got, isa, kt::fmt("index_range n=%zu", x.size()));
    }
  }
}
