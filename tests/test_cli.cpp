// `turbanet train` called as a function: exit codes, messages, and what reaches the disk.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "backend/device_choice.h"
#include "cli/commands/commands.h"
#include "io/run_file.h"
#include "cli_test_util.h"

using namespace tn;
using tn::test::logged;
using tn::test::slurp;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) { return tn::test::scratch_path("cli", name); }
fs::path write_config(const std::string& name, const std::string& text) { return tn::test::write_text(scratch(name), text); }

const std::string kGood =
    "name: cli\nseed: 1\nswarm: {size: 4}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: relu}\n"
    "    - {type: dense, units: 2}\nloss: cross_entropy\noptimizer: {type: adam, lr: 0.01}\n"
    "data:\n  source: {type: spirals, n: 64}\n  split: {train: 0.75, test: 0.25}\ntrain: {epochs: 5, batch_size: 16}\n";

TrainOptions opts(const fs::path& cfg, const fs::path& out) {
  TrainOptions o;
  o.config_path = cfg.string();
  o.out = out.string();
  o.verbosity = Verbosity::Quiet;
  return o;
}

}  // namespace

TEST_CASE("a good config trains and writes a complete run file") {
  const fs::path out = scratch("good.h5");
  fs::remove(out);
  REQUIRE(run_train(opts(write_config("good.yaml", kGood), out)) == kExitOk);
  const RunFile r = read_run_file(out.string());
  CHECK(r.meta.swarm_size == 4);
  CHECK(r.meta.epochs == 5);
  CHECK(r.meta.steps == 5 * 3);  // 48 training samples in batches of 16
  REQUIRE(r.params.size() == 2);
  CHECK(r.params[0]["W"].shape == std::vector<std::uint64_t>{4, 2, 8});
  CHECK(r.params[1]["b"].shape == std::vector<std::uint64_t>{4, 2});
  CHECK(r.params[0]["W"].data != r.init_params[0]["W"].data);
  CHECK(r.train_loss.shape == std::vector<std::uint64_t>{4, 5});
  const Predictions* pred = r.find_predictions("test");
  REQUIRE(pred != nullptr);
  CHECK(pred->members.shape == std::vector<std::uint64_t>{4, 16, 2});
  // The ensemble mean is the mean of the member probabilities.
  for (std::size_t i = 0; i < 32; ++i) {
    double m = 0;
    for (int s = 0; s < 4; ++s) m += pred->members.data[s * 32 + i];
    CHECK(pred->ensemble_mean.data[i] == doctest::Approx(m / 4).epsilon(1e-6));
  }
  CHECK(r.config_yaml.find("name: cli") != std::string::npos);
}

TEST_CASE("an existing run file is kept unless --force") {
  const fs::path out = scratch("exists.h5");
  std::ofstream(out) << "precious";
  const fs::path cfg = write_config("exists.yaml", kGood);
  CHECK(run_train(opts(cfg, out)) == kExitUsage);
  CHECK(slurp(out) == "precious");
  TrainOptions forced = opts(cfg, out);
  forced.force = true;
  CHECK(run_train(forced) == kExitOk);
  CHECK(read_run_file(out.string()).meta.swarm_size == 4);
}

TEST_CASE("bad input exits 2 and writes nothing") {
  const fs::path out = scratch("bad.h5");
  fs::remove(out);
  SUBCASE("missing config file") { CHECK(run_train(opts(scratch("nope.yaml"), out)) == kExitUsage); }
  SUBCASE("typo in a key") {
    std::string text = kGood;
    text.replace(text.find("optimizer:"), 10, "optimiser:");
    const fs::path cfg = write_config("typo.yaml", text);
    int code = -1;
    const std::string log = logged([&] { code = run_train(opts(cfg, out)); });
    CHECK(code == kExitUsage);
    // The user is told where (file:line:column), what, and the fix.
    CHECK(log.find(cfg.string() + ":9:1: optimiser: unknown key") != std::string::npos);
    CHECK(log.find("did you mean 'optimizer'?") != std::string::npos);
  }
  SUBCASE("bad --set") {
    TrainOptions o = opts(write_config("set.yaml", kGood), out);
    o.set = {"optimizer.lr=-1"};
    CHECK(run_train(o) == kExitUsage);
  }
  SUBCASE("output units do not match the classes") {
    std::string text = kGood;
    text.replace(text.find("units: 2}"), 9, "units: 3}");
    CHECK(run_train(opts(write_config("units.yaml", text), out)) == kExitUsage);
  }
  SUBCASE("cuda requested in a build without it") {
    std::string why;
    if (!tn::list_gpus(&why).empty()) {
      MESSAGE("SKIPPED: this machine has a GPU, so device: cuda trains");
      return;
    }
    CHECK(run_train(opts(write_config("cuda.yaml", "device: cuda\n" + kGood), out)) == kExitUsage);
  }
  SUBCASE("missing CSV file") {
    const std::string text =
        "model:\n  layers:\n    - {type: dense, units: 3}\ndata:\n  source: {type: csv, path: /nonexistent/x.csv, target: y}\n";
    CHECK(run_train(opts(write_config("csv.yaml", text), out)) == kExitUsage);
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("an output path that cannot be written fails before training") {
  const fs::path blocker = scratch("blocker");
  std::ofstream(blocker) << "a file, not a directory";
  CHECK(run_train(opts(write_config("blocked.yaml", kGood), blocker / "run.h5")) == kExitUsage);
  CHECK(run_train(opts(write_config("blocked.yaml", kGood), fs::temp_directory_path())) == kExitUsage);
}

TEST_CASE("diverging members are reported: exit 3, file written, members marked") {
  const fs::path out = scratch("diverge.h5");
  fs::remove(out);
  TrainOptions o = opts(write_config("diverge.yaml", kGood), out);
  o.set = {"optimizer={type: sgd, lr: 1.0e30}"};
  CHECK(run_train(o) == kExitDiverged);
  const RunFile r = read_run_file(out.string());
  int diverged = 0;
  for (int e : r.diverged_epoch) diverged += e > 0;
  CHECK(diverged > 0);
}

TEST_CASE("CLI flags override the config") {
  const fs::path out = scratch("flags.h5");
  fs::remove(out);
  TrainOptions o = opts(write_config("flags.yaml", kGood), out);
  o.swarm = 3;
  o.seed = 99;
  o.threads = 1;
  REQUIRE(run_train(o) == kExitOk);
  const RunFile r = read_run_file(out.string());
  CHECK(r.meta.swarm_size == 3);
  CHECK(r.meta.threads == 1);
  CHECK(r.config_yaml.find("seed: 99") != std::string::npos);
}

namespace {

// Runs `turbanet ARGS` with standard output on /dev/full (a full disk): its exit code and what
// it printed on stderr.
std::pair<int, std::string> run_on_full_disk(const std::string& args) {
  const fs::path err = scratch("full-disk-stderr");
  const int status = std::system((std::string(TURBANET_BINARY) + " " + args + " >/dev/full 2>" + err.string()).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 1000, slurp(err)};
}

}  // namespace

TEST_CASE("--help, --version and devices with standard output on a full disk exit 1, saying so") {
  if (!fs::exists("/dev/full")) {
    MESSAGE("SKIPPED: no /dev/full on this machine");
    return;
  }
  for (const std::string args : {"--version", "--help", "train --help", "devices"}) {
    const auto [rc, err] = run_on_full_disk(args);
    CAPTURE(args);
    CHECK(rc == kExitIo);  // 0 before: the lost output went unnoticed
    CHECK_MESSAGE(err.find("writing to standard output failed: No space left on device") != std::string::npos, err);
  }
  const auto [rc, out] = tn::test::run_binary_in(scratch(""), {"--version"});
  CHECK(rc == kExitOk);
  CHECK(out.rfind("turbanet ", 0) == 0);
}
