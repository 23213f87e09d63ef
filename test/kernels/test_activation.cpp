// Activation kernels (kernels/activation_kernel.h): the clamps (relu / relu6 / clamp bounds, lo > hi
// included), the 256-entry table lookup (with and without VBMI where the CPU has it), the table
// builder and the direct maps of every activation kind; every tier against scalar.
#include "harness.h"
#include "kernels/activation_kernel.h"

namespace qk = qplugin::kernels;

namespace {

bool cpu_has_vbmi() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512vbmi");
#else
  return false;
#endif
}

// A bound as the callers pass it: the type's end, the zero point (relu), or any value in range.
template <class T>
int32_t draw_bound(kt::Rng& rng, int64_t lo, int64_t hi) {
  switch (rng.range(0, 3)) {
    case 0: return static_cast<int32_t>(lo);
    case 1: return static_cast<int32_t>(hi);
    default: return static_cast<int32_t>(rng.range(lo, hi));
  }
}

template <class T>
void check_clamp(kt::Rng& rng, const char* op, void (*call)(kt::Isa, const T*, T*, int64_t, int32_t, int32_t)) {
  const int64_t tlo = std::numeric_limits<T>::min(), thi = std::numeric_limits<T>::max();
  for (int it = 0; it < kt::iters(); ++it) {
    std::vector<T> x(static_cast<size_t>(rng.size(1000)));
    rng.fill_int(x);
    int32_t lo = draw_bound<T>(rng, tlo, thi), hi = draw_bound<T>(rng, tlo, thi);
    if (rng.chance(80) && lo > hi) std::swap(lo, hi);          // mostly lo <= hi; lo > hi gives hi (as torch)
    if (rng.chance(25)) hi = static_cast<int32_t>(thi);        // relu: the max-only loop
    const int64_t off = rng.chance(30) ? rng.range(1, 3) : 0;  // unaligned starts
    const int64_t n = static_cast<int64_t>(x.size()) - std::min<int64_t>(off, static_cast<int64_t>(x.size()));
    std::vector<T> want(static_cast<size_t>(n)), got(want.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data() + off, want.data(), n, lo, hi);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data() + off, got.data(), n, lo, hi);
      kt::same(want, got, isa, kt::fmt("%s n=%lld off=%lld lo=%d hi=%d", op, (long long)n, (long long)off, lo, hi));
    }
  }
}

// A random activation with the qparams and arguments the ops accept (scales > 0, zero points in
// the type's range; the arguments any finite value, sometimes 0 or negative).
qk::ActSpec draw_spec(kt::Rng& rng, int64_t zlo, int64_t zhi) {
  qk::ActSpec s{};
  s.kind = static_cast<qk::ActKind>(rng.range(0, 6));
  auto arg = [&]() -> double {
    switch (rng.range(0, 5)) {
      case 0: return 0.0;
      case 1: return -rng.uniform(0.0f, 3.0f);
      case 2: return static_cast<double>(rng.range(-8, 8)) * 0.5;
      default: return rng.uniform(0.01f, 3.0f);
    }
  };
  s.p0 = arg();
  s.p1 = arg();
  s.p2 = arg();
  if (s.kind == qk::ActKind::kCelu && s.p0 == 0.0) s.p0 = 1.0;  // celu's alpha != 0 (checked by the op)
  s.in_scale = rng.chance(10) ? 1.0f : rng.uniform(1e-3f, 0.5f);
  s.in_zp = static_cast<int32_t>(rng.range(zlo, zhi));
  s.out_scale = rng.chance(10) ? 1.0 / 256.0 : rng.uniform(1e-3f, 0.5f);
  s.out_zp = static_cast<int32_t>(rng.range(zlo, zhi));
  if (s.kind == qk::ActKind::kThreshold) {  // threshold keeps the input's qparams
    s.out_scale = s.in_scale;
    s.out_zp = s.in_zp;
  }
  return s;
}

std::string describe(const qk::ActSpec& s) {
  return kt::fmt("kind=%d p=(%a,%a,%a) in=(%a,%d) out=(%a,%d)", static_cast<int>(s.kind), s.p0, s.p1, s.p2,
                 static_cast<double>(s.in_scale), s.in_zp, s.out_scale, s.out_zp);
}

template <class T>
void check_map(kt::Rng& rng, const char* op, int64_t zlo, int64_t zhi,
               void (*call)(kt::Isa, const T*, T*, int64_t, const qk::ActSpec*)) {
  for (int it = 0; it < kt::iters(); ++it) {
    const qk::ActSpec s = draw_spec(rng, zlo, zhi);
    std::vector<T> x(static_cast<size_t>(sizeof(T) == 1 ? rng.range(0, 127) : rng.size(500)));
    if (sizeof(T) == 4 && rng.chance(50)) {
      rng.fill_int(x, -100000, 100000);  // values the scales above keep finite and in range
    } else {
      rng.fill_int(x);
    }
    std::vector<T> want(x.size()), got(x.size());
    kt::poison(want);
    call(kt::Isa::kScalar, x.data(), want.data(), static_cast<int64_t>(x.size()), &s);
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      call(isa, x.data(), got.data(), static_cast<int64_t>(x.size()), &s);
      kt::same(want, got, isa, kt::fmt("%s n=%zu %s", op, x.size(), describe(s).c_str()));
    }
  }
}

}  // namespace

KT_CASE(clamp_u8) {
  check_clamp<uint8_t>(rng, "clamp_u8",
                       [](kt::Isa isa, const uint8_t* x, uint8_t* y, int64_t n, int32_t lo, int32_t hi) {
                         KT_CALL(isa, clamp_u8, x, y, n, lo, hi);
                       });
}

KT_CASE(clamp_s8) {
  check_clamp<int8_t>(rng, "clamp_s8", [](kt::Isa isa, const int8_t* x, int8_t* y, int64_t n, int32_t lo, int32_t hi) {
    KT_CALL(isa, clamp_s8, x, y, n, lo, hi);
  });
}

KT_CASE(clamp_s32) {
  check_clamp<int32_t>(rng, "clamp_s32",
                       [](kt::Isa isa, const int32_t* x, int32_t* y, int64_t n, int32_t lo, int32_t hi) {
                         KT_CALL(isa, clamp_s32, x, y, n, lo, hi);
                       });
}

KT_CASE(lut_apply8) {
  const bool vbmi_ok = cpu_has_vbmi();
  for (int it = 0; it < kt::iters(); ++it) {
    std::vector<uint8_t> table(256), x(static_cast<size_t>(rng.size(2000)));
    rng.fill_int(table);
    if (rng.chance(20)) {
      for (int v = 0; v < 256; ++v) table[static_cast<size_t>(v)] = static_cast<uint8_t>(v ^ 0x5A);  // a bijection
    }
    rng.fill_int(x);
    const int64_t off = rng.chance(30) ? std::min<int64_t>(rng.range(1, 3), static_cast<int64_t>(x.size())) : 0;
    const int64_t n = static_cast<int64_t>(x.size()) - off;
    std::vector<uint8_t> want(static_cast<size_t>(n)), got(want.size());
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, lut_apply8, x.data() + off, want.data(), n, table.data(), false);
    for (kt::Isa isa : kt::tiers()) {
      for (int vbmi = 0; vbmi <= (vbmi_ok ? 1 : 0); ++vbmi) {
        kt::poison(got);
        KT_CALL(isa, lut_apply8, x.data() + off, got.data(), n, table.data(), vbmi != 0);
        kt::same(want, got, isa, kt::fmt("lut_apply8 n=%lld off=%lld vbmi=%d", (long long)n, (long long)off, vbmi));
      }
    }
  }
}

KT_CASE(build_act_table8) {
  for (int it = 0; it < kt::iters(); ++it) {
    const bool is_signed = rng.chance(50);
    const qk::ActSpec s = draw_spec(rng, is_signed ? -128 : 0, is_signed ? 127 : 255);
    std::vector<uint8_t> want(256), got(256);
    kt::poison(want);
    KT_CALL(kt::Isa::kScalar, build_act_table8, &s, is_signed, want.data());
    for (kt::Isa isa : kt::tiers()) {
      kt::poison(got);
      KT_CALL(isa, build_act_table8, &s, is_signed, got.data());
      kt::same(want, got, isa, kt::fmt("build_act_table8 signed=%d %s", is_signed, describe(s).c_str()));
    }
  }
}

KT_CASE(act_map_u8) {
  check_map<uint8_t>(rng, "act_map_u8", 0, 255,
                     [](kt::Isa isa, const uint8_t* x, uint8_t* y, int64_t n, const qk::ActSpec* s) {
                       KT_CALL(isa, act_map_u8, x, y, n, s);
                     });
}

KT_CASE(act_map_s8) {
  check_map<int8_t>(rng, "act_map_s8", -128, 127,
                    [](kt::Isa isa, const int8_t* x, int8_t* y, int64_t n, const qk::ActSpec* s) {
                      KT_CALL(isa, act_map_s8, x, y, n, s);
                    });
}

KT_CASE(act_map_s32) {
  check_map<int32_t>(rng, "act_map_s32", -1000, 1000,
                     [](kt::Isa isa, const int32_t* x, int32_t* y, int64_t n, const qk::ActSpec* s) {
                       KT_CALL(isa, act_map_s32, x, y, n, s);
                     });
}
