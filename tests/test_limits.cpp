// Limits and number ranges: what the CPU backend's threads leave behind on the calling
// thread, configs whose sizes overflow, and runs that would not fit the machine's memory.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "backend/cpu/cpu_backend.h"
#include "cli/commands/commands.h"
#include "config/config.h"
#include "io/run_file.h"

using namespace tn;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("turbanet-limits-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

fs::path write_text(const std::string& name, const std::string& text) {
  const fs::path p = scratch(name);
  std::ofstream(p) << text;
  return p;
}

// A subnormal float computed on the calling thread (0 when the thread flushes them).
float subnormal_here() {
  volatile float tiny = 1e-38f;
  volatile float quarter = 0.25f;
  return tiny * quarter;
}

}  // namespace

TEST_CASE("for_each_block gives the calling thread its floating-point mode back") {
  REQUIRE(subnormal_here() != 0.0f);
  for (int threads : {1, 2}) {
    CpuBackend be(threads);
    float seen_in_block = -1.0f;
    be.for_each_block(4, 1, [&](int b0, int, int) {
      if (b0 == 0) seen_in_block = subnormal_here();
    });
    CHECK(seen_in_block == 0.0f);  // the blocks still run with subnormals flushed
    CHECK(subnormal_here() != 0.0f);
    volatile double tiny = 1e-320;
    CHECK(tiny * 1.0 != 0.0);  // denormal doubles read as themselves again (no DAZ)
  }
}

TEST_CASE("a config with a subnormal init_scale trains, stores it and evaluates") {
  const fs::path cfg = write_text("subnormal.yaml",
                                  "name: subnormal\nswarm: {size: 2}\nmodel:\n  init_scale: 1.0e-320\n"
                                  "  layers:\n    - {units: 2}\ndata: {source: {type: spirals, n: 32}}\n"
                                  "train: {epochs: 2, batch_size: 16}\n");
  const fs::path out = scratch("subnormal.h5");
  fs::remove(out);
  TrainOptions t;
  t.config_path = cfg.string();
  t.out = out.string();
  t.threads = 1;  // the calling thread runs every block
  t.force = true;
  t.verbosity = Verbosity::Quiet;
  REQUIRE(run_train(t) == kExitOk);
  const RunFile r = read_run_file(out.string());
  const Config stored = parse_config(r.config_yaml, "stored");
  CHECK(stored.model.init_scale == 1e-320);
  EvalOptions e;
  e.run_path = out.string();
  e.out = scratch("subnormal-eval.json").string();
  e.force = true;
  e.threads = 1;
  e.verbosity = Verbosity::Quiet;
  CHECK(run_eval(e) == kExitOk);
}

TEST_CASE("--seed takes the whole uint64 range and refuses anything else") {
  CHECK(parse_seed("0") == std::optional<std::uint64_t>(0));
  CHECK(parse_seed("18446744073709551615") == std::optional<std::uint64_t>(18446744073709551615ull));
  for (const char* bad : {"18446744073709551616", "99999999999999999999999", "-1", "+1", "0x10", "1.5", "1e3", "", " 1"})
    CHECK_MESSAGE(!parse_seed(bad), bad);
  // The largest seed reaches the run file (it was stored as 2^63 - 1, or refused as -1).
  const fs::path cfg = write_text("seed.yaml", "name: seed\nswarm: {size: 2}\nmodel:\n  layers:\n    - {units: 2}\n"
                                               "data: {source: {type: spirals, n: 32}}\ntrain: {epochs: 1}\n");
  const fs::path out = scratch("seed.h5");
  TrainOptions t;
  t.config_path = cfg.string();
  t.out = out.string();
  t.seed = 18446744073709551615ull;
  t.force = true;
  t.verbosity = Verbosity::Quiet;
  REQUIRE(run_train(t) == kExitOk);
  CHECK(parse_config(read_run_file(out.string()).config_yaml, "stored").seed == 18446744073709551615ull);
}
