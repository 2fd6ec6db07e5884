// CPU target choice: TURBANET_CPU_TARGET pins a target this CPU runs, and anything else is
// refused naming what is available; the lane kernel of every available target is there.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_target.h"
#include "backend/cpu/lanes_mlp.h"

using namespace tn;

TEST_CASE("cpu target: the best available by default, each available one when pinned") {
  const std::vector<CpuTarget> available = available_cpu_targets();
  REQUIRE(!available.empty());
  CHECK(choose_cpu_target("") == available.front());
  for (CpuTarget t : available) {
    CHECK(choose_cpu_target(to_string(t)) == t);
    const LaneKernel& k = lane_kernel(t);
    CHECK(k.target == t);
    CHECK(k.lanes == target_lanes(t));
    CHECK(CpuBackend(1, t).describe().find(std::string(to_string(t)) + " kernels") != std::string::npos);
  }
  std::string names;
  for (CpuTarget t : available) names += std::string(names.empty() ? "" : ", ") + to_string(t);
  MESSAGE("available here: " << names);
}

TEST_CASE("cpu target: an unknown or unsupported pin is refused, naming the available targets") {
  std::string names;
  for (CpuTarget t : available_cpu_targets()) names += std::string(names.empty() ? "" : ", ") + to_string(t);
  try {
    choose_cpu_target("sse9");
    FAIL("sse9 was accepted");
  } catch (const BackendError& e) {
    CHECK(std::string(e.what()).find("not a target") != std::string::npos);
    CHECK(std::string(e.what()).find("available here: " + names) != std::string::npos);
  }
  for (CpuTarget t : {CpuTarget::Avx512, CpuTarget::Avx2, CpuTarget::Neon, CpuTarget::Generic}) {
    const auto here = available_cpu_targets();
    if (std::find(here.begin(), here.end(), t) != here.end()) continue;
    CHECK_THROWS_WITH_AS(choose_cpu_target(to_string(t)), doctest::Contains(doctest::String(("available here: " + names).c_str())), BackendError);
  }
}
