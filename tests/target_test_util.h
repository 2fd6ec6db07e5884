// The SIMD targets a kernel test runs on: every target compiled into this binary that this CPU
// runs (an AVX-512 machine tests AVX2 and the generic target too); each of the others is
// reported as SKIPPED, never passed silently.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backend/cpu/cpu_target.h"

inline std::vector<tn::CpuTarget> targets_here() {
  const std::vector<tn::CpuTarget> here = tn::available_cpu_targets();
  for (tn::CpuTarget t : tn::compiled_cpu_targets())
    if (std::find(here.begin(), here.end(), t) == here.end())
      MESSAGE("SKIPPED for target " << std::string(tn::to_string(t)) << ": this CPU does not support it");
  return here;
}
