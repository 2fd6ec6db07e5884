// Test helpers for commands run as functions: scratch files, the log lines printed while a
// function runs, and a file's bytes; and for the binary run in another working directory.
#pragma once
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "cli/commands/commands.h"
#include "util/log.h"

namespace tn::test {

// `name` in this process's scratch directory of `area` (/tmp/turbanet-<area>-<pid>/, created).
inline std::filesystem::path scratch_path(const std::string& area, const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("turbanet-" + area + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d / name;
}

// Writes `text` to `p` and returns p.
inline std::filesystem::path write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p;
}

// What the logger printed while fn ran (the messages a user sees).
template <class Fn>
std::string logged(Fn&& fn) {
  setup_logging(Verbosity::Quiet);
  std::ostringstream text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.push_back(sink);
  fn();
  sinks.pop_back();
  return text.str();
}

// The bytes of file p ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs the turbanet binary (TURBANET_BINARY) with `args` in working directory `dir`; its exit
// code (1000 + signal when killed) and everything it printed on stdout and stderr.
inline std::pair<int, std::string> run_binary_in(const std::filesystem::path& dir, std::vector<std::string> args) {
  const std::filesystem::path log = scratch_path("binary", "output-" + std::to_string(::getpid()));
  args.insert(args.begin(), TURBANET_BINARY);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    std::FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    ::dup2(STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int rc = WIFSIGNALED(status) ? 1000 + WTERMSIG(status) : WEXITSTATUS(status);
  return {rc, slurp(log)};
}

// The shipped configs (configs/*.yaml) as (name, path), each to be trained with its settings in
// `reduced`: a config missing there fails the test (a new config needs reduced settings), and
// the Fashion-MNIST ones are skipped, saying so, when dataset-fashion-mnist is not installed.
inline std::vector<std::pair<std::string, std::filesystem::path>> shipped_configs(
    const std::map<std::string, std::vector<std::string>>& reduced) {
  std::vector<std::pair<std::string, std::filesystem::path>> r;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(TURBANET_SOURCE_DIR) / "configs")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string name = e.path().stem().string();
    REQUIRE_MESSAGE(reduced.count(name), "configs/" << name << ".yaml is new: add its reduced settings to this test");
    if (name.rfind("fashion", 0) == 0 && !std::filesystem::exists("/usr/share/datasets/fashion-mnist")) {
      MESSAGE("SKIPPED " << name << ": dataset-fashion-mnist is not installed");
      continue;
    }
    r.emplace_back(name, e.path());
  }
  return r;
}

// Trains config `path` with the overrides `set` into `out` (replaced if there), quietly; the
// test stops there, naming `name`, unless training succeeds. Returns `out`.
inline std::filesystem::path train_quietly(const std::string& name, const std::filesystem::path& path,
                                           const std::vector<std::string>& set, const std::filesystem::path& out) {
  tn::TrainOptions o;
  o.config_path = path.string();
  o.set = set;
  o.out = out.string();
  o.force = true;
  o.verbosity = tn::Verbosity::Quiet;
  REQUIRE_MESSAGE(tn::run_train(o) == tn::kExitOk, name);
  return out;
}

// The comma-separated cells of one CSV line (no quoting).
inline std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  for (std::size_t end; (end = line.find(',', start)) != std::string::npos; start = end + 1)
    cells.push_back(line.substr(start, end - start));
  cells.push_back(line.substr(start));
  return cells;
}

}  // namespace tn::test
