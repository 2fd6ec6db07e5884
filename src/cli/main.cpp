// turbanet command line: parses arguments and dispatches to the subcommand functions.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <exception>

#include "cli/commands/commands.h"
#include "turbanet_version.h"

namespace {

void add_verbosity(CLI::App* cmd, bool* quiet, bool* verbose) {
  cmd->add_flag("-q,--quiet", *quiet, "Only warnings and errors");
  cmd->add_flag("-v,--verbose", *verbose, "Debug output (resolved config, kernel choice)");
}

tn::Verbosity verbosity(bool quiet, bool verbose) {
  return quiet ? tn::Verbosity::Quiet : verbose ? tn::Verbosity::Verbose : tn::Verbosity::Normal;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"turbanet: train swarms of small neural networks, vectorized over members"};
  app.set_version_flag("--version", std::string("turbanet ") + TURBANET_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  turbanet train configs/spirals.yaml\n"
      "  turbanet train configs/spirals-small.yaml --swarm 16 --set optimizer.lr=3e-3 --force\n"
      "  turbanet train configs/iris.yaml --threads 1 --out runs/iris-1.h5\n"
      "Exit codes: 0 ok, 1 I/O failure, 2 bad config/data/arguments, 3 some members diverged.");

  tn::TrainOptions train;
  bool quiet = false, verbose = false;
  long long seed = 0;
  int swarm = 0;
  std::string out;
  CLI::App* t = app.add_subcommand("train", "Train the swarm a YAML config describes; write runs/<name>.h5");
  t->add_option("config", train.config_path, "YAML configuration file")->required();
  t->add_option("--set", train.set, "Override a config key, e.g. --set optimizer.lr=3e-4 (repeatable)")
      ->allow_extra_args(false);
  t->add_option("--out", out, "Run file to write (overrides output.path)");
  t->add_option("--swarm", swarm, "Swarm size (overrides swarm.size)")->check(CLI::PositiveNumber);
  t->add_option("--seed", seed, "Seed for initialization and batch order (overrides seed)")->check(CLI::NonNegativeNumber);
  t->add_option("--threads", train.threads, "CPU threads (default: all cores)")->check(CLI::NonNegativeNumber);
  t->add_flag("--force", train.force, "Replace an existing run file");
  add_verbosity(t, &quiet, &verbose);
  t->footer("Example: turbanet train configs/spirals.yaml --swarm 32 --set train.epochs=200");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : tn::kExitUsage;
  }
  try {
    if (t->parsed()) {
      if (t->count("--out")) train.out = out;
      if (t->count("--swarm")) train.swarm = swarm;
      if (t->count("--seed")) train.seed = seed;
      train.verbosity = verbosity(quiet, verbose);
      return tn::run_train(train);
    }
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return tn::kExitIo;
  }
  return tn::kExitUsage;
}
