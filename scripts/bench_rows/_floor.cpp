// Floor kernels for the benchmarks: the least work an exact kernel of a row's family
// must do per byte, written in the kernels' own SIMD vocabulary (kernels/simd.h, bytes_simd.h) and
// compiled twice by scripts/bench_rows/_floor.py, once per ISA build (the same flags as CMakeLists'
// avx2 / avx512 objects). A floor drops everything a real kernel adds (tails, clamps, zero points,
// NaN rules, the statistics pass of a norm, the index arithmetic of a lookup), so its time is a
// lower bound for the row at that width: when a floor's AVX2 time over torch's AVX2 time is already
// above the AVX-512 ratio, the AVX2 ratio cannot reach it.
//
// Not part of the library: outputs are preallocated and sizes are multiples of the vector step.
#include <torch/extension.h>

#include "kernels/bytes_simd.h"
#include "kernels/simd.h"

namespace S = qplugin::kernels::QPLUGIN_ISA_NS::simd;
namespace B = qplugin::kernels::QPLUGIN_ISA_NS::bytes;
constexpr int64_t L = S::kLanes;

namespace {

const uint8_t* u8(const at::Tensor& t) { return t.data_ptr<uint8_t>(); }
uint8_t* u8(at::Tensor& t) { return t.data_ptr<uint8_t>(); }

// y = sat(round(f(x))) where f is `ops` float steps, alternately a multiply and an add, each
// rounded (the rules are defined step by step, so no FMA): one conversion in, the rule's
// arithmetic, one conversion out, the pack. The floor of the one-input "u8 -> float rule -> u8"
// ops: batch norm's rule is 2 steps (q * a + b), layer / group / instance norm's 5
// ((q - mean) * a * w + b + zp).
template <int kOps>
void chain_t(const uint8_t* px, uint8_t* py, int64_t n) {
  const S::VF m = S::set1_f(0.37f), c = S::set1_f(5.0f);
  auto f = [&](S::VF v) {
    for (int k = 0; k < kOps; ++k) v = (k % 2 == 0) ? S::mul_f(v, m) : S::add_f(v, c);
    return S::to_i32_round(v);
  };
  for (int64_t i = 0; i + 4 * L <= n; i += 4 * L) {
    S::VI r[4];
    for (int k = 0; k < 4; ++k) r[k] = f(S::to_f(S::load_u8(px + i + k * L)));
    S::store4_u8(py + i, r[0], r[1], r[2], r[3]);
  }
}

void chain(const at::Tensor& x, at::Tensor y, int64_t ops) {
  TORCH_CHECK(ops >= 1 && ops <= 6, "chain: 1..6 steps");
  using F = void (*)(const uint8_t*, uint8_t*, int64_t);
  static const F fns[] = {chain_t<1>, chain_t<2>, chain_t<3>, chain_t<4>, chain_t<5>, chain_t<6>};
  fns[ops - 1](u8(x), u8(y), x.numel());
}

// The floor of add / mul: two bytes less their zero points to float and the rule's steps, each
// rounded. add: (qa - za) * fa + (qb - zb) * fb + zo (2 multiplies, 2 adds); mul:
// (qa - za) * (qb - zb) * fa + zo (2 multiplies, 1 add).
void affine2(const at::Tensor& x, const at::Tensor& z, at::Tensor y, bool is_mul) {
  const uint8_t *px = u8(x), *pz = u8(z);
  uint8_t* py = u8(y);
  const S::VF va = S::set1_f(0.3f), vb = S::set1_f(0.4f), vc = S::set1_f(5.0f);
  const S::VI za = S::set1_i(128), zb = S::set1_i(120);
  auto f = [&](int64_t j) {
    const S::VF a = S::to_f(S::sub_i(S::load_u8(px + j), za)), b = S::to_f(S::sub_i(S::load_u8(pz + j), zb));
    const S::VF v = is_mul ? S::mul_f(S::mul_f(a, b), va) : S::add_f(S::mul_f(a, va), S::mul_f(b, vb));
    return S::to_i32_round(S::add_f(v, vc));
  };
  for (int64_t i = 0; i + 4 * L <= x.numel(); i += 4 * L)
    S::store4_u8(py + i, f(i), f(i + L), f(i + 2 * L), f(i + 3 * L));
}

// y[i] = sat(round(a * sum_k x[k * stride + i] + zp)), n = y.numel(): K taps summed in 16-bit
// lanes (folded into int32 every 256 taps), then the requantize rule (a multiply, an add). The floor of average
// pooling. With stride = the channel count the taps of neighbouring outputs overlap, so they come from L1 (a real
// pooling kernel reads at least as much); for a global pool over channels-last input (n = C, stride = C) x is the input
// itself.
template <int kW>
void taps_block(const uint8_t* px, uint8_t* py, int64_t i, int64_t K, int64_t stride, S::VF va, S::VF vz) {
  S::VI a[2 * kW];
  B::W16 w[kW];
  for (int u = 0; u < kW; ++u) w[u] = B::zero16(), a[2 * u] = a[2 * u + 1] = S::set1_i(0);
  for (int64_t k = 0; k < K; ++k) {
    for (int u = 0; u < kW; ++u) w[u] = B::add16(w[u], B::load16(px + k * stride + i + 2 * L * u));
    if ((k & 255) == 255) {
      for (int u = 0; u < kW; ++u) B::fold16<uint8_t>(&a[2 * u], &a[2 * u + 1], &w[u]);
    }
  }
  for (int u = 0; u < kW; ++u) B::fold16<uint8_t>(&a[2 * u], &a[2 * u + 1], &w[u]);
  for (int u = 0; u < 2 * kW; ++u)
    S::store_u8(py + i + L * u, S::to_i32_round(S::add_f(S::mul_f(S::to_f(a[u]), va), vz)));
}

void taps(const at::Tensor& x, at::Tensor y, int64_t K, int64_t stride, double a) {
  const uint8_t* px = u8(x);
  uint8_t* py = u8(y);
  const int64_t n = y.numel();
  TORCH_CHECK(x.numel() >= n + (K - 1) * stride, "taps: x too small");
  const S::VF va = S::set1_f(static_cast<float>(a)), vz = S::set1_f(3.0f);
  int64_t i = 0;
  // 8 * L, then 4 * L outputs a pass over the taps (as the kernels: a 64-channel pixel is one pass)
  for (; i + 8 * L <= n; i += 8 * L) taps_block<4>(px, py, i, K, stride, va, vz);
  for (; i + 4 * L <= n; i += 4 * L) taps_block<2>(px, py, i, K, stride, va, vz);
  for (; i + 2 * L <= n; i += 2 * L) taps_block<1>(px, py, i, K, stride, va, vz);
}

// y[i] = max_k x[k * stride + i]: max pooling's floor (one byte max per tap, taps as in taps()).
void maxtaps(const at::Tensor& x, at::Tensor y, int64_t K, int64_t stride) {
  const uint8_t* px = u8(x);
  uint8_t* py = u8(y);
  const int64_t n = y.numel();
  TORCH_CHECK(x.numel() >= n + (K - 1) * stride, "maxtaps: x too small");
  for (int64_t i = 0; i + B::kVecBytes <= n; i += B::kVecBytes) {
    B::VB m = B::ldb(px + i);
    for (int64_t k = 1; k < K; ++k) m = B::vmax(m, B::ldb(px + k * stride + i), uint8_t{});
    B::stb(py + i, m);
  }
}

// Bilinear's rule on 4 taps a, b, c, d (a, b and c, d `stride` apart, the two rows `stride` * 2
// apart): h0 * (w0 * a + w1 * b) + h1 * (w0 * c + w1 * d), each step rounded (6 multiplies, 3 adds).
void bilinear(const at::Tensor& x, at::Tensor y, int64_t stride) {
  const uint8_t* px = u8(x);
  uint8_t* py = u8(y);
  const int64_t n = y.numel();
  TORCH_CHECK(x.numel() >= n + 3 * stride, "bilinear: x too small");
  const S::VF w0 = S::set1_f(0.25f), w1 = S::set1_f(0.75f), h0 = S::set1_f(0.625f), h1 = S::set1_f(0.375f);
  auto f = [&](int64_t j) {
    auto at = [&](int64_t k) {
      return S::to_f(S::load_u8(px + k * stride + j));
    };
    const S::VF t = S::add_f(S::mul_f(w0, at(0)), S::mul_f(w1, at(1)));
    const S::VF u = S::add_f(S::mul_f(w0, at(2)), S::mul_f(w1, at(3)));
    return S::to_i32_round(S::add_f(S::mul_f(h0, t), S::mul_f(h1, u)));
  };
  for (int64_t i = 0; i + 4 * L <= n; i += 4 * L) S::store4_u8(py + i, f(i), f(i + L), f(i + 2 * L), f(i + 3 * L));
}

// y = sat(((x * m) >> 8) + c) in 16-bit lanes: the cheapest exact requantize of bytes without a
// table (a 16-bit fixed-point formula: widen, multiply, shift, add, pack). cat's floor on AVX2.
void fixed16(const at::Tensor& x, at::Tensor y, int64_t m, int64_t c) {
  const uint8_t* px = u8(x);
  uint8_t* py = u8(y);
#if defined(QPLUGIN_ISA_AVX512)
  const __m512i vm = _mm512_set1_epi16(static_cast<int16_t>(m)), vc = _mm512_set1_epi16(static_cast<int16_t>(c));
  auto one = [&](const uint8_t* p) {
    return _mm512_add_epi16(_mm512_srai_epi16(_mm512_mullo_epi16(B::load16(p), vm), 8), vc);
  };
  for (int64_t i = 0; i + 64 <= x.numel(); i += 64) {
    const __m512i r = _mm512_packus_epi16(one(px + i), one(px + i + 32));
    B::stb(py + i, _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), r));
  }
#else
  const __m256i vm = _mm256_set1_epi16(static_cast<int16_t>(m)), vc = _mm256_set1_epi16(static_cast<int16_t>(c));
  auto one = [&](const uint8_t* p) {
    return _mm256_add_epi16(_mm256_srai_epi16(_mm256_mullo_epi16(B::load16(p), vm), 8), vc);
  };
  for (int64_t i = 0; i + 32 <= x.numel(); i += 32) {
    const __m256i r = _mm256_packus_epi16(one(px + i), one(px + i + 16));
    B::stb(py + i, _mm256_permute4x64_epi64(r, 0xD8));
  }
#endif
}

// y = table[x] (256 entries). AVX-512: the kernels' VBMI lookup (2 VPERMI2B + a blend per 64
// bytes). AVX2: 16 VPSHUFB per 32 bytes and one XOR each to combine them, without the index
// arithmetic that makes the result correct (AVX2's widest byte shuffle has 16 entries).
void lut(const at::Tensor& x, at::Tensor y, const at::Tensor& table) {
  const uint8_t* px = u8(x);
  uint8_t* py = u8(y);
  const int64_t n = x.numel();
#if defined(QPLUGIN_ISA_AVX512)
  B::lut_rows(px, n, py, n, 1, n, u8(table), true);
#else
  __m256i t[16];
  for (int k = 0; k < 16; ++k) {
    t[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(u8(table) + 16 * k)));
  }
  for (int64_t i = 0; i + 32 <= n; i += 32) {
    const __m256i v = B::ldb(px + i);
    __m256i r = _mm256_shuffle_epi8(t[0], v);
    for (int k = 1; k < 16; ++k) r = _mm256_xor_si256(r, _mm256_shuffle_epi8(t[k], v));
    B::stb(py + i, r);
  }
#endif
}

// y = sat(round(x * inv)) from float: quantize's floor (non-temporal stores when huge): the
// rule's one product, rounded (its zero point and clamps dropped). per_row: one scale per row of
// `inner` elements (axis 0); otherwise scales cycle along the row with period `inner` (the
// channel axis of a channels-last tensor), loaded as vectors.
void quant(const at::Tensor& x, at::Tensor y, const at::Tensor& inv, int64_t inner, bool per_row) {
  const float* px = x.data_ptr<float>();
  const float* ps = inv.data_ptr<float>();
  uint8_t* py = u8(y);
  const int64_t n = x.numel();
  const bool stream = n >= (int64_t{1} << 22);  // as the kernels: non-temporal stores for huge outputs
  for (int64_t r0 = 0; r0 < n; r0 += inner) {   // one row of `inner` elements
    const S::VF row_s = S::set1_f(per_row ? ps[r0 / inner] : 0.f);
    for (int64_t i = 0; i + 4 * L <= inner; i += 4 * L) {
      S::VI r[4];
      for (int k = 0; k < 4; ++k) {
        const S::VF s = per_row ? row_s : S::loadu_f(ps + i + k * L);
        r[k] = S::to_i32_round(S::mul_f(S::loadu_f(px + r0 + i + k * L), s));
      }
      if (stream) {
        S::stream4_u8(py + r0 + i, r[0], r[1], r[2], r[3]);
      } else {
        S::store4_u8(py + r0 + i, r[0], r[1], r[2], r[3]);
      }
    }
  }
  if (stream) S::stream_fence();
}

// y = float(x): dequantize's floor (no zero point, no scale).
void widen(const at::Tensor& x, at::Tensor y) {
  const uint8_t* px = u8(x);
  float* py = y.data_ptr<float>();
  if (x.numel() >= (int64_t{1} << 22)) {  // non-temporal stores for huge outputs, as the kernels
    for (int64_t i = 0; i + L <= x.numel(); i += L) S::stream_f(py + i, S::to_f(S::load_u8(px + i)));
    S::stream_fence();
    return;
  }
  for (int64_t i = 0; i + L <= x.numel(); i += L) S::storeu_f(py + i, S::to_f(S::load_u8(px + i)));
}

// y = float(double(x) * scale): per-channel dequantize's rule (a double product) with no zero point.
void widen_d(const at::Tensor& x, at::Tensor y, double scale) {
  const uint8_t* px = u8(x);
  float* py = y.data_ptr<float>();
  const S::VD vs = S::set1_d(scale);
  for (int64_t i = 0; i + L <= x.numel(); i += L) {
    const S::VI q = S::load_u8(px + i);
    S::storeu_f(py + i, S::join_to_f(S::mul_d(S::to_d(S::lo_half(q)), vs), S::mul_d(S::to_d(S::hi_half(q)), vs)));
  }
}

// out[r] = max of row r of x ([rows, cols]): a plain read of the bytes (VPMAXUB).
void rowmax(const at::Tensor& x, at::Tensor out) {
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* p = u8(x) + r * cols;
    B::VB acc = B::vset(0, uint8_t{}), acc1 = acc, acc2 = acc, acc3 = acc;  // independent chains
    int64_t j = 0;
    for (; j + 4 * B::kVecBytes <= cols; j += 4 * B::kVecBytes) {
      acc = B::vmax(acc, B::ldb(p + j), uint8_t{});
      acc1 = B::vmax(acc1, B::ldb(p + j + B::kVecBytes), uint8_t{});
      acc2 = B::vmax(acc2, B::ldb(p + j + 2 * B::kVecBytes), uint8_t{});
      acc3 = B::vmax(acc3, B::ldb(p + j + 3 * B::kVecBytes), uint8_t{});
    }
    for (; j + B::kVecBytes <= cols; j += B::kVecBytes) acc = B::vmax(acc, B::ldb(p + j), uint8_t{});
    acc = B::vmax(B::vmax(acc, acc1, uint8_t{}), B::vmax(acc2, acc3, uint8_t{}), uint8_t{});
    alignas(64) uint8_t lanes[64];
    B::stb(lanes, acc);
    uint8_t m = 0;
    for (int64_t k = 0; k < B::kVecBytes; ++k) m = lanes[k] > m ? lanes[k] : m;
    for (; j < cols; ++j) m = p[j] > m ? p[j] : m;
    u8(out)[r] = m;
  }
}

// out[r] = (sum, sum of squares) of row r of x ([rows, cols]): the statistics a norm needs, exact
// in integers: bytes widened to 16 bits, squared and pair-summed (madd16) and summed (PSADBW).
void sumsq(const at::Tensor& x, at::Tensor out) {
  const int64_t rows = x.size(0), cols = x.size(1);
  int64_t* po = out.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* p = u8(x) + r * cols;
    S::VI acc = S::set1_i(0), acc1 = acc;
    int64_t j = 0;
    for (; j + 4 * L <= cols; j += 4 * L) {
      const B::W16 w0 = B::load16(p + j), w1 = B::load16(p + j + 2 * L);
      acc = S::add_i(acc, S::madd16(w0, w0));
      acc1 = S::add_i(acc1, S::madd16(w1, w1));
    }
    alignas(64) int32_t lanes[16];
    S::storeu_i(lanes, S::add_i(acc, acc1));
    int64_t sq = 0;
    for (int k = 0; k < L; ++k) sq += lanes[k];
    for (; j < cols; ++j) sq += int64_t{p[j]} * p[j];
    po[2 * r] = B::sum_bytes(p, cols, 0);
    po[2 * r + 1] = sq;
  }
}

// y[i] = src[i % 4096] in whole vectors: every output byte loaded from L1 and stored (nearest
// upsampling's floor: each input pixel is read for several outputs).
void bcast_copy(const at::Tensor& src, at::Tensor y) {
  const uint8_t* ps = u8(src);
  uint8_t* py = u8(y);
  const int64_t n = y.numel();
  TORCH_CHECK(src.numel() >= 4096, "bcast_copy: src of 4096 bytes");
  for (int64_t i = 0; i + B::kVecBytes <= n; i += B::kVecBytes) B::stb(py + i, B::ldb(ps + (i & 4095)));
}

// A plain write of y's bytes (zero vectors).
void write_bytes(at::Tensor y) {
  uint8_t* py = u8(y);
  const int64_t n = y.numel() * y.element_size();
  const B::VB z = B::vset(0, uint8_t{});
  for (int64_t i = 0; i + B::kVecBytes <= n; i += B::kVecBytes) B::stb(py + i, z);
}

// embedding_bag sum: out[b] = sum over the bag's rows of (q * scale + bias), D columns, rows of
// D (8-bit) or D / 2 (4-bit) bytes followed by float scale and bias; `per` indices a bag. Per
// row: the row's bytes widened to float, one FMA and one add per column; 4-bit unpacks each byte's
// two nibbles into even / odd accumulators (interleaved once per bag). Rows prefetched 8 ahead.
template <int D, int Bits>
void bag_t(const uint8_t* table, int64_t row_bytes, const int64_t* idx, int64_t bags, int64_t per, float* out) {
  constexpr int kV = D / L;
  const int64_t total = bags * per;
  for (int64_t b = 0; b < bags; ++b) {
    S::VF acc[kV];
    for (int v = 0; v < kV; ++v) acc[v] = S::set1_f(0.f);
    for (int64_t j = b * per; j < (b + 1) * per; ++j) {
      if (j + 8 < total) _mm_prefetch(reinterpret_cast<const char*>(table + idx[j + 8] * row_bytes), _MM_HINT_T0);
      const uint8_t* row = table + idx[j] * row_bytes;
      float sb[2];
      std::memcpy(sb, row + D * Bits / 8, sizeof sb);
      const S::VF s = S::set1_f(sb[0]), bias = S::set1_f(sb[1]);
      if (Bits == 8) {
        for (int v = 0; v < kV; ++v) acc[v] = S::add_f(S::fmadd_f(S::to_f(S::load_u8(row + v * L)), s, acc[v]), bias);
      } else {
        for (int v = 0; v < kV; v += 2) {
          const S::VI q = S::load_u8(row + v * L / 2);
#if defined(QPLUGIN_ISA_AVX512)
          const S::VI lo = _mm512_and_si512(q, _mm512_set1_epi32(15)), hi = _mm512_srli_epi32(q, 4);
#else
          const S::VI lo = _mm256_and_si256(q, _mm256_set1_epi32(15)), hi = _mm256_srli_epi32(q, 4);
#endif
          acc[v] = S::add_f(S::fmadd_f(S::to_f(lo), s, acc[v]), bias);
          acc[v + 1] = S::add_f(S::fmadd_f(S::to_f(hi), s, acc[v + 1]), bias);
        }
      }
    }
    for (int v = 0; v < kV; ++v) S::storeu_f(out + b * D + v * L, acc[v]);
  }
}

void bag(const at::Tensor& table, const at::Tensor& idx, at::Tensor out, int64_t per, int64_t bits) {
  const int64_t D = out.size(1), bags = out.size(0);
  const int64_t* pi = idx.data_ptr<int64_t>();
  float* po = out.data_ptr<float>();
  const uint8_t* pt = u8(table);
  const int64_t rb = table.size(1);
  // clang-format off
#define QPLUGIN_FLOOR_BAG(d, b) \
  if (D == d && bits == b) return bag_t<d, b>(pt, rb, pi, bags, per, po);
  QPLUGIN_FLOOR_BAG(32, 8) QPLUGIN_FLOOR_BAG(64, 8) QPLUGIN_FLOOR_BAG(128, 8)
  QPLUGIN_FLOOR_BAG(32, 4) QPLUGIN_FLOOR_BAG(64, 4) QPLUGIN_FLOOR_BAG(128, 4)
#undef QPLUGIN_FLOOR_BAG
      // clang-format on
      TORCH_CHECK(false, "bag: D in {32, 64, 128}, bits in {4, 8}");
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.attr("lanes") = L;
  m.def("chain", &chain);
  m.def("affine2", &affine2);
  m.def("taps", &taps);
  m.def("maxtaps", &maxtaps);
  m.def("bilinear", &bilinear);
  m.def("fixed16", &fixed16);
  m.def("lut", &lut);
  m.def("quant", &quant);
  m.def("widen", &widen);
  m.def("widen_d", &widen_d);
  m.def("rowmax", &rowmax);
  m.def("sumsq", &sumsq);
  m.def("write", &write_bytes);
  m.def("bcast_copy", &bcast_copy);
  m.def("bag", &bag);
}
