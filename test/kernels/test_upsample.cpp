// Upsampling kernels (kernels/upsample_kernel.h): nearest (bytes and int32 planes, channels-last
// images of any pixel size, output row ranges) and bilinear (u8 / s8, both layouts, align_corners
// and explicit scales, up- and downsampling) on source indices and weights built with torch's
// rules as cpu/upsample.cpp builds them; every tier against scalar.
#include <algorithm>
#include <cmath>

#include "harness.h"
#include "kernels/upsample_kernel.h"

namespace qk = qplugin::kernels;

namespace {

// torch's nearest rule: src = min(floor(dst * (in / out)), in - 1) in float.
std::vector<int64_t> nearest_src(int64_t in, int64_t out) {
  std::vector<int64_t> idx(static_cast<size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    idx[static_cast<size_t>(o)] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
  }
  return idx;
}

// Bilinear taps from torch's area_pixel source index in float: lower / upper index and weights.
struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<float> wlo, whi;
};

Taps bilinear(int64_t in, int64_t out, bool align_corners, double scale) {
  float s;
  if (align_corners) {
    s = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  } else {
    s = scale > 0 ? static_cast<float>(1.0 / scale) : static_cast<float>(in) / static_cast<float>(out);
  }
  Taps t;
  for (int64_t o = 0; o < out; ++o) {
    float r = align_corners ? s * static_cast<float>(o) : s * (static_cast<float>(o) + 0.5f) - 0.5f;
    if (!align_corners && r < 0.0f) r = 0.0f;
    const bool past_end = !(r < static_cast<float>(in));
    const int64_t i = past_end ? in - 1 : std::min(static_cast<int64_t>(r), in - 1);
    t.lo.push_back(i);
    t.hi.push_back(i < in - 1 ? i + 1 : i);
    t.whi.push_back(past_end ? 0.0f : r - static_cast<float>(i));
    t.wlo.push_back(1.0f - t.whi.back());
  }
  return t;
}

int64_t out_len(kt::Rng& rng, int64_t in) {
  switch (rng.range(0, 3)) {
    case 0: return 2 * in;
    case 1: return in;
    default: return rng.range(1, 3 * in + 4);
  }
}

// An explicit scale (scales_h / scales_w), or none (0): mostly out / in, sometimes another value.
double draw_scale(kt::Rng& rng, int64_t in, int64_t out) {
  if (rng.chance(60)) return 0.0;
  if (rng.chance(50)) return static_cast<double>(out) / static_cast<double>(in);
  return rng.uniform(0.2f, 4.0f);
}

}  // namespace

KT_CASE(upsample_nearest2d_nchw) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t H = rng.range(1, 12), W = rng.range(1, rng.chance(70) ? 40 : 100);
    const int64_t OH = out_len(rng, H), OW = out_len(rng, W);
    const int64_t planes = rng.range(1, 4);
    const auto hidx = nearest_src(H, OH), widx = nearest_src(W, OW);
    const qk::Upsample2dGeom g{H, W, OH, OW, hidx.data(), widx.data()};
    const std::string geo = kt::fmt("planes=%lld H=%lld W=%lld OH=%lld OW=%lld", (long long)planes, (long long)H,
                                    (long long)W, (long long)OH, (long long)OW);
    if (rng.chance(50)) {
      std::vector<uint8_t> x(static_cast<size_t>(planes * H * W));
      rng.fill_int(x);
      std::vector<uint8_t> want(static_cast<size_t>(planes * OH * OW)), got(want.size());
      kt::poison(want);
      KT_CALL(kt::Isa::kScalar, upsample_nearest2d_nchw_u8, x.data(), want.data(), planes, g);
      for (kt::Isa isa : kt::tiers()) {
        kt::poison(got);
        KT_CALL(isa, upsample_nearest2d_nchw_u8, x.data(), got.data(), planes, g);
        kt::same(want, got, isa, "upsample_nearest2d_nchw_u8 " + geo);
      }
    } else {
      std::vector<int32_t> x(static_cast<size_t>(planes * H * W));
      rng.fill_int(x);
      std::vector<int32_t> want(static_cast<size_t>(planes * OH * OW)), got(want.size());
      kt::poison(want);
      KT_CALL(kt::Isa::kScalar, upsample_nearest2d_nchw_s32, x.data(), want.data(), planes, g);
      for (kt::Isa isa : kt::tiers()) {
        kt::poison(got);
        KT_CALL(isa, upsample_nearest2d_nchw_s32, x.data(), got.data(), planes, g);
        kt::same(want, got, isa, "upsample_nearest2d_nchw_s32 " + geo);
      }
    }
  }
}

KT_CASE(upsample_nearest2d_nhwc) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t H = rng.range(1, 10), W = rng.range(1, 30);
    const int64_t OH = out_len(rng, H), OW = out_len(rng, W);
    // pixel bytes: C channels of 1 or 4 bytes
    const int64_t C = rng.chance(70) ? rng.range(1, 70) : rng.range(1, 200);
    const int64_t row_bytes = C * (rng.chance(25) ? 4 : 1);
    const auto hidx = nearest_src(H, OH), widx = nearest_src(W, OW);
    const qk::Upsample2dGeom g{H, W, OH, OW, hidx.data(), widx.data()};
    int64_t oh0 = 0, oh1 = OH;
    if (rng.chance(40)) {
      oh0 = rng.range(0, OH - 1);
      oh1 = rng.range(oh0 + 1, OH);
    }
    std::vector<uint8_t> x(static_cast<size_t>(H * W * row_bytes));
    rng.fill_int(x);
    std::vector<uint8_t> want(static_cast<size_t>(OH * OW * row_bytes)), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, upsample_nearest2d_nhwc, x.data(), want.data(), row_bytes, oh0, oh1, g);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, upsample_nearest2d_nhwc, x.data(), got.data(), row_bytes, oh0, oh1, g);
      kt::same(
          want, got, isa,
          kt::fmt("upsample_nearest2d_nhwc H=%lld W=%lld OH=%lld OW=%lld pixel=%lld rows=[%lld,%lld)", (long long)H,
                  (long long)W, (long long)OH, (long long)OW, (long long)row_bytes, (long long)oh0, (long long)oh1));
    }
  }
}

namespace {

template <class T>
void check_bilinear(kt::Rng& rng, bool nhwc) {
  const int64_t H = rng.range(1, 12), W = rng.range(1, rng.chance(70) ? 40 : 90);
  const int64_t OH = out_len(rng, H), OW = out_len(rng, W);
  const bool ac = rng.chance(30);
  const double sh = ac ? 0.0 : draw_scale(rng, H, OH), sw = ac ? 0.0 : draw_scale(rng, W, OW);
  const Taps th = bilinear(H, OH, ac, sh), tw = bilinear(W, OW, ac, sw);
  const qk::Bilinear2dGeom g{H,
                             W,
                             OH,
                             OW,
                             th.lo.data(),
                             th.hi.data(),
                             th.wlo.data(),
                             th.whi.data(),
                             tw.lo.data(),
                             tw.hi.data(),
                             tw.wlo.data(),
                             tw.whi.data()};
  const int64_t C = nhwc ? (rng.chance(70) ? rng.range(1, 70) : rng.range(1, 200)) : rng.range(1, 4);
  int64_t oh0 = 0, oh1 = OH;
  if (nhwc && rng.chance(40)) {
    oh0 = rng.range(0, OH - 1);
    oh1 = rng.range(oh0 + 1, OH);
  }
  std::vector<T> x(static_cast<size_t>(C * H * W));
  rng.fill_int(x);
  std::vector<T> want(static_cast<size_t>(C * OH * OW)), got(want.size());
  auto call = [&](kt::Isa isa, T* y) {
    if constexpr (std::is_same_v<T, uint8_t>) {
      if (nhwc) {
        KT_CALL(isa, upsample_bilinear2d_nhwc_u8, x.data(), y, C, oh0, oh1, g);
      } else {
        KT_CALL(isa, upsample_bilinear2d_nchw_u8, x.data(), y, C, g);
      }
    } else {
      if (nhwc) {
        KT_CALL(isa, upsample_bilinear2d_nhwc_s8, x.data(), y, C, oh0, oh1, g);
      } else {
        KT_CALL(isa, upsample_bilinear2d_nchw_s8, x.data(), y, C, g);
      }
    }
  };
  kt::poison(want);
  call(kt::Isa::kScalar, want.data());
  for (kt::Isa isa : kt::tiers()) {
    kt::poison(got);
    call(isa, got.data());
    kt::same(want, got, isa,
             kt::fmt("upsample_bilinear2d_%s_%s H=%lld W=%lld OH=%lld OW=%lld C=%lld align_corners=%d scales=(%g,%g) "
                     "rows=[%lld,%lld)",
                     nhwc ? "nhwc" : "nchw", std::is_same_v<T, uint8_t> ? "u8" : "s8", (long long)H, (long long)W,
                     (long long)OH, (long long)OW, (long long)C, ac, sh, sw, (long long)oh0, (long long)oh1));
  }
}

}  // namespace

KT_CASE(upsample_bilinear2d_nchw) {
  for (int it = 0; it < kt::iters(); ++it) {
    if (rng.chance(50)) {
      check_bilinear<uint8_t>(rng, false);
    } else {
      check_bilinear<int8_t>(rng, false);
    }
  }
}

KT_CASE(upsample_bilinear2d_nhwc) {
  for (int it = 0; it < kt::iters(); ++it) {
    if (rng.chance(50)) {
      check_bilinear<uint8_t>(rng, true);
    } else {
      check_bilinear<int8_t>(rng, true);
    }
  }
}
