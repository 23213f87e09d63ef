// Run-time choice of the kernel ISA path.
//
// The paths of the architecture built for (compiled_isas(), in cap order):
//   x86-64:  scalar < avx2 < avxvnni < avx512
//   aarch64: scalar < neon < dotprod < i8mm
// The active path is the best one the CPU supports, capped by the environment variable
// QPLUGIN_ISA (read once: the best path the CPU runs at or below the one named), or the one
// set_isa() forces (the test hook behind torch.ops.qplugin._set_isa; only a path the CPU
// runs). A CPU may run avx512 and not avxvnni (AMD Zen 4, Intel Ice Lake) or avxvnni and not
// avx512 (Intel Core 12th gen and later): the paths the CPU runs are a set (cpu_supports),
// ordered only for the cap. x86 features come from cpuid (__builtin_cpu_supports, which also
// checks the OS saves the wide registers), Arm features from the kernel's hwcaps (getauxval).
// Kernels are called through QPLUGIN_ISA_CALL(fn, args...), which picks the namespace
// of the active path: scalar::fn, avx2::fn, ... (kernels/isa.h).
#pragma once

#include <string>
#include <vector>

namespace qplugin {
namespace kernels {

// The values are stored in plain linear buffers (plain_buffer.h): never renumber.
enum class Isa : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kAvxVnni = 3, kNeon = 4, kDotprod = 5, kI8mm = 6 };
constexpr int kNumIsas = 7;

const char* isa_name(Isa isa);
// This build's paths, in cap order (scalar first).
const std::vector<Isa>& compiled_isas();
// Parses the name of one of compiled_isas(); returns false for anything else.
bool parse_isa(const std::string& name, Isa* out);
// "scalar, avx2, avxvnni or avx512" (this build's names, for messages).
std::string isa_names();
// Whether this CPU (and OS) can run path `isa`.
bool cpu_supports(Isa isa);
// Best path this CPU (and OS) can run.
Isa cpu_isa();
// Path kernels use now.
Isa active_isa();
// Forces a path; returns false (and changes nothing) if the CPU cannot run it.
bool set_isa(Isa isa);
// The path whose kernels a family without dot-product kernels runs under `isa`: avx2 for
// avxvnni, neon for dotprod and i8mm, `isa` itself otherwise.
inline Isa family_isa(Isa isa) {
  if (isa == Isa::kAvxVnni) return Isa::kAvx2;
  if (isa == Isa::kDotprod || isa == Isa::kI8mm) return Isa::kNeon;
  return isa;
}
// Named CPU features relevant to our kernels, with whether they are present.
std::vector<std::pair<std::string, bool>> cpu_features();

}  // namespace kernels
}  // namespace qplugin

// Path switching (set_isa) may happen while ops run on other threads. An op whose kernel calls
// depend on each other's path (a packed layout built for one path, a buffer sized by one path's
// element size, then kernels reading them) reads the path ONCE and calls every kernel with
// QPLUGIN_ISA_CALL_ON(isa, fn, ...), so a concurrent switch affects only its next call. Ops whose
// calls are independent (each chunk self-contained; all paths are bit-identical) may use
// QPLUGIN_ISA_CALL, which reads the active path at each call.
#define QPLUGIN_ISA_CALL(...) QPLUGIN_ISA_CALL_ON(::qplugin::kernels::active_isa(), __VA_ARGS__)

#if defined(__aarch64__)
#define QPLUGIN_ISA_CALL_ON(isa_value, fn, ...)                                                    \
  ([&]() {                                                                                         \
    switch (isa_value) {                                                                           \
      case ::qplugin::kernels::Isa::kI8mm: return ::qplugin::kernels::i8mm::fn(__VA_ARGS__);       \
      case ::qplugin::kernels::Isa::kDotprod: return ::qplugin::kernels::dotprod::fn(__VA_ARGS__); \
      case ::qplugin::kernels::Isa::kNeon: return ::qplugin::kernels::neon::fn(__VA_ARGS__);       \
      default: return ::qplugin::kernels::scalar::fn(__VA_ARGS__);                                 \
    }                                                                                              \
  }())
#else
#define QPLUGIN_ISA_CALL_ON(isa_value, fn, ...)                                                    \
  ([&]() {                                                                                         \
    switch (isa_value) {                                                                           \
      case ::qplugin::kernels::Isa::kAvx512: return ::qplugin::kernels::avx512::fn(__VA_ARGS__);   \
      case ::qplugin::kernels::Isa::kAvxVnni: return ::qplugin::kernels::avxvnni::fn(__VA_ARGS__); \
      case ::qplugin::kernels::Isa::kAvx2: return ::qplugin::kernels::avx2::fn(__VA_ARGS__);       \
      default: return ::qplugin::kernels::scalar::fn(__VA_ARGS__);                                 \
    }                                                                                              \
  }())
#endif
