// The machine's achievable FP32 rate as the backend's own GEMM reaches it: one n×n×n
// product per worker, all workers at once (on the CPU one serial OpenBLAS sgemm per core; on
// a GPU one cuBLAS sgemm). `turbanet sweep` reports achieved GFLOP/s as a fraction of it.
#pragma once
#include "backend/backend.h"

namespace tn {

struct PeakRate {
  double gflops = 0;  // best of `repeats` runs
  int n = 0;          // matrix size
  int products = 0;   // concurrent products (workers)
};

PeakRate measure_peak(Backend& be, int n = 2048, int repeats = 3);

}  // namespace tn
