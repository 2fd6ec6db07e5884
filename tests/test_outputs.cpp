// Output files never lose a user's work: no file is replaced without --force (not even one
// created while a run trained), no command overwrites its own inputs, a replaced file keeps its
// permissions and symbolic link, a failed write to standard output is an error, and temporary
// files of killed writes are cleaned up.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "config/config.h"
#include "eval_test_util.h"
#include "io/text_file.h"
#include "run/train_run.h"

using namespace evaltest;

namespace {

const fs::path& trained() {
  static const fs::path run = train_run("outputs-run", spirals_yaml(2, 2));
  return run;
}

tn::PredictOptions predict_to(const fs::path& out) {
  tn::PredictOptions p;
  p.run_path = trained().string();
  p.input = write_file("outputs-inputs.csv", "x,y\n0.1,0.2\n0.3,-0.4\n").string();
  if (!out.empty()) p.out = out.string();
  p.verbosity = tn::Verbosity::Quiet;
  return p;
}

int mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return static_cast<int>(st.st_mode & 0777);
}

}  // namespace

TEST_CASE("outputs: a run file created while training is kept, and the result is written beside it") {
  const fs::path out = scratch("outputs-race.h5");
  fs::remove(out);
  tn::Config cfg = tn::parse_config(spirals_yaml(2, 1) + "output: {path: '" + out.string() + "'}\n", "race.yaml");
  tn::TrainingRun run(cfg, 1, /*force=*/false, std::chrono::steady_clock::now());
  std::ofstream(out) << "another process's file\n";  // appears after the start-up checks
  CHECK_THROWS_WITH_AS(run.run({}), doctest::Contains("created by another process meanwhile"), tn::RunFileError);
  CHECK(slurp(out) == "another process's file\n");
  int beside = 0;
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    if (e.path().filename().string().rfind("outputs-race.", 0) == 0 && e.path() != out) {
      ++beside;
      CHECK(tn::read_run_file(e.path().string()).meta.swarm_size == 2);
      fs::remove(e.path());
    }
  CHECK(beside == 1);
}

TEST_CASE("outputs: --out needs --force to replace a file and never replaces the command's inputs") {
  const fs::path out = scratch("outputs-pred.csv");
  std::ofstream(out) << "keep me\n";
  int rc = 0;
  capture(2, [&] { rc = tn::run_predict(predict_to(out)); });
  CHECK(rc == tn::kExitUsage);
  CHECK(slurp(out) == "keep me\n");
  tn::PredictOptions forced = predict_to(out);
  forced.force = true;
  CHECK(tn::run_predict(forced) == tn::kExitOk);
  CHECK(slurp(out).rfind("row,", 0) == 0);
  // Its own run file, even with --force.
  const std::string before = slurp(trained());
  tn::PredictOptions self = predict_to(trained());
  self.force = true;
  std::string err;
  std::tie(rc, err) = exit_and_stderr([&] { return tn::run_predict(self); });
  CHECK(rc == tn::kExitUsage);
  CHECK(err.find("is the command's own input") != std::string::npos);
  CHECK(slurp(trained()) == before);
  // eval's report and sweep's table likewise.
  tn::EvalOptions e = eval_opts(trained());
  e.out = out.string() + ".json";
  std::ofstream(*e.out) << "{}";
  capture(1, [&] { std::tie(rc, err) = exit_and_stderr([&] { return tn::run_eval(e); }); });
  CHECK(rc == tn::kExitUsage);
  CHECK(err.find("already exists; pass --force") != std::string::npos);
  CHECK(slurp(*e.out) == "{}");
}

TEST_CASE("outputs: a replaced file keeps its permissions and its symbolic link") {
  const fs::path target = scratch("outputs-target.csv"), link = scratch("outputs-link.csv");
  std::ofstream(target) << "old\n";
  REQUIRE(::chmod(target.c_str(), 0600) == 0);
  fs::remove(link);
  fs::create_symlink(target, link);
  tn::PredictOptions p = predict_to(link);
  p.force = true;
  REQUIRE(tn::run_predict(p) == tn::kExitOk);
  CHECK(fs::is_symlink(link));
  CHECK(slurp(target).rfind("row,", 0) == 0);
  CHECK(mode_of(target) == 0600);
}

TEST_CASE("outputs: a failed write to standard output exits 1") {
  const int full = ::open("/dev/full", O_WRONLY);
  if (full < 0) {
    MESSAGE("SKIPPED: no /dev/full on this machine");
    return;
  }
  std::fflush(stdout);
  const int saved = ::dup(1);
  ::dup2(full, 1);
  ::close(full);
  int rc = -1;
  capture(2, [&] { rc = tn::run_predict(predict_to("")); });
  std::clearerr(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  CHECK(rc == tn::kExitIo);
}

TEST_CASE("outputs: temporary files of killed writes are removed by the next write to the path") {
  const fs::path out = scratch("outputs-stale.txt");
  // A process id that is not running (the largest possible) and one that is (this one's parent).
  const fs::path dead = out.parent_path() / ".outputs-stale.txt.tmp-4194304-0";
  const fs::path live = out.parent_path() / (".outputs-stale.txt.tmp-" + std::to_string(::getppid()) + "-0");
  std::ofstream(dead) << "left by a killed write";
  std::ofstream(live) << "another process still writing";
  tn::write_text_atomically(out.string(), "new\n");
  CHECK(slurp(out) == "new\n");
  CHECK(!fs::exists(dead));
  CHECK(fs::exists(live));
  fs::remove(live);
}
