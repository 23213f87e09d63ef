// Run-time choice of the kernel ISA path.
//
// The active path is the best one the CPU supports (avx512 > avxvnni > avx2 >
// scalar), capped by the environment variable QPLUGIN_ISA=scalar|avx2|avxvnni|avx512
// (read once: the best path the CPU runs at or below the one named), or the one
// set_isa() forces (the test hook behind torch.ops.qplugin._set_isa; only a path the
// CPU runs). A CPU may run avx512 and not avxvnni (AMD Zen 4, Intel Ice Lake) or
// avxvnni and not avx512 (Intel Core 12th gen and later): the paths the CPU runs are
// a set (cpu_supports), ordered only for the cap. Kernels are called through
// QPLUGIN_ISA_CALL(fn, args...), which picks scalar::fn, avx2::fn, avxvnni::fn or
// avx512::fn.
#pragma once

#include <string>
#include <vector>

namespace qplugin {
namespace kernels {

// The values are stored in plain linear buffers (plain_buffer.h): never renumber.
enum class Isa : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kAvxVnni = 3 };
constexpr int kNumIsas = 4;

const char* isa_name(Isa isa);
// Parses "scalar" / "avx2" / "avxvnni" / "avx512"; returns false for anything else.
bool parse_isa(const std::string& name, Isa* out);
// Whether this CPU (and OS) can run path `isa`.
bool cpu_supports(Isa isa);
// Best path this CPU (and OS) can run.
Isa cpu_isa();
// Path kernels use now.
Isa active_isa();
// Forces a path; returns false (and changes nothing) if the CPU cannot run it.
bool set_isa(Isa isa);
// The path whose kernels a family without AVX-VNNI kernels runs under `isa`: avx2 for
// avxvnni, `isa` itself otherwise.
inline Isa family_isa(Isa isa) { return isa == Isa::kAvxVnni ? Isa::kAvx2 : isa; }
// Named CPU features relevant to our kernels, with whether they are present.
std::vector<std::pair<std::string, bool>> cpu_features();

} // namespace kernels
} // namespace qplugin

// Path switching (set_isa) may happen while ops run on other threads. An op whose kernel calls
// depend on each other's path (a packed layout built for one path, a buffer sized by one path's
// element size, then kernels reading them) reads the path ONCE and calls every kernel with
// QPLUGIN_ISA_CALL_ON(isa, fn, ...), so a concurrent switch affects only its next call. Ops whose
// calls are independent (each chunk self-contained; all paths are bit-identical) may use
// QPLUGIN_ISA_CALL, which reads the active path at each call.
#define QPLUGIN_ISA_CALL(...) QPLUGIN_ISA_CALL_ON(::qplugin::kernels::active_isa(), __VA_ARGS__)

#define QPLUGIN_ISA_CALL_ON(isa_value, fn, ...)                            \
  ([&]() {                                                                 \
    switch (isa_value) {                                                   \
      case ::qplugin::kernels::Isa::kAvx512:                               \
        return ::qplugin::kernels::avx512::fn(__VA_ARGS__);                \
      case ::qplugin::kernels::Isa::kAvxVnni:                              \
        return ::qplugin::kernels::avxvnni::fn(__VA_ARGS__);               \
      case ::qplugin::kernels::Isa::kAvx2:                                 \
        return ::qplugin::kernels::avx2::fn(__VA_ARGS__);                  \
      default:                                                             \
        return ::qplugin::kernels::scalar::fn(__VA_ARGS__);                \
    }                                                                      \
  }())
