// cat kernels (kernels/cat_kernel.h): every tier against scalar. Requantized blocks of rows
// (strided rows, relu bounds), relu clamps, the 256-entry table and its lookups, the fixed-point
// byte formula, and the short-row copies.
#include <algorithm>

#include "harness.h"
#include "kernels/cat_kernel.h"
#include "kernels/quantize_math.h"

namespace qk = qplugin::kernels;

namespace {

// Input / output quantization as cpu/cat.cpp passes it (scales drawn around each other).
template <class T>
qk::CatRequant requant_params(kt::Rng& rng, bool relu) {
  qk::CatRequant p{};
  const double sx = rng.chance(10) ? 1e-5 * rng.uniform(0.5f, 2.0f) : rng.uniform(1e-3f, 2.0f);
  const double ratio = rng.chance(20) ? 1.0 : (rng.chance(50) ? rng.uniform(0.1f, 1.0f) : rng.uniform(1.0f, 30.0f));
  const double so = sx * ratio;
  p.sx = static_cast<float>(sx);
  p.zx = static_cast<int32_t>(rng.range(kt::qmin<T>(), kt::qmax<T>()));
  p.inv_so = qk::inv_scale_of(so);
  p.zo = static_cast<int32_t>(rng.range(kt::qmin<T>(), kt::qmax<T>()));
  if (sizeof(T) == 4) {
    p.zx = static_cast<int32_t>(rng.range(-1000, 1000));
    p.zo = static_cast<int32_t>(rng.range(-1000, 1000));
  }
  p.lo = relu ? std::max(kt::qmin<T>(), p.zo) : kt::qmin<T>();
  p.sx_d = sx;
  p.so_d = so;
  return p;
}

std::string params_str(const qk::CatRequant& p) {
  return kt::fmt("sx=%a zx=%d inv_so=%a zo=%d lo=%d", p.sx, p.zx, p.inv_so, p.zo, p.lo);
}

// A block: rows of cols, source rows xs >= cols apart, destination rows ys >= cols apart.
struct Block {
  int64_t rows, cols, xs, ys;
};
Block block(kt::Rng& rng) {
  Block b;
  b.rows = rng.range(1, 6);
  b.cols = rng.size(400);
  b.xs = b.cols + (rng.chance(50) ? 0 : rng.range(0, 40));
  b.ys = b.cols + (rng.chance(50) ? 0 : rng.range(0, 40));
  return b;
}
std::string block_str(const Block& b) {
  return kt::fmt("rows=%lld cols=%lld xs=%lld ys=%lld", (long long)b.rows, (long long)b.cols, (long long)b.xs,
                 (long long)b.ys);
}

template <class T, class Fn>
void check_block(kt::Rng& rng, const Block& b, const std::string& what, Fn call) {
  std::vector<T> x(std::max<int64_t>(1, b.rows * b.xs));
  rng.fill_int(x);
  std::vector<T> want(std::max<int64_t>(1, b.rows * b.ys)), got(want.size());
  kt::poison(want);
  call(kt::Isa::kScalar, x.data(), want.data());
  for (kt::Isa isa : kt::tiers()) {
    kt::poison(got);
    call(isa, x.data(), got.data());
    kt::same(want, got, isa, what + " " + block_str(b));
  }
}

template <class T>
void check_requant(kt::Rng& rng, const char* op,
                   void (*call)(kt::Isa, const T*, int64_t, T*, int64_t, int64_t, int64_t, const qk::CatRequant&)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const qk::CatRequant p = requant_params<T>(rng, rng.chance(30));
    const Block b = block(rng);
    check_block<T>(rng, b, std::string(op) + " " + params_str(p), [&](kt::Isa isa, const T* x, T* y) {
      call(isa, x, b.xs, y, b.ys, b.rows, b.cols, p);
    });
  }
}

template <class T>
void check_relu(kt::Rng& rng, const char* op,
                void (*call)(kt::Isa, const T*, int64_t, T*, int64_t, int64_t, int64_t, int32_t)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int32_t lo = static_cast<int32_t>(
        rng.range(sizeof(T) == 4 ? -100000 : kt::qmin<T>(), sizeof(T) == 4 ? 100000 : kt::qmax<T>()));
    const Block b = block(rng);
    check_block<T>(rng, b, kt::fmt("%s lo=%d", op, lo), [&](kt::Isa isa, const T* x, T* y) {
      call(isa, x, b.xs, y, b.ys, b.rows, b.cols, lo);
    });
  }
}

// The 256-byte table of p (the scalar rule on every byte pattern), on one path.
std::vector<uint8_t> table_on(kt::Isa isa, const qk::CatRequant& p, bool is_signed) {
  std::vector<uint8_t> t(256);
  KT_CALL(isa, cat_requant_table8, p, is_signed, t.data());
  return t;
}

}  // namespace

KT_CASE(cat_requant_u8) {
  check_requant<uint8_t>(rng, "cat_requant_u8",
                         [](kt::Isa isa, const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows,
                            int64_t cols, const qk::CatRequant& p) {
                           KT_CALL(isa, cat_requant_u8, x, xs, y, ys, rows, cols, p);
                         });
}
KT_CASE(cat_requant_s8) {
  check_requant<int8_t>(rng, "cat_requant_s8",
                        [](kt::Isa isa, const int8_t* x, int64_t xs, int8_t* y, int64_t ys, int64_t rows, int64_t cols,
                           const qk::CatRequant& p) {
                          KT_CALL(isa, cat_requant_s8, x, xs, y, ys, rows, cols, p);
                        });
}
KT_CASE(cat_requant_s32) {
  check_requant<int32_t>(rng, "cat_requant_s32",
                         [](kt::Isa isa, const int32_t* x, int64_t xs, int32_t* y, int64_t ys, int64_t rows,
                            int64_t cols, const qk::CatRequant& p) {
                           KT_CALL(isa, cat_requant_s32, x, xs, y, ys, rows, cols, p);
                         });
}
KT_CASE(cat_relu_u8) {
  check_relu<uint8_t>(
      rng, "cat_relu_u8",
      [](kt::Isa isa, const uint8_t* x, int64_t xs, uint8_t* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo) {
        KT_CALL(isa, cat_relu_u8, x, xs, y, ys, rows, cols, lo);
      });
}
KT_CASE(cat_relu_s8) {
  check_relu<int8_t>(
      rng, "cat_relu_s8",
      [](kt::Isa isa, const int8_t* x, int64_t xs, int8_t* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo) {
        KT_CALL(isa, cat_relu_s8, x, xs, y, ys, rows, cols, lo);
      });
}
KT_CASE(cat_relu_s32) {
  check_relu<int32_t>(
      rng, "cat_relu_s32",
      [](kt::Isa isa, const int32_t* x, int64_t xs, int32_t* y, int64_t ys, int64_t rows, int64_t cols, int32_t lo) {
        KT_CALL(isa, cat_relu_s32, x, xs, y, ys, rows, cols, lo);
      });
}

// The table on every tier, and the tier's lookups of it (and of random tables).
KT_CASE(cat_requant_table8_lut8) {
  for (int it = 0; it < kt::iters(); ++it) {
    const bool is_signed = rng.chance(50);
    const qk::CatRequant p =
        is_signed ? requant_params<int8_t>(rng, rng.chance(30)) : requant_params<uint8_t>(rng, rng.chance(30));
    const std::vector<uint8_t> want_t = table_on(kt::Isa::kScalar, p, is_signed);
    for (kt::Isa isa : kt::tiers()) {
      kt::same(want_t, table_on(isa, p, is_signed), isa,
               kt::fmt("cat_requant_table8 signed=%d %s", is_signed, params_str(p).c_str()));
    }
    std::vector<uint8_t> table = want_t;
    if (rng.chance(30)) rng.fill_int(table);  // any table, not only monotonic ones
    const Block b = block(rng);
    check_block<uint8_t>(rng, b, "cat_lut8", [&](kt::Isa isa, const uint8_t* x, uint8_t* y) {
      KT_CALL(isa, cat_lut8, x, b.xs, y, b.ys, b.rows, b.cols, table.data(), false);
    });
  }
}

// The byte formula fitted to a requantize table: the fit is the same on every tier, and each
// tier's cat_affine8 gives the scalar bytes (which are the table's).
KT_CASE(cat_affine8) {
  int fitted = 0;
  for (int it = 0; it < kt::iters() * 4; ++it) {
    const bool is_signed = rng.chance(50);
    const qk::CatRequant p =
        is_signed ? requant_params<int8_t>(rng, rng.chance(30)) : requant_params<uint8_t>(rng, rng.chance(30));
    const std::vector<uint8_t> table = table_on(kt::Isa::kScalar, p, is_signed);
    const double slope = static_cast<double>(p.sx) / p.so_d;
    qk::ByteAffine f{};
    const bool ok = KT_CALL(kt::Isa::kScalar, cat_fit_affine8, table.data(), is_signed, p.lo, slope, &f);
    for (kt::Isa isa : kt::tiers()) {
      qk::ByteAffine g{};
      const bool ok2 = KT_CALL(isa, cat_fit_affine8, table.data(), is_signed, p.lo, slope, &g);
      if (ok2 != ok || (ok && std::memcmp(&f, &g, sizeof f) != 0)) {
        kt::fail("cat_fit_affine8 [%s]: a different fit (%d vs %d) %s", kt::name(isa), ok, ok2, params_str(p).c_str());
      }
    }
    if (!ok) continue;
    ++fitted;
    const Block b = block(rng);
    std::vector<uint8_t> x(std::max<int64_t>(1, b.rows * b.xs));
    rng.fill_int(x);
    std::vector<uint8_t> want(std::max<int64_t>(1, b.rows * b.ys)), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, cat_affine8, x.data(), b.xs, want.data(), b.ys, b.rows, b.cols, f);
    for (int64_t r = 0; r < b.rows; ++r) {
      for (int64_t i = 0; i < b.cols; ++i) {
        if (want[r * b.ys + i] != table[x[r * b.xs + i]]) {
          kt::fail("cat_affine8 [scalar]: not the table's byte at row %lld col %lld", (long long)r, (long long)i);
          r = b.rows;
          break;
        }
      }
    }
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, cat_affine8, x.data(), b.xs, got.data(), b.ys, b.rows, b.cols, f);
      kt::same(want, got, isa,
               kt::fmt("cat_affine8 m=%d b=%d s=%d flip=%d lo=%d corrected=%d %s", f.m, f.b, f.s, f.flip, f.lo,
                       f.corrected, block_str(b).c_str()));
    }
  }
  if (fitted == 0) kt::fail("cat_affine8: no table fitted");
}

KT_CASE(cat_copy_rows) {
  for (int it = 0; it < kt::iters(); ++it) {
    Block b = block(rng);
    if (rng.chance(20)) b.cols = rng.range(500, 1200);  // the memcpy branch
    b.xs = std::max(b.xs, b.cols);
    b.ys = std::max(b.ys, b.cols);
    check_block<uint8_t>(rng, b, "cat_copy_rows", [&](kt::Isa isa, const uint8_t* x, uint8_t* y) {
      KT_CALL(isa, cat_copy_rows, x, b.xs, y, b.ys, b.rows, b.cols);
    });
  }
}

KT_CASE(cat_interleave_rows) {
  for (int it = 0; it < kt::iters(); ++it) {
    const int64_t parts = rng.range(1, 5), rows = rng.range(1, 8);
    std::vector<int64_t> bytes(parts), yoff(parts);
    std::vector<std::vector<uint8_t>> xs(parts);
    std::vector<const uint8_t*> xp(parts);
    int64_t ys = 0;
    for (int64_t p = 0; p < parts; ++p) {
      bytes[p] = rng.chance(50) ? rng.range(1, 40) : rng.range(1, 300);
      yoff[p] = ys;
      ys += bytes[p];
      xs[p].resize(bytes[p] * rows);
      rng.fill_int(xs[p]);
      xp[p] = xs[p].data();
    }
    std::vector<uint8_t> want(ys * rows), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, cat_interleave_rows, xp.data(), bytes.data(), yoff.data(), parts, want.data(), ys, rows);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, cat_interleave_rows, xp.data(), bytes.data(), yoff.data(), parts, got.data(), ys, rows);
      kt::same(want, got, isa, kt::fmt("cat_interleave_rows parts=%lld rows=%lld", (long long)parts, (long long)rows));
    }
  }
}
