// The int8 GEMM engine's per-ISA kernels (kernels/gemm/qgemm.h): qgemm_block on random blocks of
// random problems (every OutKind, zero points, bias, clamps, the conv2d_add residual, K tails,
// column tails, long K), qgemm_block_indirect where a tier has it (against scalar qgemm_block on
// the gathered rows; with a tap selection and scattered output rows where a tier takes them), and
// minmax_f32; every tier against scalar, bit for bit.
#include <algorithm>

#include "harness.h"
#include "kernels/gemm/qgemm.h"

namespace qk = qplugin::kernels;
namespace gemm = qplugin::kernels::gemm;

namespace {

// One random GEMM problem with its parameters (pointers into the owned vectors).
struct Problem {
  int64_t M = 0, N = 0, K = 0, lda = 0;
  std::vector<uint8_t> a;
  std::vector<int8_t> w;  // N x K
  gemm::PackedWeight packed;
  gemm::PackedB view;
  std::vector<int32_t> bzp;
  std::vector<float> mult, bias;
  std::vector<uint8_t> add;
  gemm::QGemmParams p;
  size_t out_elems = 0;
};

int64_t draw_k(kt::Rng& rng) {
  const int64_t r = rng.range(0, 99);
  if (r < 45) return rng.range(1, 40);
  if (r < 80) return rng.range(1, 300);
  if (r < 95) return rng.range(300, 1200);
  return rng.range(1200, 4100);
}

// Fills everything but the output; `indirect`: no row sums (every b_zp 0, the flag set).
// extremes 0: random operands; 1: A = 255, B = -128; 2: A = 0, B = 127; 3: each at random
// from {0, 255} x {-128, 127}.
void draw(kt::Rng& rng, Problem& q, bool indirect, int64_t K, int extremes = 0) {
  q.M = rng.chance(80) ? rng.range(1, 24) : rng.range(1, 80);
  q.N = rng.chance(70) ? rng.range(1, 80) : rng.range(1, 260);
  if (q.M * q.N * K > 3000000) q.M = std::max<int64_t>(1, 3000000 / (q.N * K));
  q.K = K;
  q.lda = K + (rng.chance(50) ? 0 : rng.range(1, 9));
  // exactly as many bytes as the rows need: a read past the last row's K bytes is out of bounds
  q.a.resize(static_cast<size_t>((q.M - 1) * q.lda + K));
  rng.fill_int(q.a);
  q.w.resize(static_cast<size_t>(q.N * K));
  rng.fill_int(q.w);
  if (extremes != 0) {
    for (auto& x : q.a) x = extremes == 1 ? 255 : extremes == 2 ? 0 : (rng.chance(50) ? 255 : 0);
    for (auto& x : q.w)
      x = static_cast<int8_t>(extremes == 1 ? -128 : extremes == 2 ? 127 : (rng.chance(50) ? -128 : 127));
  }
  q.packed.pack(q.w.data(), K, 1, K, q.N);
  q.view = q.packed.view(rng.chance(50));  // the int16 copy: the AVX2 tier's int16 tiles

  gemm::QGemmParams& p = q.p;
  p = gemm::QGemmParams();
  p.M = q.M;
  p.a = q.a.data();
  p.lda = q.lda;
  p.a_zero_point = static_cast<int32_t>(rng.chance(20) ? 0 : rng.range(0, 255));
  p.b = &q.view;
  q.bzp.assign(static_cast<size_t>(q.N), 0);
  const int zmode = indirect ? 0 : static_cast<int>(rng.range(0, 2));  // 0: flag, 1: all 0 unflagged, 2: random
  if (zmode == 2) {
    for (auto& z : q.bzp) z = static_cast<int32_t>(rng.chance(20) ? 0 : rng.range(-128, 127));
  }
  p.b_zero_points = q.bzp.data();
  p.b_zero_points_all_zero = zmode == 0;

  const int kind = static_cast<int>(rng.range(0, 2));
  p.kind = static_cast<gemm::OutKind>(kind);
  // multipliers around 1 / (typical |C|), so kU8 outputs spread over the range, sometimes saturate
  const float typ = 1.0f / (128.0f * 64.0f * std::sqrt(static_cast<float>(K)));
  q.mult.resize(static_cast<size_t>(q.N));
  for (auto& m : q.mult) m = rng.chance(3) ? 0.0f : typ * rng.uniform(0.05f, 40.0f);
  p.multipliers = q.mult.data();
  if (rng.chance(70)) {
    q.bias.resize(static_cast<size_t>(q.N));
    rng.fill_float(q.bias, 200.0f, rng.chance(20));
    p.bias = q.bias.data();
  }
  p.out_zero_point = static_cast<int32_t>(rng.range(0, 255));
  int32_t lo = static_cast<int32_t>(rng.range(0, 255)), hi = static_cast<int32_t>(rng.range(0, 255));
  if (lo > hi) std::swap(lo, hi);
  if (rng.chance(40)) lo = 0, hi = 255;
  if (rng.chance(15)) lo = p.out_zero_point, hi = 255;  // relu
  p.out_min = lo;
  p.out_max = hi;
  p.out_fmin = rng.chance(50) ? -INFINITY : 0.0f;
  p.ldc = q.N + (rng.chance(50) ? 0 : rng.range(1, 17));
  if (p.kind == gemm::OutKind::kU8 && rng.chance(30)) {
    p.ld_add = q.N + rng.range(0, 5);
    q.add.resize(static_cast<size_t>(q.M * p.ld_add));
    rng.fill_int(q.add);
    p.add = q.add.data();
    p.add_zp = static_cast<int32_t>(rng.range(0, 255));
    p.add_mult = rng.uniform(0.0f, 3.0f);
  }
  q.out_elems = static_cast<size_t>(q.M * p.ldc);
}

// A random block: rows [m0, m1), columns [n0, n1) with n0 a multiple of 16.
void draw_block(kt::Rng& rng, const Problem& q, int64_t* m0, int64_t* m1, int64_t* n0, int64_t* n1) {
  *m0 = 0, *m1 = q.M, *n0 = 0, *n1 = q.N;
  if (rng.chance(35)) {
    *m0 = rng.range(0, q.M - 1);
    *m1 = rng.range(*m0 + 1, q.M);
    *n0 = rng.range(0, (q.N - 1) / gemm::kPanelN) * gemm::kPanelN;
    *n1 = rng.range(*n0 + 1, q.N);
  }
}

std::string describe(const Problem& q, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const gemm::QGemmParams& p = q.p;
  return kt::fmt(
      "M=%lld N=%lld K=%lld lda=%lld block=[%lld,%lld)x[%lld,%lld) kind=%d a_zp=%d bzp=%s "
      "bias=%d y_zp=%d clamp=[%d,%d] fmin=%g add=%d i16=%d",
      (long long)q.M, (long long)q.N, (long long)q.K, (long long)q.lda, (long long)m0, (long long)m1, (long long)n0,
      (long long)n1, static_cast<int>(p.kind), p.a_zero_point, p.b_zero_points_all_zero ? "flag0" : "given",
      p.bias != nullptr, p.out_zero_point, p.out_min, p.out_max, static_cast<double>(p.out_fmin), p.add != nullptr,
      q.view.data16 != nullptr);
}

// Runs fn(isa, params) for scalar and each tier on poisoned output of type T and compares.
template <class T, class Fn>
void compare(Problem& q, const std::string& what, Fn fn) {
  std::vector<T> want(q.out_elems), got(q.out_elems);
  kt::poison(want);
  q.p.out = want.data();
  fn(kt::Isa::kScalar, q.p);
  for (kt::Isa isa : kt::tiers()) {
    kt::poison(got);
    q.p.out = got.data();
    fn(isa, q.p);
    kt::same(want, got, isa, what);
  }
}

template <class Fn>
void compare_kind(Problem& q, const std::string& what, Fn fn) {
  switch (q.p.kind) {
    case gemm::OutKind::kU8: compare<uint8_t>(q, what, fn); break;
    case gemm::OutKind::kF32: compare<float>(q, what, fn); break;
    case gemm::OutKind::kS32: compare<int32_t>(q, what, fn); break;
  }
}

void check_block(kt::Rng& rng, int64_t K) {
  Problem q;
  draw(rng, q, false, K);
  int64_t m0, m1, n0, n1;
  draw_block(rng, q, &m0, &m1, &n0, &n1);
  compare_kind(q, "qgemm_block " + describe(q, m0, m1, n0, n1), [&](kt::Isa isa, const gemm::QGemmParams& p) {
    KT_CALL(isa, qgemm_block, p, m0, m1, n0, n1);
  });
}

// A random source image for qgemm_block_indirect: each of `nrows` rows addresses its `ntaps` taps
// of seg bytes at random places in it (every tap's bytes inside).
struct IndirectSource {
  std::vector<uint8_t> src;
  std::vector<int64_t> tap_off;
  std::vector<const uint8_t*> rows;
  int64_t seg;
  IndirectSource(kt::Rng& rng, int64_t seg_, int64_t ntaps, int64_t nrows)
      : src(static_cast<size_t>(rng.range(seg_, 4 * seg_ * ntaps + 64))),
        tap_off(static_cast<size_t>(ntaps)),
        rows(static_cast<size_t>(nrows)),
        seg(seg_) {
    rng.fill_int(src);
    const int64_t span = static_cast<int64_t>(src.size()) - seg;
    for (auto& o : tap_off) o = rng.range(0, span / 2);
    for (auto& r : rows) r = src.data() + rng.range(0, span / 2);
  }
  gemm::IndirectA view() const {
    gemm::IndirectA ia;
    ia.rows = rows.data();
    ia.tap_off = tap_off.data();
    ia.ntaps = static_cast<int64_t>(tap_off.size());
    ia.seg = seg;
    return ia;
  }
};

// Scalar qgemm_block on q's dense A against qgemm_block_indirect through ia on the tiers in
// `isas` (the other tiers run scalar qgemm_block too), rows [m0, m1) x columns [n0, n1).
void compare_indirect(Problem& q, const gemm::IndirectA& ia, const std::vector<kt::Isa>& isas, int64_t m0, int64_t m1,
                      int64_t n0, int64_t n1, const std::string& what) {
  compare_kind(q, what, [&](kt::Isa isa, const gemm::QGemmParams& p) {
    if (std::find(isas.begin(), isas.end(), isa) != isas.end()) {
      KT_CALL(isa, qgemm_block_indirect, p, ia, m0, m1, n0, n1);
    } else {
      KT_CALL(kt::Isa::kScalar, qgemm_block, p, m0, m1, n0, n1);
    }
  });
}

}  // namespace

KT_CASE(qgemm_block_random) {
  for (int it = 0; it < 4 * kt::iters(); ++it) check_block(rng, draw_k(rng));
}

// Every K from 1 to 40 (each quad tail), small shapes.
KT_CASE(qgemm_block_k_tails) {
  for (int64_t K = 1; K <= 40; ++K) {
    for (int it = 0; it < std::max(1, kt::iters() / 8); ++it) check_block(rng, K);
  }
}

// Operands all at their extremes (0 / 255 x -128 / 127) with large K: the largest |C|, where a
// 16-bit intermediate would saturate or an int32 correction would overflow.
KT_CASE(qgemm_block_extremes) {
  for (int it = 0; it < kt::iters(); ++it) {
    Problem q;
    const int64_t K = rng.chance(50) ? rng.range(1000, 4100) : rng.range(1, 200);
    draw(rng, q, false, K, static_cast<int>(rng.range(1, 3)));
    q.p.a_zero_point = rng.chance(50) ? 0 : 255;
    q.p.kind = rng.chance(50) ? gemm::OutKind::kS32 : static_cast<gemm::OutKind>(rng.range(0, 1));
    if (q.p.kind != gemm::OutKind::kU8) q.p.add = nullptr;
    compare_kind(q, "qgemm_block extremes " + describe(q, 0, q.M, 0, q.N),
                 [&](kt::Isa isa, const gemm::QGemmParams& p) {
                   KT_CALL(isa, qgemm_block, p, int64_t{0}, q.M, int64_t{0}, q.N);
                 });
  }
}

// qgemm_block_indirect (tiers with qgemm_has_indirect) against scalar qgemm_block on the rows it
// addresses, gathered into a dense A.
KT_CASE(qgemm_block_indirect) {
  std::vector<kt::Isa> ind;
  for (kt::Isa isa : kt::tiers()) {
    if (KT_CALL(isa, qgemm_has_indirect)) ind.push_back(isa);
  }
  if (ind.empty()) return;
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    const int64_t seg = 4 * (rng.chance(60) ? rng.range(1, 8) : rng.range(1, 80));
    const int64_t ntaps = rng.chance(30) ? 1 : rng.range(1, 12);
    Problem q;
    draw(rng, q, true, seg * ntaps);
    int64_t m0, m1, n0, n1;
    draw_block(rng, q, &m0, &m1, &n0, &n1);
    const IndirectSource is(rng, seg, ntaps, m1 - m0);
    const std::vector<int64_t>& tap_off = is.tap_off;
    const std::vector<const uint8_t*>& rows = is.rows;
    // dense copy of the rows (row m at a[m * lda]; rows outside the block stay as drawn)
    for (int64_t m = m0; m < m1; ++m) {
      for (int64_t t = 0; t < ntaps; ++t) {
        std::memcpy(q.a.data() + m * q.lda + t * seg,
                    rows[static_cast<size_t>(m - m0)] + tap_off[static_cast<size_t>(t)], static_cast<size_t>(seg));
      }
    }
    compare_indirect(q, is.view(), ind, m0, m1, n0, n1,
                     kt::fmt("qgemm_block_indirect ntaps=%lld seg=%lld ", (long long)ntaps, (long long)seg) +
                         describe(q, m0, m1, n0, n1));
  }
}

// qgemm_block_indirect with a tap selection and scattered output rows (tiers with
// qgemm_indirect_selects): a random subset of the taps, in random order, each against its own K
// range of B (tap_b), and block row i written to output row out_rows[i] (a permutation of the
// block's rows), or either one absent. With a_zp 0 this is scalar qgemm_block on a dense A whose
// row out_rows[i] holds row i's selected taps at their K ranges and zeros elsewhere.
KT_CASE(qgemm_block_indirect_select) {
  std::vector<kt::Isa> sel;
  for (kt::Isa isa : kt::tiers()) {
    if (KT_CALL(isa, qgemm_indirect_selects)) sel.push_back(isa);
  }
  if (sel.empty()) return;
  auto shuffle = [&](std::vector<int64_t>& v) {
    for (size_t i = v.size(); i > 1; --i)
      std::swap(v[i - 1], v[static_cast<size_t>(rng.range(0, static_cast<int64_t>(i) - 1))]);
  };
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    const int64_t seg = 4 * (rng.chance(60) ? rng.range(1, 8) : rng.range(1, 80));
    const int64_t nall = rng.range(1, 30);
    Problem q;
    draw(rng, q, true, seg * nall);
    q.p.a_zero_point = 0;
    int64_t m0, m1, n0, n1;
    draw_block(rng, q, &m0, &m1, &n0, &n1);
    const bool with_taps = rng.chance(80), with_rows = !with_taps || rng.chance(70);
    std::vector<int64_t> tap_b;
    for (int64_t t = 0; t < nall; ++t) {
      if (!with_taps || rng.chance(60)) tap_b.push_back(t);
    }
    if (tap_b.empty()) tap_b.push_back(rng.range(0, nall - 1));
    if (with_taps) shuffle(tap_b);
    const int64_t ntaps = static_cast<int64_t>(tap_b.size());
    std::vector<int64_t> out_rows;
    for (int64_t m = m0; m < m1; ++m) out_rows.push_back(m);
    if (with_rows) shuffle(out_rows);
    const IndirectSource is(rng, seg, ntaps, m1 - m0);
    const std::vector<int64_t>& tap_off = is.tap_off;
    const std::vector<const uint8_t*>& rows = is.rows;
    for (int64_t i = 0; i < m1 - m0; ++i) {
      uint8_t* arow = q.a.data() + out_rows[static_cast<size_t>(i)] * q.lda;
      std::memset(arow, 0, static_cast<size_t>(seg * nall));
      for (int64_t t = 0; t < ntaps; ++t) {
        std::memcpy(arow + tap_b[static_cast<size_t>(t)] * seg,
                    rows[static_cast<size_t>(i)] + tap_off[static_cast<size_t>(t)], static_cast<size_t>(seg));
      }
    }
    gemm::IndirectA ia = is.view();
    ia.tap_b = with_taps ? tap_b.data() : nullptr;
    ia.out_rows = with_rows ? out_rows.data() : nullptr;
    compare_indirect(q, ia, sel, m0, m1, n0, n1,
                     kt::fmt("qgemm_block_indirect select taps=%lld/%lld seg=%lld rows=%d ", (long long)ntaps,
                             (long long)nall, (long long)seg, (int)with_rows) +
                         describe(q, m0, m1, n0, n1));
  }
}

KT_CASE(minmax_f32) {
  for (int it = 0; it < 4 * kt::iters(); ++it) {
    std::vector<float> x(static_cast<size_t>(rng.range(1, rng.chance(50) ? 40 : 1000)));
    const int mode = static_cast<int>(rng.range(0, 2));
    rng.fill_float(x, 100.0f, mode == 2);
    if (mode == 1) x[static_cast<size_t>(rng.range(0, static_cast<int64_t>(x.size()) - 1))] = NAN;
    std::vector<float> want(2), got(2);
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, minmax_f32, x.data(), static_cast<int64_t>(x.size()), &want[0], &want[1]);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, minmax_f32, x.data(), static_cast<int64_t>(x.size()), &got[0], &got[1]);
      // values compared (NaN with NaN): which zero of -0 / +0 a tier keeps is not specified
      for (int i = 0; i < 2; ++i) {
        const bool ok = (want[i] != want[i] && got[i] != got[i]) || want[i] == got[i];
        if (!ok) {
          kt::fail("minmax_f32 n=%zu mode=%d [%s]: %s scalar %.9g, got %.9g", x.size(), mode, kt::name(isa),
                   i ? "max" : "min", static_cast<double>(want[i]), static_cast<double>(got[i]));
        }
      }
    }
  }
}
