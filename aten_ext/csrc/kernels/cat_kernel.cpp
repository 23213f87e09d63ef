// Compiled once per ISA (kernels/isa.h). Scalar loops are the reference and the
// tails; vector lanes repeat the scalar steps (kernels/quantize_math.h).
#include "kernels/cat_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/bytes_simd.h"
#include "kernels/quantize_math.h"
#include "kernels/simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

template <typename T>
inline T requant_one(T q, const CatRequant& p) {
  const float d = dequantize_val<T>(q, p.sx, p.zx);
  int32_t v;
  if constexpr (sizeof(T) == 1) {
    v = quantize_val8<T>(d, p.inv_so, p.zo);
  } else {
    (void)d;
    v = requantize<double>(static_cast<double>(static_cast<int64_t>(q) - p.zx) * p.sx_d / p.so_d, p.zo, QRange<T>::min,
                           QRange<T>::max);
  }
  return static_cast<T>(std::max(v, p.lo));
}

template <typename T>
void requant_row(const T* x, T* y, int64_t n, const CatRequant& p) {
  int64_t i = 0;
#if QPLUGIN_SIMD
  if constexpr (sizeof(T) == 1) {
    using namespace simd;
    const VI zx = set1_i(p.zx);
    const VF sx = set1_f(p.sx), inv = set1_f(p.inv_so), zo = set1_f(static_cast<float>(p.zo));
    const VF hi = set1_f(static_cast<float>(QRange<T>::max));
    const VF lo = set1_f(static_cast<float>(std::max<int32_t>(QRange<T>::min, p.lo)));
    auto one = [&](int64_t j) {
      const VF d = mul_f(to_f(sub_i(load_q(x + j), zx)), sx);
      return requant::clamp_round(quantize8_value(d, inv, zo), lo, hi);
    };
    for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
      store4_q(y + i, one(i), one(i + kLanes), one(i + 2 * kLanes), one(i + 3 * kLanes));
    }
    for (; i + kLanes <= n; i += kLanes) store_q(y + i, one(i));
  }
#endif
  for (; i < n; ++i) y[i] = requant_one<T>(x[i], p);
}

template <typename T>
void requant_rows(const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t cols, const CatRequant& p) {
#if defined(QPLUGIN_ISA_AVX2) || defined(QPLUGIN_ISA_NEON)
  if constexpr (sizeof(T) == 1) {
    // |d * inv_so| < 256 * sx * inv_so and the zero point keep round(d * inv_so) + zo far inside
    // int32 (false for inf / NaN): round and add as integers, then clamp as integers (the pack
    // saturates to T's range, max_epi32 applies lo) -- the rule's integers. Constants set once
    // for all rows (channels_last cat: many rows of C elements).
    const float bound = 256.0f * p.sx * p.inv_so + std::fabs(static_cast<float>(p.zo));
    if (bound < 1e9f) {
      using namespace simd;
      const VI zx = set1_i(p.zx), lo = set1_i(p.lo), zo = set1_i(p.zo);
      const VF sx = set1_f(p.sx), inv = set1_f(p.inv_so);
      const bool relu = p.lo > QRange<T>::min;
      for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * xs;
        T* yr = y + r * ys;
        auto one = [&](int64_t j) {
          const VI v = add_i(to_i32_round(mul_f(mul_f(to_f(sub_i(load_q(xr + j), zx)), sx), inv)), zo);
          return relu ? max_i(v, lo) : v;
        };
        int64_t i = 0;
        for (; i + 4 * kLanes <= cols; i += 4 * kLanes) {
          store4_q(yr + i, one(i), one(i + kLanes), one(i + 2 * kLanes), one(i + 3 * kLanes));
        }
        if (i < cols) requant_row(xr + i, yr + i, cols - i, p);
      }
      return;
    }
  }
#endif
  for (int64_t r = 0; r < rows; ++r) requant_row(x + r * xs, y + r * ys, cols, p);
}

template <typename T>
void relu_rows(const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo) {
  const T l = static_cast<T>(lo);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * xs;
    T* yr = y + r * ys;
    for (int64_t i = 0; i < cols; ++i) yr[i] = xr[i] > l ? xr[i] : l;  // auto-vectorized
  }
}

// The formula without its correction, on the flipped byte u: max(min(z >> s, 255), lo).
inline int32_t affine_base(uint32_t u, const ByteAffine& f) {
  const int32_t m = static_cast<int32_t>(((u << 8) * static_cast<uint32_t>(f.m)) >> 16);
  const int32_t z = std::min(65535, std::max(0, m + f.b));
  return std::max(std::min(z >> f.s, 255), static_cast<int32_t>(f.lo));
}

inline uint8_t affine_one(uint8_t x, const ByteAffine& f) {
  const uint32_t u = static_cast<uint8_t>(x ^ f.flip);
  int32_t y = affine_base(u, f);
  if (f.corrected) y += (f.corr[u >> 3] >> (u & 7)) & 1;
  return static_cast<uint8_t>(y ^ f.flip);
}

// The b interval that m's products allow (empty: lo_b > hi_b), for table t in the flipped
// (non-decreasing) order with clamp lo. relaxed: the formula may also be one step below a
// table value (the correction map adds it back); not below lo, which the clamp keeps.
void affine_b_range(const uint8_t* t, int32_t lo, int32_t m, int32_t s, bool relaxed, int64_t* lo_b, int64_t* hi_b) {
  int64_t bl = -65535, bh = 65535;
  const int64_t down = relaxed ? 1 : 0;
  for (int32_t u = 0; u < 256; ++u) {
    const int64_t mu = (static_cast<int64_t>(u) * 256 * m) >> 16;
    const int64_t v = t[u];
    if (v <= lo) {
      bh = std::min(bh, ((static_cast<int64_t>(lo) + 1) << s) - 1 - mu);  // y <= lo, then max
    } else if (v == 255) {
      bl = std::max(bl, ((255 - down) << s) - mu);  // y >= 255 (or 254), then the pack saturates
    } else {
      bl = std::max(bl, ((v - down) << s) - mu);  // v - down >= lo
      bh = std::min(bh, ((v + 1) << s) - 1 - mu);
    }
    if (bl > bh) break;  // empty already: this m cannot fit (most candidates of a failing fit)
  }
  *lo_b = bl;
  *hi_b = bh;
}

}  // namespace

bool cat_fit_affine8(const uint8_t* table, bool is_signed, int32_t lo, double slope, ByteAffine* f) {
  const uint8_t flip = is_signed ? 0x80 : 0;
  uint8_t t[256];
  for (int u = 0; u < 256; ++u) t[u] = static_cast<uint8_t>(table[u ^ flip] ^ flip);
  for (int u = 1; u < 256; ++u) {
    if (t[u] < t[u - 1]) return false;
  }
  const int32_t lo_u = is_signed ? lo + 128 : lo;
  if (!(slope > 0) || lo_u < 0 || lo_u > 255) return false;
  // The finest shift whose multiplier fits 16 bits, then nearby multipliers: an exact formula
  // first, else one at most a step low with its correction map.
  int32_t s = 8;
  double m0 = 0.0;
  for (; s >= 1; --s) {
    m0 = std::nearbyint(slope * static_cast<double>(1 << (8 + s)));
    if (m0 <= 65535.0) break;
  }
  if (s < 1) return false;
  for (const bool relaxed : {false, true}) {
    for (int d = 0; d <= 16; ++d) {
      const int32_t m = static_cast<int32_t>(m0) + ((d & 1) ? (d + 1) / 2 : -(d / 2));
      if (m < 0 || m > 65535) continue;
      int64_t bl, bh;
      affine_b_range(t, lo_u, m, s, relaxed, &bl, &bh);
      if (bl > bh) continue;
      ByteAffine g{};
      g.m = m;
      g.b = static_cast<int32_t>(bl);
      g.s = s;
      g.flip = flip;
      g.lo = static_cast<uint8_t>(lo_u);
      if (relaxed) {
        g.corrected = true;
        for (int u = 0; u < 256; ++u) {
          const int32_t c = t[u] - affine_base(static_cast<uint32_t>(u), g);
          if (c == 1) g.corr[u >> 3] = static_cast<uint8_t>(g.corr[u >> 3] | (1u << (u & 7)));
        }
      }
      bool same = true;
      for (int v = 0; v < 256 && same; ++v) same = affine_one(static_cast<uint8_t>(v), g) == table[v];
      if (same) {
        *f = g;
        return true;
      }
    }
  }
  return false;
}

void cat_affine8(const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols,
                 const ByteAffine& f) {
#if defined(QPLUGIN_ISA_AVX2)
  // neg: subtract |b|; flip: signed bytes; clamp: lo > 0; corr: the correction map (each op only
  // where it does something).
  auto run = [&](auto neg, auto flipped, auto clamp, auto corr) {
    // The constants are run's own locals (step and half inlined by force): the byte stores cannot
    // alias them, so they stay in registers. Captured from cat_affine8 instead, an out-of-line run
    // (GCC's choice with the correction map) reloads them every vector, a third slower.
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(f.flip)), lo = _mm256_set1_epi8(static_cast<char>(f.lo));
    const __m256i m = _mm256_set1_epi16(static_cast<int16_t>(static_cast<uint16_t>(f.m)));
    const __m256i b = _mm256_set1_epi16(static_cast<int16_t>(static_cast<uint16_t>(f.b < 0 ? -f.b : f.b)));
    const __m128i s = _mm_cvtsi32_si128(f.s);
    const __m256i zero = _mm256_setzero_si256();
    // The correction map in two 16-byte halves (each in both 128-bit lanes: VPSHUFB looks up
    // within a lane) and the byte of each bit index.
    const __m256i map_lo = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f.corr)));
    const __m256i map_hi = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f.corr + 16)));
    const __m256i bit_of = _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32,
                                            64, -128, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i k0f = _mm256_set1_epi8(0x0F), k07 = _mm256_set1_epi8(0x07);
    const uint8_t* const x0 = x;
    uint8_t* const y0 = y;
    const int64_t nrows = rows, ncols = cols, xstride = xs, ystride = ys;
    auto half = [&](__m256i w) __attribute__((always_inline)) {  // w: u << 8 in 16-bit lanes
      const __m256i p = _mm256_mulhi_epu16(w, m);
      return _mm256_srl_epi16(decltype(neg)::value ? _mm256_subs_epu16(p, b) : _mm256_adds_epu16(p, b), s);
    };
    auto step = [&](const uint8_t* xp, uint8_t* yp) __attribute__((always_inline)) {  // 32 bytes
      __m256i u = bytes::ldb(xp);
      if constexpr (decltype(flipped)::value) u = _mm256_xor_si256(u, flip);
      // unpack / pack both work within 128-bit halves: the element order comes back
      __m256i q = _mm256_packus_epi16(half(_mm256_unpacklo_epi8(zero, u)), half(_mm256_unpackhi_epi8(zero, u)));
      if constexpr (decltype(clamp)::value) q = _mm256_max_epu8(q, lo);
      if constexpr (decltype(corr)::value) {
        // corr[u >> 3]: bits 3-6 of u index a half (within each 16-bit lane the shift brings the
        // neighbour's bits only above bit 3), bit 7 of u picks the half; then bit u & 7 of it.
        const __m256i idx = _mm256_and_si256(_mm256_srli_epi16(u, 3), k0f);
        const __m256i word = _mm256_blendv_epi8(_mm256_shuffle_epi8(map_lo, idx), _mm256_shuffle_epi8(map_hi, idx), u);
        const __m256i bit = _mm256_shuffle_epi8(bit_of, _mm256_and_si256(u, k07));
        q = _mm256_sub_epi8(q, _mm256_cmpeq_epi8(_mm256_and_si256(word, bit), bit));  // + 1 where set
      }
      if constexpr (decltype(flipped)::value) q = _mm256_xor_si256(q, flip);
      bytes::stb(yp, q);
    };
    // Short rows of whole vectors (channels_last along C: 32-256 channels): the row's steps
    // unrolled, no inner loop or tail test per row (that bookkeeping costs as much as the
    // arithmetic of a 64-byte row).
    auto fixed = [&](auto steps) __attribute__((always_inline)) {
      const uint8_t* xr = x0;
      uint8_t* yr = y0;
      for (int64_t r = 0; r < nrows; ++r, xr += xstride, yr += ystride) {
        for (int v = 0; v < decltype(steps)::value; ++v) step(xr + 32 * v, yr + 32 * v);
      }
    };
    switch (ncols % 32 == 0 ? ncols / 32 : 0) {
      case 1: fixed(std::integral_constant<int, 1>()); return;
      case 2: fixed(std::integral_constant<int, 2>()); return;
      case 4: fixed(std::integral_constant<int, 4>()); return;
      case 8: fixed(std::integral_constant<int, 8>()); return;
      default: break;
    }
    for (int64_t r = 0; r < nrows; ++r) {
      const uint8_t* xr = x0 + r * xstride;
      uint8_t* yr = y0 + r * ystride;
      int64_t i = 0;
      for (; i + 32 <= ncols; i += 32) step(xr + i, yr + i);
      for (; i < ncols; ++i) yr[i] = affine_one(xr[i], f);
    }
  };
  auto with_corr = [&](auto neg, auto flipped, auto clamp) {
    if (f.corrected) {
      run(neg, flipped, clamp, std::true_type());
    } else {
      run(neg, flipped, clamp, std::false_type());
    }
  };
  auto with_clamp = [&](auto neg, auto flipped) {
    if (f.lo > 0) {
      with_corr(neg, flipped, std::true_type());
    } else {
      with_corr(neg, flipped, std::false_type());
    }
  };
  auto with_flip = [&](auto neg) {
    if (f.flip) {
      with_clamp(neg, std::true_type());
    } else {
      with_clamp(neg, std::false_type());
    }
  };
  if (f.b < 0) {
    with_flip(std::true_type());
  } else {
    with_flip(std::false_type());
  }
#else
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < cols; ++i) y[r * ys + i] = affine_one(x[r * xs + i], f);
  }
#endif
}

void cat_requant_u8(const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols,
                    const CatRequant& p) {
  requant_rows(x, xs, y, ys, rows, cols, p);
}
void cat_requant_s8(const int8_t* x, int64_t xs, int8_t* y, int64_t ys, int64_t rows, int64_t cols,
                    const CatRequant& p) {
  requant_rows(x, xs, y, ys, rows, cols, p);
}
void cat_requant_s32(const int32_t* x, int64_t xs, int32_t* y, int64_t ys, int64_t rows, int64_t cols,
                     const CatRequant& p) {
  requant_rows(x, xs, y, ys, rows, cols, p);
}
void cat_relu_u8(const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo) {
  relu_rows(x, xs, y, ys, rows, cols, lo);
}
void cat_relu_s8(const int8_t* x, int64_t xs, int8_t* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo) {
  relu_rows(x, xs, y, ys, rows, cols, lo);
}
void cat_relu_s32(const int32_t* x, int64_t xs, int32_t* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo) {
  relu_rows(x, xs, y, ys, rows, cols, lo);
}

void cat_requant_table8(const CatRequant& p, bool is_signed, uint8_t* table) {
  // The row kernel on the 256 byte patterns (its vector lanes equal the scalar rule).
  alignas(64) uint8_t bytes_in[256];
  for (int v = 0; v < 256; ++v) bytes_in[v] = static_cast<uint8_t>(v);
  if (is_signed) {
    requant_row(reinterpret_cast<const int8_t*>(bytes_in), reinterpret_cast<int8_t*>(table), 256, p);
  } else {
    requant_row(bytes_in, table, 256, p);
  }
}
void cat_lut8(const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols, const uint8_t* table,
              bool use_vbmi) {
  bytes::lut_rows(x, xs, y, ys, rows, cols, table, use_vbmi);
}

void cat_copy_rows(const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t bytes) {
  if (bytes > 512) {
    for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * ys, x + r * xs, static_cast<size_t>(bytes));
    return;
  }
  // Whole-register moves (channels_last cat along C: rows of C bytes).
  for (int64_t r = 0; r < rows; ++r) bytes::copy_short(y + r * ys, x + r * xs, bytes);
}

void cat_interleave_rows(const uint8_t* const* x, const int64_t* bytes, const int64_t* yoff, int64_t parts, uint8_t* y,
                         int64_t ys, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* yr = y + r * ys;
    for (int64_t p = 0; p < parts; ++p) {
      const int64_t b = bytes[p];
      const uint8_t* xr = x[p] + r * b;
      bytes::copy_short(yr + yoff[p], xr, b);
    }
  }
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
