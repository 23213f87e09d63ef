#include "kernels/dispatch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <cstdio>

namespace qplugin {
namespace kernels {
namespace {

bool has(const char* feature) {
  // __builtin_cpu_supports also checks that the OS saves the wide registers
  // (XCR0) for the AVX / AVX-512 feature bits.
  __builtin_cpu_init();
  if (!std::strcmp(feature, "avx2")) return __builtin_cpu_supports("avx2");
  if (!std::strcmp(feature, "fma")) return __builtin_cpu_supports("fma");
  if (!std::strcmp(feature, "f16c")) return __builtin_cpu_supports("f16c");
  if (!std::strcmp(feature, "bmi2")) return __builtin_cpu_supports("bmi2");
  if (!std::strcmp(feature, "avx512f")) return __builtin_cpu_supports("avx512f");
  if (!std::strcmp(feature, "avx512bw")) return __builtin_cpu_supports("avx512bw");
  if (!std::strcmp(feature, "avx512vl")) return __builtin_cpu_supports("avx512vl");
  if (!std::strcmp(feature, "avx512dq")) return __builtin_cpu_supports("avx512dq");
  if (!std::strcmp(feature, "avx512vnni")) return __builtin_cpu_supports("avx512vnni");
  if (!std::strcmp(feature, "avxvnni")) return __builtin_cpu_supports("avxvnni");
  return false;
}

bool supports(Isa isa) {
  const bool avx2 = has("avx2") && has("fma") && has("f16c") && has("bmi2");
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return avx2;
    case Isa::kAvxVnni: return avx2 && has("avxvnni");
    case Isa::kAvx512:
      return avx2 && has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq") &&
             has("avx512vnni");
  }
  return false;
}

Isa detect() {
  for (Isa isa : {Isa::kAvx512, Isa::kAvxVnni, Isa::kAvx2}) {
    if (supports(isa)) return isa;
  }
  return Isa::kScalar;
}

Isa initial() {
  Isa best = detect();
  const char* env = std::getenv("QPLUGIN_ISA");
  if (env && *env) {
    Isa want;
    if (!parse_isa(env, &want)) {
      std::fprintf(stderr,
                   "torch_qplugin: ignoring QPLUGIN_ISA=%s (expected scalar, avx2, avxvnni or avx512)\n", env);
    } else {
      // a cap: the best path the CPU runs at or below `want` (scalar < avx2 < avxvnni < avx512)
      const Isa order[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512};
      Isa capped = Isa::kScalar;
      for (Isa isa : order) {
        if (supports(isa)) capped = isa;
        if (isa == want) break;
      }
      if (capped != want) {
        std::fprintf(stderr, "torch_qplugin: QPLUGIN_ISA=%s is not supported by this CPU; using %s\n", env,
                     isa_name(capped));
      }
      best = capped;
    }
  }
  return best;
}

std::atomic<int>& active_slot() {
  static std::atomic<int> slot{static_cast<int>(initial())};
  return slot;
}

} // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kAvx2: return "avx2";
    default: return "scalar";
  }
}

bool parse_isa(const std::string& name, Isa* out) {
  if (name == "scalar") { *out = Isa::kScalar; return true; }
  if (name == "avx2") { *out = Isa::kAvx2; return true; }
  if (name == "avxvnni") { *out = Isa::kAvxVnni; return true; }
  if (name == "avx512") { *out = Isa::kAvx512; return true; }
  return false;
}

bool cpu_supports(Isa isa) {
  static const bool ok[kNumIsas] = {supports(Isa::kScalar), supports(Isa::kAvx2), supports(Isa::kAvx512),
                                    supports(Isa::kAvxVnni)};
  const int i = static_cast<int>(isa);
  return i >= 0 && i < kNumIsas && ok[i];
}

Isa cpu_isa() {
  static const Isa isa = detect();
  return isa;
}

Isa active_isa() {
  return static_cast<Isa>(active_slot().load(std::memory_order_relaxed));
}

bool set_isa(Isa isa) {
  if (!cpu_supports(isa)) return false;
  active_slot().store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

std::vector<std::pair<std::string, bool>> cpu_features() {
  std::vector<std::pair<std::string, bool>> out;
  for (const char* f : {"avx2", "fma", "f16c", "bmi2", "avx512f", "avx512bw", "avx512vl",
                        "avx512dq", "avx512vnni", "avxvnni"}) {
    out.emplace_back(f, has(f));
  }
  return out;
}

} // namespace kernels
} // namespace qplugin
