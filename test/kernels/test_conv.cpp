// Convolution kernels (kernels/conv_kernel.h): conv_depthwise on random geometries (1-d to 3-d,
// strides, padding, dilation, channel counts around every vector width, weights in and out of
// int8, the conv2d_add residual, relu bounds) with each tier's packed weights where it has them,
// and conv_im2col (by value: the AVX2 tier writes int16 rows); every tier against scalar.
#include <algorithm>

#include "harness.h"
#include "kernels/conv_kernel.h"

namespace qk = qplugin::kernels;

namespace {

// A random geometry with at least one output pixel; groups = C / icg (icg = 1: depthwise).
qk::ConvGeom draw_geom(kt::Rng& rng, bool depthwise) {
  qk::ConvGeom g{};
  for (;;) {
    const int dims = static_cast<int>(rng.range(1, 3));  // 1-d, 2-d or (rarely) 3-d
    const bool three = dims == 3 && rng.chance(30);
    g.KD = three ? rng.range(1, 3) : 1;
    g.KH = dims >= 2 ? (rng.chance(60) ? 3 : rng.range(1, 5)) : 1;
    g.KW = rng.chance(60) ? 3 : rng.range(1, 5);
    g.SD = three ? rng.range(1, 2) : 1;
    g.SH = dims >= 2 ? (rng.chance(70) ? 1 : rng.range(2, 3)) : 1;
    g.SW = rng.chance(70) ? 1 : rng.range(2, 3);
    g.DD = three ? rng.range(1, 2) : 1;
    g.DH = dims >= 2 && rng.chance(20) ? 2 : 1;
    g.DW = rng.chance(20) ? 2 : 1;
    g.PD = three ? rng.range(0, g.KD - 1) : 0;
    g.PH = dims >= 2 ? rng.range(0, g.KH) : 0;
    g.PW = rng.range(0, g.KW);
    g.D = three ? rng.range(1, 5) : 1;
    g.H = dims >= 2 ? rng.range(1, 14) : 1;
    g.W = rng.range(1, 24);
    auto out = [](int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
      const int64_t span = n + 2 * p - d * (k - 1) - 1;
      return span < 0 ? int64_t{0} : span / s + 1;
    };
    g.OD = out(g.D, g.KD, g.SD, g.PD, g.DD);
    g.OH = out(g.H, g.KH, g.SH, g.PH, g.DH);
    g.OW = out(g.W, g.KW, g.SW, g.PW, g.DW);
    if (g.OD > 0 && g.OH > 0 && g.OW > 0) break;
  }
  if (depthwise) {
    g.C = rng.chance(70) ? rng.range(1, 70) : rng.range(1, 200);
    g.groups = g.C;
    g.icg = g.ocg = 1;
    g.OC = g.C;
  } else {
    g.groups = rng.chance(70) ? 1 : rng.range(2, 4);
    g.icg = rng.chance(50) ? rng.range(1, 8) : rng.range(1, 40);
    g.ocg = rng.range(1, 20);
    g.C = g.groups * g.icg;
    g.OC = g.groups * g.ocg;
  }
  return g;
}

std::string describe(const qk::ConvGeom& g) {
  return kt::fmt(
      "C=%lld DHW=%lldx%lldx%lld K=%lldx%lldx%lld S=%lldx%lldx%lld P=%lldx%lldx%lld Dil=%lldx%lldx%lld "
      "O=%lldx%lldx%lld",
      (long long)g.C, (long long)g.D, (long long)g.H, (long long)g.W, (long long)g.KD, (long long)g.KH, (long long)g.KW,
      (long long)g.SD, (long long)g.SH, (long long)g.SW, (long long)g.PD, (long long)g.PH, (long long)g.PW,
      (long long)g.DD, (long long)g.DH, (long long)g.DW, (long long)g.OD, (long long)g.OH, (long long)g.OW);
}

}  // namespace

KT_CASE(conv_depthwise) {
  for (int it = 0; it < 4 * kt::iters(); ++it) {
    const qk::ConvGeom g = draw_geom(rng, true);
    const int64_t C = g.C;
    const int64_t KR = g.KD * g.KH, taps = KR * g.KW;
    std::vector<uint8_t> x(static_cast<size_t>(g.D * g.H * g.W * C));
    rng.fill_int(x);
    // (w - w_zp) in the low 16 bits, high bits zero; mostly within int8 (the VNNI layout's range)
    const bool wide = rng.chance(30);
    std::vector<int32_t> w(static_cast<size_t>(taps * C));
    const bool extremes = rng.chance(20);
    for (auto& v : w) {
      const int64_t lo = wide ? -255 : -128, hi = wide ? 255 : 127;
      const int64_t d = extremes ? (rng.chance(50) ? lo : hi) : rng.range(lo, hi);
      v = static_cast<int32_t>(static_cast<uint16_t>(static_cast<int16_t>(d)));
    }
    const int64_t taps_max = std::max<int64_t>(1, taps);
    std::vector<float> mult(static_cast<size_t>(C)), bias(static_cast<size_t>(C));
    const float typ = 1.0f / (128.0f * 64.0f * std::sqrt(static_cast<float>(taps_max)));
    for (auto& m : mult) m = typ * rng.uniform(0.05f, 60.0f);
    rng.fill_float(bias, 200.0f, rng.chance(15));
    const int32_t x_zp = static_cast<int32_t>(rng.chance(20) ? 0 : rng.range(0, 255));
    qk::ConvEpilogue ep{};
    ep.mult = mult.data();
    ep.bias = bias.data();
    ep.y_zp = static_cast<int32_t>(rng.range(0, 255));
    ep.qmin = rng.chance(30) ? ep.y_zp : 0;
    ep.qmax = 255;
    const int64_t out_elems = g.OD * g.OH * g.OW * C;
    std::vector<uint8_t> add;
    if (rng.chance(30)) {
      add.resize(static_cast<size_t>(out_elems));
      rng.fill_int(add);
      ep.add = add.data();
      ep.add_zp = static_cast<int32_t>(rng.range(0, 255));
      ep.add_mult = rng.uniform(0.0f, 3.0f);
    }
    const int64_t rows = g.OD * g.OH;
    int64_t r0 = 0, rc = rows;
    if (rng.chance(40)) {
      r0 = rng.range(0, rows - 1);
      rc = rng.range(1, rows - r0);
    }
    std::vector<uint8_t> want(static_cast<size_t>(out_elems)), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, conv_depthwise, x.data(), g, r0, rc, w.data(), nullptr, x_zp, ep, want.data());
    for (kt::Isa isa : kt::tiers()) {
      // this tier's packed weights, where it has a layout for them
      std::vector<int32_t> wpk(static_cast<size_t>(KT_CALL(isa, conv_depthwise_packed_size, KR, g.KW, C)));
      const bool packed = !wpk.empty() && KT_CALL(isa, conv_depthwise_pack, w.data(), KR, g.KW, C, wpk.data());
      kt::poison(got);
      KT_CALL(isa, conv_depthwise, x.data(), g, r0, rc, w.data(), packed ? wpk.data() : nullptr, x_zp, ep, got.data());
      kt::same(want, got, isa,
               kt::fmt("conv_depthwise %s rows=[%lld,+%lld) x_zp=%d y_zp=%d qmin=%d add=%d wide=%d packed=%d",
                       describe(g).c_str(), (long long)r0, (long long)rc, x_zp, ep.y_zp, ep.qmin, ep.add != nullptr,
                       wide, packed));
    }
  }
}

// im2col rows by value (uint8 or the AVX2 tier's int16), columns >= K zero.
KT_CASE(conv_im2col) {
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    const qk::ConvGeom g = draw_geom(rng, false);
    std::vector<uint8_t> x(static_cast<size_t>(g.D * g.H * g.W * g.C));
    rng.fill_int(x);
    const int64_t M = g.OD * g.OH * g.OW;
    const int64_t group = rng.range(0, g.groups - 1);
    const int64_t m0 = rng.range(0, M - 1);
    const int64_t mc = rng.range(1, std::min<int64_t>(M - m0, 40));
    const int32_t x_zp = static_cast<int32_t>(rng.range(0, 255));
    const int64_t K = g.K();
    auto run = [&](kt::Isa isa, std::vector<int32_t>& vals) {
      const int64_t elem = KT_CALL(isa, conv_a_elem_size);
      const int64_t kp = KT_CALL(isa, conv_a_row_elems, K);
      std::vector<uint8_t> a(static_cast<size_t>(mc * kp * elem + 64));
      kt::poison(a);
      KT_CALL(isa, conv_im2col, x.data(), g, group, m0, mc, a.data(), kp, x_zp);
      vals.assign(static_cast<size_t>(mc * kp), 0);
      for (int64_t i = 0; i < mc * kp; ++i) {
        if (elem == 1) {
          vals[static_cast<size_t>(i)] = a[static_cast<size_t>(i)];
        } else {
          int16_t v;
          std::memcpy(&v, a.data() + 2 * i, 2);
          vals[static_cast<size_t>(i)] = v;
        }
      }
    };
    std::vector<int32_t> want, got;
    run(kt::Isa::kScalar, want);
    for (kt::Isa isa : kt::tiers()) {
      run(isa, got);
      kt::same(want, got, isa,
               kt::fmt("conv_im2col %s groups=%lld group=%lld rows=[%lld,+%lld) x_zp=%d", describe(g).c_str(),
                       (long long)g.groups, (long long)group, (long long)m0, (long long)mc, x_zp));
    }
  }
}
