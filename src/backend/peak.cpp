// Peak FP32 rate through Backend::gemm_strided_batched.
#include "backend/peak.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace tn {

PeakRate measure_peak(Backend& be, int n, int repeats) {
  const int W = be.workers();
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  std::vector<float> host(nn);
  for (std::size_t i = 0; i < nn; ++i) host[i] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
  std::vector<float*> A(W), B(W), C(W);
  for (int w = 0; w < W; ++w) {
    A[w] = be.alloc<float>(nn);
    B[w] = be.alloc<float>(nn);
    C[w] = be.alloc<float>(nn);
    be.to_device(A[w], host.data(), nn * sizeof(float));
    be.to_device(B[w], host.data(), nn * sizeof(float));
  }
  PeakRate r{0, n, W};
  float sink = 0;
  for (int rep = 0; rep < repeats; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    be.for_each_block(W, 1, [&](int b0, int, int) {
      be.gemm_strided_batched(Trans::N, Trans::N, n, n, n, 1.0f, A[b0], n, 0, B[b0], n, 0, 0.0f, C[b0], n, 0, 1);
    });
    be.to_host(&sink, C[0], sizeof(float));  // waits for a device to finish
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.gflops = std::max(r.gflops, 2.0 * n * n * static_cast<double>(n) * W / s * 1e-9);
  }
  for (int w = 0; w < W; ++w) {
    be.release(A[w]);
    be.release(B[w]);
    be.release(C[w]);
  }
  return r;
}

}  // namespace tn
