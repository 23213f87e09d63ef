// Transposed-convolution kernels (kernels/conv_transpose_kernel.h): the col2im scatter-add of one
// input row on random 1-d geometries and output-column chunks (as cpu/conv_transpose.cpp cuts
// them), int32 wrap-around included, and the row requantize; every tier against scalar.
#include <algorithm>

#include "harness.h"
#include "kernels/conv_transpose_kernel.h"

namespace qk = qplugin::kernels;

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

KT_CASE(col2im_add_row_s32) {
  for (int it = 0; it < 2 * kt::iters(); ++it) {
    const int64_t KW = rng.chance(50) ? rng.range(1, 3) : rng.range(1, 7);
    const int64_t SW = rng.range(1, 3), DW = rng.chance(25) ? rng.range(2, 3) : 1;
    const int64_t PW = rng.range(0, DW * (KW - 1));
    const int64_t W = rng.range(1, 24);
    const int64_t out_pad = rng.range(0, std::max(SW, DW) - 1);
    const int64_t OW = (W - 1) * SW - 2 * PW + DW * (KW - 1) + out_pad + 1;
    if (OW <= 0) continue;
    const int64_t G = rng.chance(70) ? 1 : rng.range(2, 3);
    const int64_t OCg = rng.chance(60) ? rng.range(1, 40) : rng.range(1, 150);
    const int64_t OC = G * OCg, ncols = KW * OCg;
    // an output-column chunk [ow0, ow1) and the input columns reaching it
    const int64_t owc = rng.chance(50) ? OW : rng.range(1, OW);
    const int64_t ow0 = rng.range(0, OW - 1) / owc * owc, ow1 = std::min(OW, ow0 + owc);
    const int64_t iw0 = std::max<int64_t>(0, floor_div(ow0 + PW - (KW - 1) * DW + SW - 1, SW));
    const int64_t iw1 = std::min<int64_t>(W, floor_div(ow1 - 1 + PW, SW) + 1);
    const int64_t m = std::max<int64_t>(0, iw1 - iw0);
    const int64_t g = rng.range(0, G - 1);
    qk::Col2ImRow r{m, ncols, iw0, KW, SW, PW, DW, ow0, ow1, OCg, OC};
    std::vector<int32_t> c(static_cast<size_t>(std::max<int64_t>(1, m * ncols)));
    if (rng.chance(30)) {
      rng.fill_int(c);  // full range: the adds wrap
    } else {
      rng.fill_int(c, -(1 << 20), 1 << 20);
    }
    std::vector<int32_t> acc0(static_cast<size_t>((ow1 - ow0) * OC));
    if (rng.chance(50)) {
      rng.fill_int(acc0);
    }  // else zero, as the caller starts a chunk
    const std::string what = kt::fmt(
        "col2im_add_row_s32 W=%lld KW=%lld SW=%lld PW=%lld DW=%lld OCg=%lld G=%lld g=%lld "
        "ow=[%lld,%lld) iw0=%lld m=%lld",
        (long long)W, (long long)KW, (long long)SW, (long long)PW, (long long)DW, (long long)OCg, (long long)G,
        (long long)g, (long long)ow0, (long long)ow1, (long long)iw0, (long long)m);
    std::vector<int32_t> want = acc0, got;
    KT_CALL(kt::Isa::kScalar, col2im_add_row_s32, c.data(), r, want.data() + g * OCg);
    for (kt::Isa isa : kt::tiers()) {
      got = acc0;
      KT_CALL(isa, col2im_add_row_s32, c.data(), r, got.data() + g * OCg);
      kt::same(want, got, isa, what);
    }
  }
}

KT_CASE(requant_rows_s32) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t pixels = rng.chance(70) ? rng.range(0, 6) : rng.range(0, 40);
    const int64_t oc = rng.chance(70) ? rng.range(1, 70) : rng.range(1, 300);
    std::vector<int32_t> acc(static_cast<size_t>(pixels * oc));
    const bool wide = rng.chance(20);
    if (wide) {
      rng.fill_int(acc);
    } else {
      rng.fill_int(acc, -(1 << 18), 1 << 18);
    }
    std::vector<float> mult(static_cast<size_t>(oc)), bias(static_cast<size_t>(oc));
    for (auto& v : mult) v = rng.chance(5) ? 0.0f : rng.uniform(1e-6f, 2e-3f);
    rng.fill_float(bias, 300.0f, rng.chance(20));  // a float bias / y_scale: specials too
    const int32_t y_zp = static_cast<int32_t>(rng.range(0, 255));
    std::vector<uint8_t> want(static_cast<size_t>(pixels * oc)), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, requant_rows_s32, acc.data(), pixels, oc, mult.data(), bias.data(), y_zp, 0, 255,
            want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, requant_rows_s32, acc.data(), pixels, oc, mult.data(), bias.data(), y_zp, 0, 255, got.data());
      kt::same(want, got, isa,
               kt::fmt("requant_rows_s32 pixels=%lld oc=%lld y_zp=%d wide=%d", (long long)pixels, (long long)oc, y_zp,
                       wide));
    }
  }
}
