// A torch-free tester for the raw-pointer kernels (aten_ext/csrc/kernels), in the XNNPACK /
// FBGEMM style: random shapes and extreme values, output buffers poisoned before each call, and
// every vector tier this CPU runs compared bit for bit with the scalar reference.
//
// One executable per kernel family (test/kernels/test_<family>.cpp, built by CMakeLists.txt with
// -DQPLUGIN_KERNEL_TESTS=ON); each file defines its cases with KT_CASE and links
// test/kernels/main.cpp. Run with no arguments: every case, nonzero exit status on a mismatch.
// Environment: QPLUGIN_KT_SEED (default 1) and QPLUGIN_KT_ITERS (random trials per case,
// default 64). Under qemu-user the same binaries test the aarch64 tiers.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.h"

namespace kt {

using qplugin::kernels::Isa;

// The vector tiers this CPU runs (every compiled path but scalar).
std::vector<Isa> tiers();
inline const char* name(Isa isa) { return qplugin::kernels::isa_name(isa); }
int iters();

// Deterministic generator (splitmix64), seeded per case from QPLUGIN_KT_SEED.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // uniform integer in [lo, hi]
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return range(0, 99) < percent; }
  float uniform(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(next() >> 40) / 16777216.0f; }
  // A size: mostly small (tails around every vector width), sometimes up to `big`.
  int64_t size(int64_t big = 300) { return chance(70) ? range(0, 70) : range(0, big); }
  // Bytes: uniform, or drawn from the extremes {0, 1, 127, 128, 254, 255}.
  template <class T>
  void fill_int(std::vector<T>& v, int64_t lo = std::numeric_limits<T>::min(),
                int64_t hi = std::numeric_limits<T>::max()) {
    const bool extremes = chance(25);
    for (auto& x : v) x = static_cast<T>(extremes && chance(70) ? (chance(50) ? lo : hi) : range(lo, hi));
  }
  // Floats of mixed magnitude with the specials mixed in: +-0, +-inf, NaN, the float range's ends.
  void fill_float(std::vector<float>& v, float scale = 100.0f, bool specials = true) {
    for (auto& x : v) {
      const int64_t r = range(0, 99);
      if (specials && r < 2) {
        x = std::numeric_limits<float>::quiet_NaN();
      } else if (specials && r < 4) {
        x = chance(50) ? INFINITY : -INFINITY;
      } else if (specials && r < 6) {
        x = chance(50) ? 3.0e38f : -3.0e38f;
      } else if (r < 8) {
        x = chance(50) ? 0.0f : -0.0f;
      } else if (r < 20) {  // exact halves: ties of the rounding step
        x = static_cast<float>(range(-600, 600)) * 0.5f;
      } else {
        x = uniform(-scale, scale);
      }
    }
  }

 private:
  uint64_t s_;
};

// The range of an integer code type, as int32.
template <class T>
constexpr int32_t qmin() {
  return static_cast<int32_t>(std::numeric_limits<T>::min());
}
template <class T>
constexpr int32_t qmax() {
  return static_cast<int32_t>(std::numeric_limits<T>::max());
}

// Fills a buffer with a byte pattern no kernel writes by accident.
template <class T>
void poison(std::vector<T>& v) {
  if (!v.empty()) std::memset(static_cast<void*>(v.data()), 0xA5, v.size() * sizeof(T));
}

// Records a failure (printf-style message) and returns false: cases keep going to report more.
bool fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Byte equality of a tier's output with the reference's, but for one thing: a NaN result equals
// any NaN. Which NaN an operation on two NaNs returns (sign, payload) is the hardware's and the
// compiler's choice of operand order (x86 returns the first operand's), as IEEE 754 leaves it;
// the numerics contract is that NaN stays NaN where the definition says so. Every other float,
// -0.0 and the infinities included, must match bit for bit. The message names the case's
// parameters (`what`), the tier and the first differing element.
template <class T>
bool same(const std::vector<T>& want, const std::vector<T>& got, Isa isa, const std::string& what) {
  if (want.size() != got.size())
    return fail("%s [%s]: size %zu vs %zu", what.c_str(), name(isa), want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(want[i]) && std::isnan(got[i])) continue;
    }
    if (std::memcmp(&want[i], &got[i], sizeof(T)) != 0) {
      if constexpr (std::is_floating_point_v<T>) {
        return fail("%s [%s]: element %zu of %zu: scalar %.9g, got %.9g", what.c_str(), name(isa), i, want.size(),
                    static_cast<double>(want[i]), static_cast<double>(got[i]));
      } else {
        return fail("%s [%s]: element %zu of %zu: scalar %lld, got %lld", what.c_str(), name(isa), i, want.size(),
                    static_cast<long long>(want[i]), static_cast<long long>(got[i]));
      }
    }
  }
  return true;
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

// Case registry.
using CaseFn = void (*)(Rng& rng);
struct Case {
  const char* name;
  CaseFn fn;
};
std::vector<Case>& cases();
struct Register {
  Register(const char* name, CaseFn fn) { cases().push_back({name, fn}); }
};

}  // namespace kt

#define KT_CASE(case_name)                                                      \
  static void kt_case_##case_name(kt::Rng& rng);                                \
  static kt::Register kt_register_##case_name(#case_name, kt_case_##case_name); \
  static void kt_case_##case_name(kt::Rng& rng)

// The call on one path: KT_CALL(isa, fn, args...) runs qplugin::kernels::<isa>::fn(args...).
#define KT_CALL(isa, ...) QPLUGIN_ISA_CALL_ON(isa, __VA_ARGS__)
