// libFuzzer entry point of one harness (harnesses.h); TURBANET_FUZZ_HARNESS names the function.
// Built by CMake with TURBANET_FUZZ=ON (clang only): one executable fuzz_<harness> each.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>

#include "harnesses.h"

#ifndef TURBANET_FUZZ_HARNESS
#error "TURBANET_FUZZ_HARNESS must name a function of harnesses.h"
#endif

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // warnings of the readers would drown the fuzzer's output
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tn::fuzz::TURBANET_FUZZ_HARNESS(data, size);
}
