// The op table's CUDA row (the reference and CPU rows are in tests/test_ops.cpp): every op case
// on the CUDA backend against the reference and against the CPU backend. Without a GPU it
// prints one "SKIPPED: no CUDA device (why)" line and passes.
#include <doctest/doctest.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "cuda_test_util.h"
#include "op_cases.h"

using namespace tn;
using namespace tn::op_test;

TEST_CASE("cuda ops: the CUDA row: every op case on the CUDA backend matches the reference and the CPU backend") {
  if (skip_without_gpu()) return;
  CpuBackend cpu(1);
  CudaBackend gpu(0, false);
  run_row("cuda", gpu, &cpu);
}
