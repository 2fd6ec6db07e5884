// Limits and number ranges: a subnormal init_scale, configs whose sizes overflow, and runs
// that would not fit the machine's memory. (The flush-to-zero mode of the CPU backend's
// threads: tests/test_for_each_block.cpp.)
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <omp.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "cli/commands/commands.h"
#include "config/config.h"
#include "config_test_util.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "io/run_file.h"
#include "cli_test_util.h"
#include "math/saturate.h"
#include "model/model_ops.h"
#include "train/memory_plan.h"
#include "train/trainer.h"

using namespace tn;
using tn::test::error_of;
using tn::test::logged;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) { return tn::test::scratch_path("limits", name); }
fs::path write_text(const std::string& name, const std::string& text) { return tn::test::write_text(scratch(name), text); }

}  // namespace

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

namespace {

// Sets what available_memory() returns for the lifetime of the object.
struct AvailableMemory {
  explicit AvailableMemory(std::uint64_t bytes) { override_available_memory(bytes); }
  ~AvailableMemory() { override_available_memory(std::nullopt); }
};

const std::string kSpirals =
    "name: limits\ndevice: cpu\nswarm: {size: 4}\nmodel:\n  layers:\n    - {type: dense, units: 16, activation: relu}\n"
    "    - {type: dense, units: 2}\ndata:\n  source: {type: spirals, n: 64}\n  split: {train: 0.5, test: 0.5}\n"
    "train: {epochs: 2, batch_size: 16}\n";

TrainOptions train_options(const std::string& name, const std::string& yaml) {
  TrainOptions t;
  t.config_path = write_text(name + ".yaml", yaml).string();
  t.out = scratch(name + ".h5").string();
  fs::remove(*t.out);
  t.threads = 1;
  t.verbosity = Verbosity::Quiet;
  return t;
}

}  // namespace

TEST_CASE("memory planner: sizes saturate instead of overflowing") {
  CHECK(sat_mul(std::int64_t{1} << 40, std::int64_t{1} << 40) == kSaturated);
  CHECK(sat_mul(3, 4, 5) == 60);
  CHECK(sat_add(kSaturated, 1) == kSaturated);
  CHECK(format_bytes(kSaturated) == "more than 8 EiB");
  CHECK(format_bytes(3ll << 40) == "3.0 TiB");
  // A swarm of 2^31 - 1 members in chunks: the chunk count stays positive (it was -1148).
  MemoryEstimate e;
  e.per_member = 1 << 20;
  e.data_bytes = 10 << 20;
  e.reserve_bytes = 64 << 20;
  const ChunkPlan p = plan_chunks(e, 2147483647, 1ull << 30);
  CHECK(p.chunk == 847);
  CHECK(p.chunks == (2147483647ll + 846) / 847);
  CHECK(e.total(2147483647) == (74ll << 20) + 2147483647ll * (1 << 20));
  // An absurd recurrent shape: every product saturates; one member does not fit any device.
  ModelShape s;
  s.seq_len = 2147483647;
  s.step_features = 1;
  s.recurrent = {{CellType::Lstm, 1, 2147483647, false}};
  s.layers = {{2147483647, 2147483647, Activation::Identity}};
  CHECK(s.params_per_member() == kSaturated);
  CHECK(model_buffer_bytes_per_member(s, 2147483647, 1) == kSaturated);
  const MemoryEstimate huge = estimate_memory(s, 2147483647, 1, 0, 2147483647);
  CHECK(huge.per_member == kSaturated);
  CHECK(huge.total(2147483647) == kSaturated);
  CHECK_THROWS_AS(plan_chunks(huge, 2147483647, 80ull << 30), BackendError);
}

TEST_CASE("config sizes whose products overflow are refused when the config is read") {
  const std::string model = "data: {source: spirals}\nmodel:\n  layers:\n";
  CHECK_HAS(error_of(model + "    - {units: 2147483647}\n    - {units: 2147483647}\n    - {units: 2}\n"),
            "cfg.yaml:5:15: model.layers[1].units: the layers up to this one have more parameters per member than can "
            "be counted (their parameters, gradients and optimizer state would take more than 8 EiB); use fewer units");
  CHECK_HAS(error_of(model + "    - {units: 1000000}\n    - {units: 1000000}\n    - {units: 2}\nswarm: {size: 2000000000}\n"),
            "swarm.size: 2000000000 members of 1000004000002 parameters or more each need more than 8 EiB");
  CHECK_HAS(error_of(model + "    - {units: 2}\nswarm: {size: 2000000000}\ntrain: {epochs: 2147483647}\n"),
            "train.epochs: 2147483647 epochs of loss history for 2000000000 members need more than 8 EiB; "
            "reduce train.epochs or swarm.size");
  CHECK_HAS(error_of("loss: mse\nmodel: {layers: [{units: 1}]}\ndata:\n  source: {type: random_walk, series: 1000000, "
                     "length: 100000000}\n  sequence: {window: 20, target: close}\n  per_member: {group_by: ticker}\n"),
            "data.source: 1000000 series x 100000000 steps make 100000000000000 rows, more than the 2147483647 a data "
            "set can have; reduce data.source.series or data.source.length");
  // Large but countable: left to the memory check before the run.
  CHECK_HAS(error_of(model + "    - {units: 1000000}\n    - {units: 1000000}\n    - {units: 2}\nswarm: {size: 1000}\n"),
            "<no error>");
}

TEST_CASE("a run that does not fit in memory is refused before any work, with the estimate and what to reduce") {
  // 200000 members of a 2-16-2 model predicting 32 test samples: about 1 GiB.
  const TrainOptions t = train_options("too-big", kSpirals + "output: {path: unused.h5}\n");
  TrainOptions big = t;
  big.swarm = 200000;
  {
    const AvailableMemory available(256ull << 20);
    int rc = -1;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string msg = logged([&] { rc = run_train(big); });
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5.0);
    CHECK(rc == kExitUsage);
    CHECK_FALSE(fs::exists(*big.out));
    CHECK_HAS(msg, "the run does not fit in memory: it needs an estimated ");
    CHECK_HAS(msg, " bytes) while writing the run file, mostly ");
    CHECK_HAS(msg, "predictions 5 x [200000, 32, 2]");
    CHECK_HAS(msg, "but 256.0 MiB is available (MemAvailable 256.0 MiB plus ");
    CHECK_HAS(msg, " members fit: reduce swarm.size (or train the swarm in slices with swarm.first_member)");
  }
  // The same config when the memory is there, and when it cannot be read (0: not checked).
  for (const std::uint64_t bytes : {64ull << 30, 0ull}) {
    const AvailableMemory available(bytes);
    TrainOptions small = t;
    small.force = true;
    CHECK(run_train(small) == kExitOk);
  }
}

TEST_CASE("the largest swarm a memory message offers does fit") {
  const Config cfg = parse_config(kSpirals, "cfg.yaml", {{"swarm.size", "50000"}});
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  const MemberSets sets = make_member_sets(cfg, data);
  CpuBackend be(1);
  const HostMemoryEstimate est = estimate_host_memory(cfg, data, sets, be, true);
  const std::int64_t avail = est.peak() / 4 * 3;
  CAPTURE(est.peak());
  const std::int64_t fit = est.max_members(sat_add(avail, est.loaded_bytes));
  REQUIRE(fit > 0);
  REQUIRE(fit < 50000);
  const AvailableMemory available(static_cast<std::uint64_t>(avail));
  try {
    plan_training(cfg, data, sets, be, true);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK_HAS(std::string(e.what()), "at most " + std::to_string(fit) + " of the 50000 members fit");
  }
  Config fits = cfg;
  fits.swarm.size = static_cast<int>(fit);
  const MemberSets fit_sets = make_member_sets(fits, data);
  CHECK_NOTHROW(plan_training(fits, data, fit_sets, be, true));
  // Training alone (turbanet sweep) is one of the phases of training with the run file.
  const HostMemoryEstimate training = estimate_host_memory(cfg, data, sets, be, false);
  CHECK(training.phases.size() == 1);
  CHECK(est.phases.size() == 3);
  CHECK(training.peak() == est.phases[0].bytes(est.members));
}

TEST_CASE("generated data that would not fit are refused before they are made") {
  const AvailableMemory available(1ull << 30);
  TrainOptions t = train_options("huge-n", kSpirals);
  t.set = {"data.source.n=2000000000"};
  int rc = -1;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = logged([&] { rc = run_train(t); });
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5.0);
  CHECK(rc == kExitUsage);
  CHECK_HAS(msg, "data.source.n: the generated data (2000000000 samples) need an estimated 52.2 GiB (56067108864 bytes) "
                 "of memory, but 1.0 GiB is available (MemAvailable); reduce data.source.n");
  Config walk = parse_config("loss: mse\nmodel: {layers: [{units: 1}]}\ndata:\n  source: {type: random_walk, series: 1000, "
                             "length: 1000000}\n  sequence: {window: 200, target: close}\n  per_member: {group_by: ticker}\n",
                             "walk.yaml");
  try {
    check_generated_data_memory(walk);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK_HAS(std::string(e.what()), "data.source: the generated data (1000 series x 1000000 steps in 999800000 windows of "
                                     "200 steps) need an estimated");
    CHECK_HAS(std::string(e.what()), "reduce data.source.series, data.source.length or data.sequence.window, or raise "
                                     "data.sequence.stride");
  }
}

TEST_CASE("turbanet sweep refuses a swarm that does not fit before it measures anything") {
  const AvailableMemory available(256ull << 20);
  SweepOptions o;
  o.config_path = write_text("sweep.yaml", kSpirals).string();
  o.swarm = "1,200000";
  o.repeats = 1;
  o.peak_n = 64;
  o.verbosity = Verbosity::Quiet;
  int rc = -1;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = logged([&] { rc = run_sweep(o); });
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5.0);
  CHECK(rc == kExitUsage);
  CHECK_HAS(msg, "the run does not fit in memory: it needs an estimated ");
  CHECK_HAS(msg, " while training, mostly ");
}

TEST_CASE("--threads above the hardware's count is capped to it, with a warning") {
  const int hardware = std::max(1, omp_get_num_procs());
  int workers = 0;
  const std::string msg = logged([&] {
    setup_logging(Verbosity::Normal);
    workers = CpuBackend(1000000).workers();
  });
  CHECK(workers == hardware);
  CHECK_HAS(msg, "threads: 1000000 requested, but this machine has " + std::to_string(hardware) +
                     " hardware threads; using " + std::to_string(hardware));
  CHECK(CpuBackend(1).workers() == 1);
  setup_logging(Verbosity::Quiet);
}

TEST_CASE("threads by default: the cores this process may use, fewer when OMP_NUM_THREADS says so") {
  const int hardware = std::max(1, omp_get_num_procs());
  const char* was = std::getenv("OMP_NUM_THREADS");
  const std::string saved = was ? was : "";
  ::unsetenv("OMP_NUM_THREADS");
  CHECK(CpuBackend(0).workers() == hardware);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  CHECK(CpuBackend(0).workers() == 1);
  CHECK(CpuBackend(2).workers() == std::min(2, hardware));  // --threads wins
  ::setenv("OMP_NUM_THREADS", "100000", 1);
  CHECK(CpuBackend(0).workers() == hardware);
  for (const char* bad : {"0", "-3", "two", "4,2", ""}) {
    ::setenv("OMP_NUM_THREADS", bad, 1);
    CHECK(CpuBackend(0).workers() == hardware);
  }
  if (was) ::setenv("OMP_NUM_THREADS", saved.c_str(), 1);
  else ::unsetenv("OMP_NUM_THREADS");
}

TEST_CASE("an integer above what a key can hold names the largest allowed value") {
  CHECK_HAS(error_of(std::string(tn::test::kMinimal) + "swarm: {size: 3000000000}\n"),
            "swarm.size: value 3000000000 is out of range; expected an integer in [1, 2147483647]");
  CHECK_HAS(error_of("model: {layers: [{units: 2}]}\ndata: {source: {type: spirals, n: 99999999999999999999999}}\n"),
            "data.source.n: value 99999999999999999999999 is out of range; expected an integer in [2, 2147483647]");
  CHECK_HAS(error_of("model: {layers: [{units: 2}]}\ndata: {source: {type: spirals, n: -99999999999999999999999}}\n"),
            "data.source.n: value -99999999999999999999999 is out of range; expected an integer >= 2");
  CHECK_HAS(error_of(std::string(tn::test::kMinimal) + "train: {epochs: 0}\n"),
            "train.epochs: value 0 is out of range; expected an integer >= 1");
}
