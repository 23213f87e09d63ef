// Normalization kernels (kernels/norm_kernel.h): layer_norm and group_norm rows (weights folded
// with the output scale as cpu/norm.cpp folds them; constant rows, tiny eps, weights that push a
// row onto the float64 path, row ranges), batch_norm's per-channel affine (both channel layouts
// of cpu/norm.cpp, with and without the fused relu) and prelu; every tier against scalar.
#include <algorithm>
#include <cmath>

#include "harness.h"
#include "kernels/norm_kernel.h"

namespace qk = qplugin::kernels;

namespace {

// weight / out_scale and bias / out_scale in float64 and float32, and the spec over them.
struct Folded {
  std::vector<double> wq, bq;
  std::vector<float> wqf, bqf;
  qk::LayerNormSpec spec{};
};

void fold(kt::Rng& rng, int64_t n, int32_t out_zp, Folded& f) {
  const double in_scale = static_cast<double>(rng.chance(20) ? 1.0f : rng.uniform(1e-3f, 0.5f));
  const double out_scale = rng.chance(20) ? 1.0 / 32.0 : rng.uniform(1e-3f, 0.5f);
  const bool affine = rng.chance(80);
  const bool specials = rng.chance(15);
  const float wscale = rng.chance(10) ? 1.0e4f : 2.0f;  // large: the row's float64 path
  f.wq.assign(static_cast<size_t>(n), 1.0);
  f.bq.assign(static_cast<size_t>(n), 0.0);
  if (affine) {
    std::vector<float> w(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    rng.fill_float(w, wscale, specials);
    rng.fill_float(b, 5.0f, specials);
    for (int64_t j = 0; j < n; ++j) {
      f.wq[static_cast<size_t>(j)] = w[static_cast<size_t>(j)];
      f.bq[static_cast<size_t>(j)] = b[static_cast<size_t>(j)];
    }
  }
  for (auto& v : f.wq) v /= out_scale;
  for (auto& v : f.bq) v /= out_scale;
  f.wqf.assign(f.wq.begin(), f.wq.end());
  f.bqf.assign(f.bq.begin(), f.bq.end());
  double wmax = 0;  // NaN if any weight or bias is NaN
  for (size_t j = 0; j < f.wq.size(); ++j) {
    const double w = std::fabs(f.wq[j]), b = std::fabs(f.bq[j]);
    if (std::isnan(w) || std::isnan(b)) {
      wmax = std::numeric_limits<double>::quiet_NaN();
      break;
    }
    wmax = std::max({wmax, w, b});
  }
  double eps;
  switch (rng.range(0, 3)) {
    case 0: eps = 0.0; break;
    case 1: eps = 1e-12; break;
    default: eps = 1e-5; break;
  }
  f.spec = qk::LayerNormSpec{in_scale, eps, f.wq.data(), f.bq.data(), f.wqf.data(), f.bqf.data(), out_zp, wmax};
}

// Rows of data: uniform, extremes, constant rows (zero variance) or a narrow band.
template <class T>
void fill_rows(kt::Rng& rng, std::vector<T>& x, int64_t m) {
  if (sizeof(T) == 4 && rng.chance(50)) {
    rng.fill_int(x, -3000, 3000);
  } else {
    rng.fill_int(x);
  }
  if (m > 0 && rng.chance(20)) {  // one constant row
    const size_t r = static_cast<size_t>(rng.range(0, static_cast<int64_t>(x.size()) / m - 1));
    const T v = x[r * static_cast<size_t>(m)];
    std::fill(x.begin() + static_cast<int64_t>(r) * m, x.begin() + static_cast<int64_t>(r + 1) * m, v);
  }
}

template <class T>
int32_t draw_zp(kt::Rng& rng) {
  if (sizeof(T) == 4) return static_cast<int32_t>(rng.range(-1000, 1000));
  return static_cast<int32_t>(rng.range(std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

template <class T, class Call>
void check_layer_norm(kt::Rng& rng, const char* op, Call call) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t m = rng.chance(70) ? rng.range(1, 70) : rng.range(1, 700);
    const int64_t rows = rng.range(1, std::max<int64_t>(1, std::min<int64_t>(6, 2000 / m)));
    std::vector<T> x(static_cast<size_t>(rows * m));
    fill_rows(rng, x, m);
    Folded f;
    fold(rng, m, draw_zp<T>(rng), f);
    std::vector<T> want(x.size()), got(x.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data(), want.data(), rows, m, &f.spec);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data(), got.data(), rows, m, &f.spec);
      kt::same(want, got, isa,
               kt::fmt("%s rows=%lld m=%lld in_scale=%a eps=%g out_zp=%d wq_max=%g", op, (long long)rows, (long long)m,
                       f.spec.in_scale, f.spec.eps, f.spec.out_zp, f.spec.wq_max));
    }
  }
}

template <class T, class Call>
void check_group_norm(kt::Rng& rng, const char* op, Call call) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t groups = rng.range(1, 6);
    const int64_t cpg = rng.chance(30) ? 1 : rng.range(1, 8);  // cpg = 1: instance_norm
    const int64_t inner = rng.chance(70) ? rng.range(1, 40) : rng.range(1, 200);
    const int64_t N = rng.range(1, 3);
    const int64_t C = groups * cpg, m = cpg * inner, total_rows = N * groups;
    std::vector<T> x(static_cast<size_t>(total_rows * m));
    fill_rows(rng, x, m);
    Folded f;
    fold(rng, C, draw_zp<T>(rng), f);
    const qk::GroupNormSpec spec{f.spec, groups, cpg, inner};
    int64_t row0 = 0, rows = total_rows;
    if (total_rows > 1 && rng.chance(40)) {
      row0 = rng.range(0, total_rows - 1);
      rows = rng.range(1, total_rows - row0);
    }
    std::vector<T> want(x.size()), got(x.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data() + row0 * m, want.data() + row0 * m, row0, rows, &spec);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data() + row0 * m, got.data() + row0 * m, row0, rows, &spec);
      kt::same(want, got, isa,
               kt::fmt("%s N=%lld groups=%lld cpg=%lld inner=%lld rows=[%lld,+%lld) in_scale=%a eps=%g out_zp=%d "
                       "wq_max=%g",
                       op, (long long)N, (long long)groups, (long long)cpg, (long long)inner, (long long)row0,
                       (long long)rows, f.spec.in_scale, f.spec.eps, f.spec.out_zp, f.spec.wq_max));
    }
  }
}

// The channel layouts of cpu/norm.cpp: channels-last blocks of whole pixels (outer, C, 1), or one
// spatial row of one channel (1, 1, inner); plus a flat run of one shared channel (prelu).
struct Layout {
  int64_t outer, channels, inner;
};

Layout draw_layout(kt::Rng& rng) {
  if (rng.chance(50)) return {rng.range(1, 8), rng.chance(70) ? rng.range(1, 70) : rng.range(1, 200), 1};
  return {1, 1, rng.chance(70) ? rng.range(1, 70) : rng.range(1, 1000)};
}

// batch_norm's A = s * g / out_scale (at most 2^15 in magnitude, the callers' check) and B.
void draw_affine(kt::Rng& rng, int64_t C, int32_t out_zp, std::vector<double>& A, std::vector<double>& B) {
  A.resize(static_cast<size_t>(C));
  B.resize(static_cast<size_t>(C));
  const double amax = rng.chance(20) ? 32768.0 : 4.0;
  for (int64_t c = 0; c < C; ++c) {
    double a = rng.chance(5) ? 0.0 : rng.uniform(-1.0f, 1.0f) * amax;
    if (rng.chance(5)) a = rng.chance(50) ? amax : -amax;
    A[static_cast<size_t>(c)] = a;
    const double b = rng.chance(10) ? static_cast<double>(rng.range(-600, 600)) + 0.5  // exact halves
                                    : rng.uniform(-300.0f, 300.0f) * (rng.chance(10) ? 1.0e4 : 1.0);
    B[static_cast<size_t>(c)] = b + out_zp;
  }
}

template <class T>
void check_channel_affine8(kt::Rng& rng, const char* op,
                           void (*call)(kt::Isa, const T*, T*, int64_t, int64_t, int64_t, const float*, const float*,
                                        int32_t)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const Layout l = draw_layout(rng);
    std::vector<T> x(static_cast<size_t>(l.outer * l.channels * l.inner));
    rng.fill_int(x);
    const int32_t out_zp = draw_zp<T>(rng);
    std::vector<double> A, B;
    draw_affine(rng, l.channels, out_zp, A, B);
    std::vector<float> Af(A.begin(), A.end()), Bf(B.begin(), B.end());
    const int32_t lo = rng.chance(40) ? out_zp : std::numeric_limits<int32_t>::min();
    std::vector<T> want(x.size()), got(x.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data(), want.data(), l.outer, l.channels, l.inner, Af.data(), Bf.data(), lo);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data(), got.data(), l.outer, l.channels, l.inner, Af.data(), Bf.data(), lo);
      kt::same(want, got, isa,
               kt::fmt("%s outer=%lld channels=%lld inner=%lld out_zp=%d lo=%d", op, (long long)l.outer,
                       (long long)l.channels, (long long)l.inner, out_zp, lo));
    }
  }
}

template <class T>
void check_prelu(kt::Rng& rng, const char* op,
                 void (*call)(kt::Isa, const T*, T*, int64_t, int64_t, int64_t, int32_t, float, const float*,
                              int32_t)) {
  for (int it = 0; it < kt::iters(); ++it) {
    Layout l = draw_layout(rng);
    if (rng.chance(25)) l = {1, 1, std::max<int64_t>(1, rng.size(2000))};  // one shared slope over the flat data
    std::vector<T> x(static_cast<size_t>(l.outer * l.channels * l.inner));
    rng.fill_int(x);
    const int32_t zp = draw_zp<T>(rng), out_zp = draw_zp<T>(rng);
    // ap = s / out_scale, an = s * slope / out_scale: at most 2^15 (the callers' check)
    const double s = rng.uniform(1e-3f, 0.5f),
                 out_scale = rng.chance(20) ? s / rng.uniform(1.0f, 32768.0f) : rng.uniform(1e-3f, 0.5f);
    const double steep = std::min(1.0, 32768.0 * out_scale / s);
    const float ap = static_cast<float>(s / out_scale);
    std::vector<float> an(static_cast<size_t>(l.channels));
    for (auto& a : an) {
      const double slope = rng.chance(10) ? 0.0 : rng.chance(10) ? 0.25 : rng.uniform(-2.0f, 2.0f) * steep;
      a = static_cast<float>(s * slope / out_scale);
    }
    std::vector<T> want(x.size()), got(x.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data(), want.data(), l.outer, l.channels, l.inner, zp, ap, an.data(), out_zp);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data(), got.data(), l.outer, l.channels, l.inner, zp, ap, an.data(), out_zp);
      kt::same(want, got, isa,
               kt::fmt("%s outer=%lld channels=%lld inner=%lld zp=%d ap=%a out_zp=%d", op, (long long)l.outer,
                       (long long)l.channels, (long long)l.inner, zp, static_cast<double>(ap), out_zp));
    }
  }
}

}  // namespace

KT_CASE(layer_norm_u8) {
  check_layer_norm<uint8_t>(
      rng, "layer_norm_u8",
      [](kt::Isa isa, const uint8_t* x, uint8_t* y, int64_t r, int64_t m, const qk::LayerNormSpec* s) {
        KT_CALL(isa, layer_norm_u8, x, y, r, m, s);
      });
}

KT_CASE(layer_norm_s8) {
  check_layer_norm<int8_t>(
      rng, "layer_norm_s8",
      [](kt::Isa isa, const int8_t* x, int8_t* y, int64_t r, int64_t m, const qk::LayerNormSpec* s) {
        KT_CALL(isa, layer_norm_s8, x, y, r, m, s);
      });
}

KT_CASE(layer_norm_s32) {
  check_layer_norm<int32_t>(
      rng, "layer_norm_s32",
      [](kt::Isa isa, const int32_t* x, int32_t* y, int64_t r, int64_t m, const qk::LayerNormSpec* s) {
        KT_CALL(isa, layer_norm_s32, x, y, r, m, s);
      });
}

KT_CASE(group_norm_u8) {
  check_group_norm<uint8_t>(
      rng, "group_norm_u8",
      [](kt::Isa isa, const uint8_t* x, uint8_t* y, int64_t r0, int64_t r, const qk::GroupNormSpec* s) {
        KT_CALL(isa, group_norm_u8, x, y, r0, r, s);
      });
}

KT_CASE(group_norm_s8) {
  check_group_norm<int8_t>(
      rng, "group_norm_s8",
      [](kt::Isa isa, const int8_t* x, int8_t* y, int64_t r0, int64_t r, const qk::GroupNormSpec* s) {
        KT_CALL(isa, group_norm_s8, x, y, r0, r, s);
      });
}

KT_CASE(group_norm_s32) {
  check_group_norm<int32_t>(
      rng, "group_norm_s32",
      [](kt::Isa isa, const int32_t* x, int32_t* y, int64_t r0, int64_t r, const qk::GroupNormSpec* s) {
        KT_CALL(isa, group_norm_s32, x, y, r0, r, s);
      });
}

KT_CASE(channel_affine_u8) {
  check_channel_affine8<uint8_t>(rng, "channel_affine_u8",
                                 [](kt::Isa isa, const uint8_t* x, uint8_t* y, int64_t o, int64_t c, int64_t i,
                                    const float* a, const float* b, int32_t lo) {
                                   KT_CALL(isa, channel_affine_u8, x, y, o, c, i, a, b, lo);
                                 });
}

KT_CASE(channel_affine_s8) {
  check_channel_affine8<int8_t>(rng, "channel_affine_s8",
                                [](kt::Isa isa, const int8_t* x, int8_t* y, int64_t o, int64_t c, int64_t i,
                                   const float* a, const float* b, int32_t lo) {
                                  KT_CALL(isa, channel_affine_s8, x, y, o, c, i, a, b, lo);
                                });
}

KT_CASE(channel_affine_s32) {
  for (int it = 0; it < kt::iters(); ++it) {
    const Layout l = draw_layout(rng);
    std::vector<int32_t> x(static_cast<size_t>(l.outer * l.channels * l.inner));
    rng.fill_int(x);
    const int32_t out_zp = draw_zp<int32_t>(rng);
    std::vector<double> A, B;
    draw_affine(rng, l.channels, out_zp, A, B);
    const int32_t lo = rng.chance(40) ? out_zp : std::numeric_limits<int32_t>::min();
    std::vector<int32_t> want(x.size()), got(x.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, channel_affine_s32, x.data(), want.data(), l.outer, l.channels, l.inner, A.data(),
            B.data(), lo);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, channel_affine_s32, x.data(), got.data(), l.outer, l.channels, l.inner, A.data(), B.data(), lo);
      kt::same(want, got, isa,
               kt::fmt("channel_affine_s32 outer=%lld channels=%lld inner=%lld out_zp=%d lo=%d", (long long)l.outer,
                       (long long)l.channels, (long long)l.inner, out_zp, lo));
    }
  }
}

KT_CASE(channel_prelu_u8) {
  check_prelu<uint8_t>(rng, "channel_prelu_u8",
                       [](kt::Isa isa, const uint8_t* x, uint8_t* y, int64_t o, int64_t c, int64_t i, int32_t zp,
                          float ap, const float* an, int32_t oz) {
                         KT_CALL(isa, channel_prelu_u8, x, y, o, c, i, zp, ap, an, oz);
                       });
}

KT_CASE(channel_prelu_s8) {
  check_prelu<int8_t>(rng, "channel_prelu_s8",
                      [](kt::Isa isa, const int8_t* x, int8_t* y, int64_t o, int64_t c, int64_t i, int32_t zp, float ap,
                         const float* an, int32_t oz) {
                        KT_CALL(isa, channel_prelu_s8, x, y, o, c, i, zp, ap, an, oz);
                      });
}
