// Every op case of the table (tests/op_table.cpp) on every backend row: the reference itself
// (deterministic, finite, with the case's properties), the CPU backend against the reference,
// and the CUDA backend against the reference and against the CPU backend (that row is in
// tests/cuda/test_cuda_ops.cpp). Each case prints its largest error, passing or not; a failure
// names the case and the first elements outside |got − expected| ≤ atol + rtol·|expected|
// (tests/op_cases.h).
#include <doctest/doctest.h>

#include <cmath>
#include <exception>
#include <iomanip>
#include <set>
#include <sstream>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "op_cases.h"
#include "target_test_util.h"

using namespace tn;
using namespace tn::op_test;

TEST_CASE("ops: the reference row: every op case's reference is deterministic, finite and has its properties") {
  std::set<std::string> names;
  for (const OpCase& c : op_cases()) {
    CHECK_MESSAGE(names.insert(c.name).second, "two cases named " << c.name);
    const HostArrays a = reference_case(c), b = reference_case(c);
    std::size_t outputs = 0, written = 0, not_finite = 0, differs = 0;
    double max_abs = 0.0;
    for (const Array& arr : c.arrays) {
      if (!arr.output) continue;
      ++outputs;
      const std::vector<double>&va = a[arr.name], &vb = b[arr.name];
      for (std::size_t i = 0; i < va.size(); ++i) {
        if (!(va[i] == vb[i] || (std::isnan(va[i]) && std::isnan(vb[i])))) ++differs;
        if (va[i] == arr.values[i] || (std::isnan(va[i]) && std::isnan(arr.values[i]))) continue;  // untouched
        ++written;
        if (!std::isfinite(va[i])) ++not_finite;
        else max_abs = std::max(max_abs, std::fabs(va[i]));
      }
    }
    CHECK_MESSAGE(outputs > 0, c.name << " has no output to compare");
    CHECK_MESSAGE(differs == 0, c.name << ": the reference gave different results twice");
    CHECK_MESSAGE(not_finite == 0, c.name << ": the reference wrote " << not_finite << " values that are not finite");
    if (c.property) {
      const std::string p = c.property(a);
      CHECK_MESSAGE(p.empty(), "reference " << c.name << ": " << p);
    }
    MESSAGE("reference " << c.name << ": " << written << " values written, max |ref| " << max_abs);
  }
  MESSAGE(op_cases().size() << " op cases");
}

TEST_CASE("ops: the CPU rows: every op case on the CPU backend matches the reference, on every SIMD target") {
  for (CpuTarget target : targets_here()) {
    CpuBackend cpu(1, target);
    run_row(std::string("cpu ") + to_string(target), cpu, nullptr);
  }
}
