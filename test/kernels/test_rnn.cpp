// Recurrent pointwise kernels (kernels/rnn_kernel.h): the LSTM and GRU gate steps on random batch
// and hidden sizes, with the strides cpu/rnn.cpp passes and gates of every magnitude (past exp's
// clamp range, +-inf, NaN, -0, exact halves); the in-place c / h and the output row compared
// with scalar on every tier.
#include "harness.h"
#include "kernels/rnn_kernel.h"

namespace {

struct Problem {
  int64_t rows, H, G;
  std::vector<float> gi, gh, c, h;
};

Problem draw(kt::Rng& rng, int64_t G) {
  Problem p;
  p.G = G;
  p.rows = rng.chance(70) ? rng.range(1, 4) : rng.range(1, 12);
  p.H = rng.chance(80) ? rng.range(1, 70) : rng.range(1, 300);
  p.gi.resize(static_cast<size_t>(p.rows * G * p.H));
  p.gh.resize(p.gi.size());
  p.c.resize(static_cast<size_t>(p.rows * p.H));
  p.h.resize(p.c.size());
  const bool specials = rng.chance(50);
  const float scale = rng.chance(50) ? 4.0f : 120.0f;  // inside and well past exp's [-87, 88]
  rng.fill_float(p.gi, scale, specials);
  rng.fill_float(p.gh, scale, specials);
  rng.fill_float(p.c, rng.chance(50) ? 2.0f : 50.0f, specials);
  rng.fill_float(p.h, 1.0f, specials);
  return p;
}

}  // namespace

KT_CASE(lstm_pointwise) {
  for (int it = 0; it < kt::iters(); ++it) {
    const Problem p = draw(rng, 4);
    const int64_t GH = p.G * p.H;
    std::vector<float> c_want = p.c, h_want = p.h, o_want(p.c.size()), c_got, h_got, o_got(p.c.size());
    kt::poison(o_want);
    KT_CALL(kt::Isa::kScalar, lstm_pointwise, p.gi.data(), GH, p.gh.data(), p.rows, p.H, c_want.data(), h_want.data(),
            o_want.data(), p.H);
    for (kt::Isa isa : kt::tiers()) {
      c_got = p.c;
      h_got = p.h;
      kt::poison(o_got);
      KT_CALL(isa, lstm_pointwise, p.gi.data(), GH, p.gh.data(), p.rows, p.H, c_got.data(), h_got.data(), o_got.data(),
              p.H);
      const std::string what = kt::fmt("lstm_pointwise rows=%lld H=%lld", (long long)p.rows, (long long)p.H);
      kt::same(c_want, c_got, isa, what + " (c)") && kt::same(h_want, h_got, isa, what + " (h)") &&
          kt::same(o_want, o_got, isa, what + " (out)");
    }
  }
}

KT_CASE(gru_pointwise) {
  for (int it = 0; it < kt::iters(); ++it) {
    const Problem p = draw(rng, 3);
    const int64_t GH = p.G * p.H;
    std::vector<float> h_want = p.h, o_want(p.h.size()), h_got, o_got(p.h.size());
    kt::poison(o_want);
    KT_CALL(kt::Isa::kScalar, gru_pointwise, p.gi.data(), GH, p.gh.data(), p.rows, p.H, h_want.data(), o_want.data(),
            p.H);
    for (kt::Isa isa : kt::tiers()) {
      h_got = p.h;
      kt::poison(o_got);
      KT_CALL(isa, gru_pointwise, p.gi.data(), GH, p.gh.data(), p.rows, p.H, h_got.data(), o_got.data(), p.H);
      const std::string what = kt::fmt("gru_pointwise rows=%lld H=%lld", (long long)p.rows, (long long)p.H);
      kt::same(h_want, h_got, isa, what + " (h)") && kt::same(o_want, o_got, isa, what + " (out)");
    }
  }
}

// Many steps on the same state (as a sequence runs): differences would compound.
KT_CASE(lstm_sequence) {
  for (int it = 0; it < kt::iters() / 4 + 1; ++it) {
    Problem p = draw(rng, 4);
    const int64_t GH = p.G * p.H;
    std::vector<float> c_want = p.c, h_want = p.h, o(p.c.size());
    std::vector<std::vector<float>> c_got(kt::tiers().size(), p.c), h_got(kt::tiers().size(), p.h);
    for (int step = 0; step < 8; ++step) {
      rng.fill_float(p.gi, 4.0f, false);
      KT_CALL(kt::Isa::kScalar, lstm_pointwise, p.gi.data(), GH, p.gh.data(), p.rows, p.H, c_want.data(), h_want.data(),
              o.data(), p.H);
      for (size_t t = 0; t < kt::tiers().size(); ++t) {
        KT_CALL(kt::tiers()[t], lstm_pointwise, p.gi.data(), GH, p.gh.data(), p.rows, p.H, c_got[t].data(),
                h_got[t].data(), o.data(), p.H);
      }
    }
    for (size_t t = 0; t < kt::tiers().size(); ++t) {
      const std::string what = kt::fmt("lstm_sequence rows=%lld H=%lld steps=8", (long long)p.rows, (long long)p.H);
      kt::same(c_want, c_got[t], kt::tiers()[t], what + " (c)") &&
          kt::same(h_want, h_got[t], kt::tiers()[t], what + " (h)");
    }
  }
}
