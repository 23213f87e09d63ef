// quantize / dequantize kernels (kernels/quantize_kernel.h): every tier against scalar.
#include "harness.h"
#include "kernels/quantize_kernel.h"

namespace qk = qplugin::kernels;

namespace {

// One random per-tensor quantize problem: values, inverse scale and zero point.
struct QProblem {
  std::vector<float> x;
  float inv_scale;
  int32_t zp;
};

QProblem draw(kt::Rng& rng, int32_t zlo, int32_t zhi) {
  QProblem p;
  p.x.resize(rng.size(1000));
  rng.fill_float(p.x, rng.chance(50) ? 10.0f : 1.0e4f);
  p.inv_scale = rng.chance(10) ? 1.0f : 1.0f / rng.uniform(1e-3f, 2.0f);
  p.zp = static_cast<int32_t>(rng.range(zlo, zhi));
  return p;
}

template <class T, class Fn>
void check_quantize(kt::Rng& rng, const char* op, int32_t zlo, int32_t zhi, Fn call) {
  for (int it = 0; it < kt::iters(); ++it) {
    const QProblem p = draw(rng, zlo, zhi);
    std::vector<T> want(p.x.size()), got(p.x.size());
    kt::poison(want);
    call(kt::Isa::kScalar, p, want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, p, got.data());
      kt::same(want, got, isa, kt::fmt("%s n=%zu inv_scale=%a zp=%d", op, p.x.size(), p.inv_scale, p.zp));
    }
  }
}

template <class Q>
void check_dequantize(kt::Rng& rng, const char* op,
                      void (*call)(kt::Isa, const Q*, float*, int64_t, float, int32_t, bool)) {
  for (int it = 0; it < kt::iters(); ++it) {
    std::vector<Q> q(rng.size(1000));
    rng.fill_int(q);
    const float scale = rng.uniform(1e-4f, 3.0f);
    const int32_t zp = static_cast<int32_t>(rng.range(-128, 255));
    const bool stream = rng.chance(30);
    std::vector<float> want(q.size()), got(q.size());
    kt::poison(want);
    call(kt::Isa::kScalar, q.data(), want.data(), q.size(), scale, zp, false);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, q.data(), got.data(), q.size(), scale, zp, stream);
      kt::same(want, got, isa, kt::fmt("%s n=%zu scale=%a zp=%d stream=%d", op, q.size(), scale, zp, stream));
    }
  }
}

}  // namespace

KT_CASE(quantize_u8) {
  check_quantize<uint8_t>(rng, "quantize_u8", 0, 255, [](kt::Isa isa, const QProblem& p, uint8_t* y) {
    KT_CALL(isa, quantize_u8, p.x.data(), y, static_cast<int64_t>(p.x.size()), p.inv_scale, p.zp);
  });
}

KT_CASE(quantize_s8) {
  check_quantize<int8_t>(rng, "quantize_s8", -128, 127, [](kt::Isa isa, const QProblem& p, int8_t* y) {
    KT_CALL(isa, quantize_s8, p.x.data(), y, static_cast<int64_t>(p.x.size()), p.inv_scale, p.zp);
  });
}

KT_CASE(quantize_u8_stream) {
  check_quantize<uint8_t>(rng, "quantize_u8_stream", 0, 255, [](kt::Isa isa, const QProblem& p, uint8_t* y) {
    KT_CALL(isa, quantize_u8_stream, p.x.data(), y, static_cast<int64_t>(p.x.size()), p.inv_scale, p.zp);
  });
}

KT_CASE(quantize_ch_s8) {
  check_quantize<int8_t>(rng, "quantize_ch_s8", -128, 127, [](kt::Isa isa, const QProblem& p, int8_t* y) {
    KT_CALL(isa, quantize_ch_s8, p.x.data(), y, static_cast<int64_t>(p.x.size()), p.inv_scale, p.zp);
  });
}

KT_CASE(quantize_s32) {
  check_quantize<int32_t>(rng, "quantize_s32", -1000, 1000, [](kt::Isa isa, const QProblem& p, int32_t* y) {
    KT_CALL(isa, quantize_s32, p.x.data(), y, static_cast<int64_t>(p.x.size()), 1.0 / p.inv_scale, p.zp);
  });
}

KT_CASE(dequantize_u8) {
  check_dequantize<uint8_t>(rng, "dequantize_u8",
                            [](kt::Isa isa, const uint8_t* q, float* y, int64_t n, float s, int32_t z, bool st) {
                              KT_CALL(isa, dequantize_u8, q, y, n, s, z, st);
                            });
}

KT_CASE(dequantize_s8) {
  check_dequantize<int8_t>(rng, "dequantize_s8",
                           [](kt::Isa isa, const int8_t* q, float* y, int64_t n, float s, int32_t z, bool st) {
                             KT_CALL(isa, dequantize_s8, q, y, n, s, z, st);
                           });
}

KT_CASE(dequantize_s32) {
  check_dequantize<int32_t>(rng, "dequantize_s32",
                            [](kt::Isa isa, const int32_t* q, float* y, int64_t n, float s, int32_t z, bool st) {
                              KT_CALL(isa, dequantize_s32, q, y, n, s, z, st);
                            });
}
