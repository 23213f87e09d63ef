// pooling kernels (kernels/pool_kernel.h): every tier against scalar. Max pooling with random
// windows (the 3x3 / 2 / pad 1 stem shape drawn often), average and adaptive average pooling in
// 2-D and 3-D, NCHW planes and NHWC blocks of rows and channels.
#include <algorithm>

#include "harness.h"
#include "kernels/pool_kernel.h"

namespace qk = qplugin::kernels;

namespace {

std::string geom_str(const qk::MaxPool2dGeom& g) {
  return kt::fmt("H=%lld W=%lld OH=%lld OW=%lld k=%lldx%lld s=%lldx%lld p=%lldx%lld d=%lldx%lld", (long long)g.H,
                 (long long)g.W, (long long)g.OH, (long long)g.OW, (long long)g.kH, (long long)g.kW, (long long)g.sH,
                 (long long)g.sW, (long long)g.pH, (long long)g.pW, (long long)g.dH, (long long)g.dW);
}

// A max-pool geometry with OH, OW >= 1 (torch's floor / ceil output size).
qk::MaxPool2dGeom max_geom(kt::Rng& rng) {
  qk::MaxPool2dGeom g{};
  for (;;) {
    if (rng.chance(35)) {  // the stem: 3 taps, stride 2, pad 1 (even W takes the Stem2 path)
      g.H = rng.range(1, 24);
      g.W = rng.chance(70) ? 2 * rng.range(9, 60) : rng.range(1, 80);
      g.kH = g.kW = 3;
      g.sH = g.sW = 2;
      g.pH = g.pW = 1;
      g.dH = g.dW = 1;
    } else {
      g.H = rng.range(1, 30);
      g.W = rng.range(1, 90);
      g.kH = rng.range(1, 4);
      g.kW = rng.range(1, 5);
      g.sH = rng.range(1, 3);
      g.sW = rng.range(1, 3);
      g.pH = rng.range(0, g.kH / 2);
      g.pW = rng.range(0, g.kW / 2);
      g.dH = rng.chance(80) ? 1 : 2;
      g.dW = rng.chance(80) ? 1 : 2;
    }
    const bool ceil = rng.chance(20);
    auto out = [&](int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
      const int64_t span = n + 2 * p - d * (k - 1) - 1;
      if (span < 0) return int64_t{0};
      int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
      if (ceil && (o - 1) * s >= n + p) --o;  // the last window starts inside the input or left padding
      return o;
    };
    g.OH = out(g.H, g.kH, g.sH, g.pH, g.dH);
    g.OW = out(g.W, g.kW, g.sW, g.pW, g.dW);
    if (g.OH >= 1 && g.OW >= 1) return g;
  }
}

template <class T>
void check_max_nchw(kt::Rng& rng, const char* op,
                    void (*call)(kt::Isa, const T*, T*, int64_t, const qk::MaxPool2dGeom&)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const qk::MaxPool2dGeom g = max_geom(rng);
    const int64_t planes = rng.range(1, 3);
    std::vector<T> in(planes * g.H * g.W);
    rng.fill_int(in);
    std::vector<T> want(planes * g.OH * g.OW), got(want.size());
    kt::poison(want);
    call(kt::Isa::kScalar, in.data(), want.data(), planes, g);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, in.data(), got.data(), planes, g);
      kt::same(want, got, isa, kt::fmt("%s planes=%lld %s", op, (long long)planes, geom_str(g).c_str()));
    }
  }
}

template <class T>
void check_max_nhwc(kt::Rng& rng, const char* op,
                    void (*call)(kt::Isa, const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t,
                                 const qk::MaxPool2dGeom&)) {
  for (int it = 0; it < kt::iters(); ++it) {
    qk::MaxPool2dGeom g = max_geom(rng);
    g.H = std::min<int64_t>(g.H, 12);
    g.W = std::min<int64_t>(g.W, 24);
    if (g.OH > g.H + 2 * g.pH || g.OW > g.W + 2 * g.pW) continue;
    // recompute the output size for the shrunk input (floor mode)
    auto out = [](int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
      const int64_t span = n + 2 * p - d * (k - 1) - 1;
      return span < 0 ? int64_t{0} : span / s + 1;
    };
    g.OH = out(g.H, g.kH, g.sH, g.pH, g.dH);
    g.OW = out(g.W, g.kW, g.sW, g.pW, g.dW);
    if (g.OH < 1 || g.OW < 1) continue;
    const int64_t C = rng.chance(50) ? rng.range(1, 40) : rng.range(1, 300);
    const int64_t c0 = rng.chance(60) ? 0 : rng.range(0, C - 1), c1 = rng.chance(60) ? C : rng.range(c0 + 1, C);
    const int64_t oh0 = rng.chance(60) ? 0 : rng.range(0, g.OH - 1),
                  oh1 = rng.chance(60) ? g.OH : rng.range(oh0 + 1, g.OH);
    std::vector<T> in(g.H * g.W * C);
    rng.fill_int(in);
    std::vector<T> want(g.OH * g.OW * C), got(want.size());
    kt::poison(want);
    call(kt::Isa::kScalar, in.data(), want.data(), C, c0, c1, oh0, oh1, g);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, in.data(), got.data(), C, c0, c1, oh0, oh1, g);
      kt::same(want, got, isa,
               kt::fmt("%s C=%lld c=[%lld,%lld) oh=[%lld,%lld) %s", op, (long long)C, (long long)c0, (long long)c1,
                       (long long)oh0, (long long)oh1, geom_str(g).c_str()));
    }
  }
}

// Average-pooling tables: every output position its own window class (p = (od * OH + oh) * OW + ow),
// windows from avg_pool (kernel, stride, pad, count_include_pad) or adaptive pooling, per dim.
struct AvgProblem {
  std::vector<int64_t> ds, de, hs, he, ws, we, off, div;
  std::vector<int32_t> dcls, rcls, ccls;
  std::vector<float> mult;
  qk::AvgPool2dGeom g{};
  std::string what;
};

struct Win {
  std::vector<int64_t> s, e, padded;
};
Win windows(kt::Rng& rng, int64_t n, int64_t* O, std::string* what) {
  Win w;
  if (rng.chance(35)) {  // adaptive
    *O = rng.range(1, n + 2);
    for (int64_t o = 0; o < *O; ++o) {
      w.s.push_back(o * n / *O);
      w.e.push_back(std::min(((o + 1) * n + *O - 1) / *O, n));
      w.padded.push_back(w.e.back() - w.s.back());
    }
    *what += kt::fmt(" adaptive(%lld->%lld)", (long long)n, (long long)*O);
    return w;
  }
  const int64_t k = rng.range(1, std::min<int64_t>(n + 1, 5)), s = rng.range(1, 3), p = rng.range(0, k / 2);
  *O = (n + 2 * p - k) / s + 1;
  if (*O < 1) *O = 1;
  for (int64_t o = 0; o < *O; ++o) {
    const int64_t st = o * s - p, en = std::min(st + k, n + p);
    w.s.push_back(std::max<int64_t>(st, 0));
    w.e.push_back(std::min(en, n));
    w.padded.push_back(en - st);
  }
  *what += kt::fmt(" avg(n=%lld k=%lld s=%lld p=%lld)", (long long)n, (long long)k, (long long)s, (long long)p);
  return w;
}

template <class T>
AvgProblem avg_problem(kt::Rng& rng, bool three_d, int64_t hmax, int64_t wmax) {
  AvgProblem a;
  int64_t D = 1, OD = 1, OH, OW;
  const int64_t H = rng.range(1, hmax), W = rng.range(1, wmax);
  Win dw;
  if (three_d) {
    D = rng.range(1, 4);
    dw = windows(rng, D, &OD, &a.what);
  } else {
    dw.s = {0};
    dw.e = {1};
    dw.padded = {1};
  }
  const Win hw = windows(rng, H, &OH, &a.what), ww = windows(rng, W, &OW, &a.what);
  const int32_t zp = static_cast<int32_t>(rng.range(kt::qmin<T>() / 2, kt::qmax<T>() / 2));
  const bool include_pad = rng.chance(50);
  const int64_t override_div = rng.chance(15) ? rng.range(1, 20) : 0;
  for (int64_t od = 0; od < OD; ++od) {
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t size = (dw.e[od] - dw.s[od]) * (hw.e[oh] - hw.s[oh]) * (ww.e[ow] - ww.s[ow]);
        const int64_t pooled = dw.padded[od] * hw.padded[oh] * ww.padded[ow];
        int64_t div = override_div ? override_div : (include_pad ? pooled : size);
        if (div == 0) div = 1;
        a.off.push_back(size * zp);
        a.div.push_back(div);
        a.mult.push_back(static_cast<float>(1.0 / static_cast<double>(div)));
      }
    }
  }
  for (int64_t o = 0; o < OD; ++o) a.dcls.push_back(static_cast<int32_t>(o));
  for (int64_t o = 0; o < OH; ++o) a.rcls.push_back(static_cast<int32_t>(o));
  for (int64_t o = 0; o < OW; ++o) a.ccls.push_back(static_cast<int32_t>(o));
  a.ds = dw.s;
  a.de = dw.e;
  a.hs = hw.s;
  a.he = hw.e;
  a.ws = ww.s;
  a.we = ww.e;
  qk::AvgPool2dGeom& g = a.g;
  g.H = H;
  g.W = W;
  g.OH = OH;
  g.OW = OW;
  g.hs = a.hs.data();
  g.he = a.he.data();
  g.ws = a.ws.data();
  g.we = a.we.data();
  g.rcls = a.rcls.data();
  g.ccls = a.ccls.data();
  g.ncc = OW;
  g.off = a.off.data();
  g.mult = a.mult.data();
  g.zadd = static_cast<float>(zp);
  g.qmin = static_cast<float>(kt::qmin<T>());
  g.qmax = static_cast<float>(kt::qmax<T>());
  g.div = a.div.data();
  g.zadd_d = static_cast<double>(zp);
  if (three_d) {
    g.D = D;
    g.OD = OD;
    g.ds = a.ds.data();
    g.de = a.de.data();
    g.dcls = a.dcls.data();
    g.nrc = OH;
  }
  a.what += kt::fmt(" zp=%d include_pad=%d div_override=%lld", zp, include_pad, (long long)override_div);
  return a;
}

template <class T>
void check_avg_nchw(kt::Rng& rng, const char* op,
                    void (*call)(kt::Isa, const T*, T*, int64_t, const qk::AvgPool2dGeom&)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const bool three_d = rng.chance(25);
    const AvgProblem a = avg_problem<T>(rng, three_d, 24, 70);
    const qk::AvgPool2dGeom& g = a.g;
    const int64_t planes = rng.range(1, 3);
    std::vector<T> in(planes * g.D * g.H * g.W);
    rng.fill_int(in);
    std::vector<T> want(planes * g.OD * g.OH * g.OW), got(want.size());
    kt::poison(want);
    call(kt::Isa::kScalar, in.data(), want.data(), planes, g);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, in.data(), got.data(), planes, g);
      kt::same(want, got, isa, kt::fmt("%s planes=%lld%s", op, (long long)planes, a.what.c_str()));
    }
  }
}

template <class T>
void check_avg_nhwc(kt::Rng& rng, const char* op,
                    void (*call)(kt::Isa, const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t,
                                 const qk::AvgPool2dGeom&)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const bool three_d = rng.chance(25);
    const AvgProblem a = avg_problem<T>(rng, three_d, 10, 16);
    const qk::AvgPool2dGeom& g = a.g;
    const int64_t C = rng.chance(50) ? rng.range(1, 40) : rng.range(1, 200);
    const int64_t rows = g.OD * g.OH;
    const int64_t c0 = rng.chance(60) ? 0 : rng.range(0, C - 1), c1 = rng.chance(60) ? C : rng.range(c0 + 1, C);
    const int64_t r0 = rng.chance(60) ? 0 : rng.range(0, rows - 1),
                  r1 = rng.chance(60) ? rows : rng.range(r0 + 1, rows);
    std::vector<T> in(g.D * g.H * g.W * C);
    rng.fill_int(in);
    std::vector<T> want(rows * g.OW * C), got(want.size());
    kt::poison(want);
    call(kt::Isa::kScalar, in.data(), want.data(), C, c0, c1, r0, r1, g);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, in.data(), got.data(), C, c0, c1, r0, r1, g);
      kt::same(want, got, isa,
               kt::fmt("%s C=%lld c=[%lld,%lld) rows=[%lld,%lld)%s", op, (long long)C, (long long)c0, (long long)c1,
                       (long long)r0, (long long)r1, a.what.c_str()));
    }
  }
}

}  // namespace

#define KT_MAX_NCHW(fn, T)                                                                                         \
  KT_CASE(fn) {                                                                                                    \
    check_max_nchw<T>(rng, #fn, [](kt::Isa isa, const T* in, T* out, int64_t planes, const qk::MaxPool2dGeom& g) { \
      KT_CALL(isa, fn, in, out, planes, g);                                                                        \
    });                                                                                                            \
  }
#define KT_MAX_NHWC(fn, T)                                                                                            \
  KT_CASE(fn) {                                                                                                       \
    check_max_nhwc<T>(rng, #fn,                                                                                       \
                      [](kt::Isa isa, const T* in, T* out, int64_t C, int64_t c0, int64_t c1, int64_t r0, int64_t r1, \
                         const qk::MaxPool2dGeom& g) {                                                                \
                        KT_CALL(isa, fn, in, out, C, c0, c1, r0, r1, g);                                              \
                      });                                                                                             \
  }
#define KT_AVG_NCHW(fn, T)                                                                                         \
  KT_CASE(fn) {                                                                                                    \
    check_avg_nchw<T>(rng, #fn, [](kt::Isa isa, const T* in, T* out, int64_t planes, const qk::AvgPool2dGeom& g) { \
      KT_CALL(isa, fn, in, out, planes, g);                                                                        \
    });                                                                                                            \
  }
#define KT_AVG_NHWC(fn, T)                                                                                            \
  KT_CASE(fn) {                                                                                                       \
    check_avg_nhwc<T>(rng, #fn,                                                                                       \
                      [](kt::Isa isa, const T* in, T* out, int64_t C, int64_t c0, int64_t c1, int64_t r0, int64_t r1, \
                         const qk::AvgPool2dGeom& g) {                                                                \
                        KT_CALL(isa, fn, in, out, C, c0, c1, r0, r1, g);                                              \
                      });                                                                                             \
  }

KT_MAX_NCHW(max_pool2d_nchw_u8, uint8_t)
KT_MAX_NCHW(max_pool2d_nchw_s8, int8_t)
KT_MAX_NCHW(max_pool2d_nchw_s32, int32_t)
KT_MAX_NHWC(max_pool2d_nhwc_u8, uint8_t)
KT_MAX_NHWC(max_pool2d_nhwc_s8, int8_t)
KT_MAX_NHWC(max_pool2d_nhwc_s32, int32_t)
KT_AVG_NCHW(avg_pool2d_nchw_u8, uint8_t)
KT_AVG_NCHW(avg_pool2d_nchw_s8, int8_t)
KT_AVG_NCHW(avg_pool2d_nchw_wide_u8, uint8_t)
KT_AVG_NCHW(avg_pool2d_nchw_wide_s8, int8_t)
KT_AVG_NCHW(avg_pool2d_nchw_s32, int32_t)
KT_AVG_NHWC(avg_pool2d_nhwc_u8, uint8_t)
KT_AVG_NHWC(avg_pool2d_nhwc_s8, int8_t)
KT_AVG_NHWC(avg_pool2d_nhwc_wide_u8, uint8_t)
KT_AVG_NHWC(avg_pool2d_nhwc_wide_s8, int8_t)
KT_AVG_NHWC(avg_pool2d_nhwc_s32, int32_t)
