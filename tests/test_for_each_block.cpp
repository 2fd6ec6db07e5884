// CpuBackend::for_each_block: blocks cover the members once, within the block size, on
// valid workers, and an exception in a block reaches the caller; blocks run with subnormals
// flushed to zero (x86 MXCSR, aarch64 FPCR) and the caller gets its own mode back. (The ops themselves are the
// table in tests/op_table.cpp, run on every backend by tests/test_ops.cpp.)
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_backend.h"

using namespace tn;

namespace {

// A subnormal float computed on the calling thread (0 when the thread flushes them).
float subnormal_here() {
  volatile float tiny = 1e-38f;
  volatile float quarter = 0.25f;
  return tiny * quarter;
}

// A subnormal double input times 2^60, a normal result (0 when the thread reads subnormal
// inputs as zero: x86 DAZ; aarch64 FZ flushes inputs too).
double subnormal_input_here() {
  volatile double tiny = 1e-320;
  volatile double big = 0x1p60;
  return tiny * big;
}

// Whether turbanet sets a flush-to-zero mode on this architecture; says SKIPPED if not.
bool flush_mode_here() {
#if defined(__SSE__) || defined(__aarch64__)
  return true;
#else
  MESSAGE("SKIPPED: turbanet sets no flush-to-zero mode on this architecture");
  return false;
#endif
}

}  // namespace

TEST_CASE("for_each_block covers members 0..S-1 once in blocks of at most max_block") {
  for (int threads : {1, 2}) {
    CpuBackend be(threads);
    CHECK(be.workers() == std::min(threads, std::max(1, omp_get_num_procs())));  // capped to the hardware's threads
    for (int S : {0, 1, 7, 10, 33}) {
      for (int max_block : {1, 3, 10, 64}) {
        std::vector<int> hits(S, 0);
        std::mutex mu;
        bool ok = true;
        be.for_each_block(S, max_block, [&](int b0, int b1, int w) {
          std::lock_guard<std::mutex> lock(mu);
          ok = ok && b0 < b1 && b1 - b0 <= max_block && b0 >= 0 && b1 <= S && w >= 0 && w < threads;
          for (int i = b0; i < b1 && i < S && i >= 0; ++i) ++hits[i];
        });
        INFO("threads ", threads, " S ", S, " max_block ", max_block);
        CHECK(ok);
        CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
      }
    }
    std::atomic<int> calls{0};
    CHECK_THROWS_AS(be.for_each_block(10, 2, [&](int b0, int b1, int) {
                      ++calls;
                      if (b0 <= 4 && 4 < b1) throw std::runtime_error("boom");
                    }),
                    std::runtime_error);
    CHECK(calls.load() >= 1);
  }
}

TEST_CASE("flush_subnormals flushes on the calling thread only") {
  if (!flush_mode_here()) return;
  REQUIRE(subnormal_here() != 0.0f);
  REQUIRE(subnormal_input_here() != 0.0);
  float flushed = -1.0f;
  double input_flushed = -1.0;
  std::thread([&] {
    flush_subnormals();
    flushed = subnormal_here();
    input_flushed = subnormal_input_here();
  }).join();
  CHECK(flushed == 0.0f);
  CHECK(input_flushed == 0.0);
  CHECK(subnormal_here() != 0.0f);
  CHECK(subnormal_input_here() != 0.0);
}

TEST_CASE("for_each_block runs every block with subnormals flushed and gives the caller its mode back") {
  if (!flush_mode_here()) return;
  REQUIRE(subnormal_here() != 0.0f);
  for (int threads : {1, 2}) {
    CpuBackend be(threads);
    std::vector<float> seen(8, -1.0f);
    be.for_each_block(8, 1, [&](int b0, int, int) { seen[b0] = subnormal_here(); });
    INFO("threads ", threads);
    CHECK(std::all_of(seen.begin(), seen.end(), [](float v) { return v == 0.0f; }));
    CHECK(subnormal_here() != 0.0f);  // the caller ran blocks too, and has its mode back
    CHECK(subnormal_input_here() != 0.0);
  }
}
