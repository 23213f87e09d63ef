#include "kernels/dispatch.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace qplugin {
namespace kernels {
namespace {

#if defined(__aarch64__)

// Linux: the kernel's hwcaps (what the CPU has and the kernel enables).
bool has(const char* feature) {
#if defined(__linux__)
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  if (!std::strcmp(feature, "asimd")) return hw & HWCAP_ASIMD;
  if (!std::strcmp(feature, "asimddp")) return hw & HWCAP_ASIMDDP;
  if (!std::strcmp(feature, "i8mm")) return hw2 & HWCAP2_I8MM;
  return false;
#else
  // Advanced SIMD is part of ARMv8-A; the optional extensions are not probed here.
  return !std::strcmp(feature, "asimd");
#endif
}

const char* const kFeatures[] = {"asimd", "asimddp", "i8mm"};

bool supports(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kNeon: return has("asimd");
    case Isa::kDotprod: return has("asimd") && has("asimddp");
    case Isa::kI8mm: return has("asimd") && has("asimddp") && has("i8mm");
    default: return false;
  }
}

#else

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

const char* const kFeatures[] = {"avx2",     "fma",      "f16c",     "bmi2",       "avx512f",
                                 "avx512bw", "avx512vl", "avx512dq", "avx512vnni", "avxvnni"};

bool supports(Isa isa) {
  const bool avx2 = has("avx2") && has("fma") && has("f16c") && has("bmi2");
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return avx2;
    case Isa::kAvxVnni: return avx2 && has("avxvnni");
    case Isa::kAvx512:
      return avx2 && has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq") && has("avx512vnni");
    default: return false;
  }
}

#endif

Isa detect() {
  Isa best = Isa::kScalar;
  for (Isa isa : compiled_isas()) {
    if (supports(isa)) best = isa;
  }
  return best;
}

Isa initial() {
  Isa best = detect();
  const char* env = std::getenv("QPLUGIN_ISA");
  if (env && *env) {
    Isa want;
    if (!parse_isa(env, &want)) {
      std::fprintf(stderr, "torch_qplugin: ignoring QPLUGIN_ISA=%s (expected %s)\n", env, isa_names().c_str());
    } else {
      // a cap: the best path the CPU runs at or below `want`, in compiled_isas() order
      Isa capped = Isa::kScalar;
      for (Isa isa : compiled_isas()) {
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

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kAvx2: return "avx2";
    case Isa::kNeon: return "neon";
    case Isa::kDotprod: return "dotprod";
    case Isa::kI8mm: return "i8mm";
    default: return "scalar";
  }
}

const std::vector<Isa>& compiled_isas() {
#if defined(__aarch64__)
  static const std::vector<Isa> isas = {Isa::kScalar, Isa::kNeon, Isa::kDotprod, Isa::kI8mm};
#else
  static const std::vector<Isa> isas = {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512};
#endif
  return isas;
}

bool parse_isa(const std::string& name, Isa* out) {
  for (Isa isa : compiled_isas()) {
    if (name == isa_name(isa)) {
      *out = isa;
      return true;
    }
  }
  return false;
}

std::string isa_names() {
  const std::vector<Isa>& isas = compiled_isas();
  std::string out;
  for (size_t i = 0; i < isas.size(); ++i) {
    if (i) out += i + 1 == isas.size() ? " or " : ", ";
    out += isa_name(isas[i]);
  }
  return out;
}

bool cpu_supports(Isa isa) {
  static const std::vector<bool> ok = [] {
    std::vector<bool> v(kNumIsas, false);
    for (Isa i : compiled_isas()) v[static_cast<int>(i)] = supports(i);
    return v;
  }();
  const int i = static_cast<int>(isa);
  return i >= 0 && i < kNumIsas && ok[i];
}

Isa cpu_isa() {
  static const Isa isa = detect();
  return isa;
}

Isa active_isa() { return static_cast<Isa>(active_slot().load(std::memory_order_relaxed)); }

bool set_isa(Isa isa) {
  if (!cpu_supports(isa)) return false;
  active_slot().store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

std::vector<std::pair<std::string, bool>> cpu_features() {
  std::vector<std::pair<std::string, bool>> out;
  for (const char* f : kFeatures) out.emplace_back(f, has(f));
  return out;
}

}  // namespace kernels
}  // namespace qplugin
