// CpuBackend::for_each_block: blocks cover the members once, within the block size, on
// valid workers, and an exception in a block reaches the caller. (The ops themselves are the
// table in tests/op_table.cpp, run on every backend by tests/test_ops.cpp.)
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "backend/cpu/cpu_backend.h"

using namespace tn;

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
