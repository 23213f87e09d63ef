// The kernel testers' driver: runs every registered case (harness.h) and reports.
#include <cstdarg>
#include <cstdlib>

#include "harness.h"

namespace kt {
namespace {
int g_failures = 0;
}

std::vector<Isa> tiers() {
  std::vector<Isa> out;
  for (Isa isa : qplugin::kernels::compiled_isas()) {
    if (isa != Isa::kScalar && qplugin::kernels::cpu_supports(isa)) out.push_back(isa);
  }
  return out;
}

int iters() {
  static const int n = [] {
    const char* e = std::getenv("QPLUGIN_KT_ITERS");
    return e && *e ? std::atoi(e) : 64;
  }();
  return n;
}

bool fail(const char* f, ...) {
  ++g_failures;
  if (g_failures <= 20) {
    std::va_list ap;
    va_start(ap, f);
    std::fputs("  FAIL ", stdout);
    std::vprintf(f, ap);
    std::fputc('\n', stdout);
    va_end(ap);
  }
  return false;
}

std::string fmt(const char* f, ...) {
  char buf[512];
  std::va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::vector<Case>& cases() {
  static std::vector<Case> all;
  return all;
}

}  // namespace kt

int main(int argc, char** argv) {
  const char* seed_env = std::getenv("QPLUGIN_KT_SEED");
  const uint64_t seed = seed_env && *seed_env ? std::strtoull(seed_env, nullptr, 10) : 1;
  std::string tiers;
  for (kt::Isa isa : kt::tiers()) tiers += std::string(" ") + kt::name(isa);
  std::printf("%s: seed %llu, %d trials per case, tiers against scalar:%s\n", argv[0],
              static_cast<unsigned long long>(seed), kt::iters(), tiers.empty() ? " (none)" : tiers.c_str());
  int bad_cases = 0;
  for (const kt::Case& c : kt::cases()) {
    if (argc > 1 && std::string(argv[1]) != c.name) continue;
    const int before = kt::g_failures;
    kt::Rng rng(seed * 0x100000001B3ull + std::hash<std::string>()(c.name));
    c.fn(rng);
    const bool ok = kt::g_failures == before;
    bad_cases += !ok;
    std::printf("%-40s %s\n", c.name, ok ? "ok" : "FAILED");
  }
  std::printf("%zu cases, %d failed\n", kt::cases().size(), bad_cases);
  return bad_cases ? 1 : 0;
}
