// CPU target detection and pinning (see cpu_target.h). Highway reports what the CPU supports
// (CPUID on x86, the auxiliary vector on Arm) and which targets this binary compiled.
#include "backend/cpu/cpu_target.h"

#include <hwy/targets.h>

#include <algorithm>
#include <cstdlib>

#include "backend/backend.h"

namespace tn {

namespace {

constexpr CpuTarget kAll[] = {CpuTarget::Avx512, CpuTarget::Avx2, CpuTarget::Neon, CpuTarget::Generic};

std::int64_t hwy_bit(CpuTarget t) {
  switch (t) {
    case CpuTarget::Avx512: return HWY_AVX3;
    case CpuTarget::Avx2: return HWY_AVX2;
    case CpuTarget::Neon: return HWY_NEON;
    case CpuTarget::Generic: return HWY_EMU128 | HWY_SCALAR;  // whichever fallback was compiled
  }
  return 0;
}

std::string names(const std::vector<CpuTarget>& ts) {
  std::string s;
  for (CpuTarget t : ts) s += (s.empty() ? "" : ", ") + std::string(to_string(t));
  return s.empty() ? "none" : s;
}

}  // namespace

const char* to_string(CpuTarget t) {
  switch (t) {
    case CpuTarget::Avx512: return "avx512";
    case CpuTarget::Avx2: return "avx2";
    case CpuTarget::Neon: return "neon";
    case CpuTarget::Generic: return "generic";
  }
  return "?";
}

int target_lanes(CpuTarget t) {
  switch (t) {
    case CpuTarget::Avx512: return 16;
    case CpuTarget::Avx2: return 8;
    case CpuTarget::Neon: return 4;
    case CpuTarget::Generic: return 4;
  }
  return 4;
}

std::vector<CpuTarget> compiled_cpu_targets() {
  std::vector<CpuTarget> out;
  for (CpuTarget t : kAll)
    if (HWY_TARGETS & hwy_bit(t)) out.push_back(t);
  return out;
}

std::vector<CpuTarget> available_cpu_targets() {
  const std::int64_t supported = hwy::SupportedTargets();
  std::vector<CpuTarget> out;
  for (CpuTarget t : compiled_cpu_targets())
    if (supported & hwy_bit(t)) out.push_back(t);
  return out;
}

CpuTarget choose_cpu_target(const std::string& pinned) {
  const std::vector<CpuTarget> available = available_cpu_targets();
  if (available.empty()) throw BackendError("this CPU supports none of the targets compiled into turbanet");
  if (pinned.empty()) return available.front();
  for (CpuTarget t : kAll) {
    if (pinned != to_string(t)) continue;
    for (CpuTarget a : available)
      if (a == t) return t;
    const std::vector<CpuTarget> compiled = compiled_cpu_targets();
    const bool built = std::find(compiled.begin(), compiled.end(), t) != compiled.end();
    throw BackendError("TURBANET_CPU_TARGET=" + pinned + ": " +
                       (built ? "this CPU does not support it" : "this turbanet build does not contain it") +
                       "; available here: " + names(available) + " (or unset it for the best one)");
  }
  throw BackendError("TURBANET_CPU_TARGET=" + pinned + " is not a target; known: avx512, avx2, neon, generic; " +
                     "available here: " + names(available));
}

CpuTarget default_cpu_target() {
  static const CpuTarget chosen = [] {
    const char* env = std::getenv("TURBANET_CPU_TARGET");
    return choose_cpu_target(env ? env : "");
  }();
  return chosen;
}

void target_not_compiled(CpuTarget t) {
  throw BackendError(std::string("the CPU kernels were not compiled for ") + to_string(t) + "; compiled: " +
                     names(compiled_cpu_targets()));
}

}  // namespace tn
