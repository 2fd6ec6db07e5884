// Helpers for the eval/predict command tests: scratch files, small trained runs, and
// capturing what a command prints on stdout or stderr.
#pragma once
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"

namespace evaltest {

namespace fs = std::filesystem;

inline fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("turbanet-eval-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path p = scratch(name);
  std::ofstream(p) << text;
  return p;
}

// Runs fn() with file descriptor `fd` (1 = stdout, 2 = stderr) sent to a file; returns
// what was written there.
inline std::string capture(int fd, const std::function<void()>& fn) {
  std::fflush(stdout);
  std::fflush(stderr);
  const fs::path p = scratch("captured-" + std::to_string(fd));
  const int saved = ::dup(fd);
  const int file = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(file, fd);
  ::close(file);
  fn();
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved, fd);
  ::close(saved);
  return slurp(p);
}

// The exit code fn() returns and what it logged on stderr.
inline std::pair<int, std::string> exit_and_stderr(const std::function<int()>& fn) {
  int rc = -1;
  std::string err = capture(2, [&] { rc = fn(); });
  return {rc, err};
}

// Trains `yaml` (a config) into a fresh run file `name`; requires success.
inline fs::path train_run(const std::string& name, const std::string& yaml) {
  const fs::path out = scratch(name + ".h5");
  tn::TrainOptions o;
  o.config_path = write_file(name + ".yaml", yaml).string();
  o.out = out.string();
  o.force = true;
  o.verbosity = tn::Verbosity::Quiet;
  REQUIRE(tn::run_train(o) == tn::kExitOk);
  return out;
}

// Runs eval with --json and parses what it prints; requires success.
inline nlohmann::json eval_json(tn::EvalOptions o) {
  o.json = true;
  int rc = -1;
  const std::string out = capture(1, [&] { rc = tn::run_eval(o); });
  REQUIRE(rc == tn::kExitOk);
  return nlohmann::json::parse(out);
}

inline tn::EvalOptions eval_opts(const fs::path& run) {
  tn::EvalOptions o;
  o.run_path = run.string();
  o.verbosity = tn::Verbosity::Quiet;
  return o;
}

// A bootstrapped spirals swarm with train/val/test splits; `extra` is appended.
inline std::string spirals_yaml(int members, int epochs, const std::string& extra = "") {
  return "name: evalcli\nseed: 3\nswarm: {size: " + std::to_string(members) +
         "}\nmodel:\n  layers:\n    - {type: dense, units: 16, activation: tanh}\n"
         "    - {type: dense, units: 16, activation: tanh}\n    - {type: dense, units: 2}\n"
         "loss: cross_entropy\noptimizer: {type: adam, lr: 0.02}\n"
         "data:\n  source: {type: spirals, n: 200, noise: 0.05}\n  split: {train: 0.7, val: 0.1, test: 0.2}\n"
         "  per_member: bootstrap\ntrain: {epochs: " + std::to_string(epochs) + ", batch_size: 64}\n" + extra;
}

}  // namespace evaltest
