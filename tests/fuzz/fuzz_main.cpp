// libFuzzer entry point of one harness (harnesses.h); TURBANET_FUZZ_HARNESS names the function.
// Built by CMake with TURBANET_FUZZ=ON (clang only): one executable fuzz_<harness> each.
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "harnesses.h"

#ifndef TURBANET_FUZZ_HARNESS
#error "TURBANET_FUZZ_HARNESS must name a function of harnesses.h"
#endif

namespace {

// The run-file reader parses every file first in a forked child (io/h5_file.cpp), because HDF5
// 1.10 itself crashes on some damaged or crafted files; the parent turns the child's death into
// exit 2. That crash is the guard working, not a finding, so in the child neither libFuzzer's death
// callback (which would save the input as a crash artifact) nor a report on the fuzzer's
// stderr may follow it: the child's sanitizer reports go to files in TMPDIR instead
// (child-report.<pid>), and its death is left to the signal the parent reads.
std::string child_report;  // set before any fork: the child only reads it

void quiet_child() {
  __sanitizer_set_death_callback(nullptr);
  __sanitizer_set_report_path(child_report.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // warnings of the readers would drown the fuzzer's output
  child_report = (std::filesystem::temp_directory_path() / "child-report").string();
  ::pthread_atfork(nullptr, nullptr, quiet_child);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tn::fuzz::TURBANET_FUZZ_HARNESS(data, size);
}
