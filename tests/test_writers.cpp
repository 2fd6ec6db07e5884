// Temporary files cannot be redirected and writers of one file take turns: a symbolic link
// planted at a temporary name is never followed, every legal output name (up to 255 bytes) can
// be written, a loop of symbolic links is refused as such, eval --save reads the run file again
// under its lock (records stored meanwhile are kept, a run that replaced it is not overwritten),
// and a training run owns its checkpoint and run file until it ends.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "config/config.h"
#include "eval_test_util.h"
#include "io/atomic_file.h"
#include "io/file_lock.h"
#include "io/text_file.h"
#include "run/evaluate_run.h"
#include "run/train_run.h"

using namespace evaltest;

namespace {

const fs::path& trained() {
  static const fs::path run = train_run("writers-run", spirals_yaml(2, 2));
  return run;
}

// Starts the turbanet binary with `args` (stdout and stderr to `log`); the child runs it only
// once before(child's pid) has returned. Returns the child's pid.
pid_t start_binary(std::vector<std::string> args, const fs::path& log, const std::function<void(pid_t)>& before = {}) {
  int go[2];
  REQUIRE(::pipe(go) == 0);
  args.insert(args.begin(), TURBANET_BINARY);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(go[1]);
    char c = 0;
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (::read(go[0], &c, 1) != 1 || out < 0) ::_exit(126);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(go[0]);
  if (before) before(pid);
  CHECK(::write(go[1], "x", 1) == 1);
  ::close(go[1]);
  return pid;
}

// The exit code of child `pid` (1000 + signal when killed).
int exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 1000 + WTERMSIG(status) : WEXITSTATUS(status);
}

// A child process that holds the lock of `path` (io/file_lock.h) until killed.
pid_t hold_lock_in_child(const fs::path& path) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const tn::io::LockAttempt a = tn::io::lock_file(path.string(), tn::io::Hold::Run);
    if (::write(ready[1], a.lock.held() ? "1" : "0", 1) != 1) ::_exit(1);
    for (;;) ::pause();
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  ::close(ready[1]);
  REQUIRE(c == '1');
  return pid;
}

tn::Config spirals_to(const fs::path& out, int seed = 3) {
  return tn::parse_config(spirals_yaml(2, 1) + "output: {path: '" + out.string() + "'}\n", "writers.yaml",
                          {{"seed", std::to_string(seed)}});
}

std::vector<std::string> eval_names(const fs::path& run) {
  std::vector<std::string> names;
  for (const tn::EvalRecord& e : tn::read_run_file(run.string()).evals) names.push_back(e.split);
  return names;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// eval of `run` on its default split with the defaults of the command, on one thread.
tn::EvalOutcome evaluate_on_one_thread(const fs::path& run) {
  tn::EvalRequest req;
  req.run_path = run.string();
  req.threads = 1;
  return tn::evaluate_stored(req);
}

}  // namespace

TEST_CASE("writers: a symbolic link planted at the temporary names train and predict pick is not followed") {
  const fs::path dir = scratch("writers-plant");
  fs::create_directories(dir);
  const fs::path victim = dir / "victim.txt", input = write_file("writers-plant-in.csv", "x,y\n0.1,0.2\n0.3,-0.4\n");
  std::ofstream(victim) << "precious\n";
  const fs::path config = write_file("writers-plant.yaml", spirals_yaml(2, 1));
  struct Command {
    std::string out;
    std::vector<std::string> args;
  };
  const std::vector<Command> commands = {
      {"pred.csv", {"predict", trained().string(), "--input", input.string(), "--out", (dir / "pred.csv").string()}},
      {"run.h5", {"train", config.string(), "--out", (dir / "run.h5").string(), "-q"}}};
  for (const Command& c : commands) {
    CAPTURE(c.out);
    std::vector<fs::path> planted;
    const auto plant = [&](pid_t pid) {  // the names of the child's first writes and its checkpoint's
      for (const std::string& name : {c.out, std::string("run.ckpt.h5")})
        for (int n = 0; n < 20; ++n)
          planted.push_back(dir / ("." + name + ".tmp-" + std::to_string(pid) + "-" + std::to_string(n)));
      planted.push_back(dir / (".turbanet-probe-" + std::to_string(pid)));  // train's old writability probe
      for (const fs::path& p : planted) fs::create_symlink(victim, p);
    };
    const int rc = exit_code(start_binary(c.args, dir / "log.txt", plant));
    CHECK_MESSAGE(rc == 0, slurp(dir / "log.txt"));
    CHECK(slurp(victim) == "precious\n");
    CHECK(fs::file_size(dir / c.out) > 0);
    for (const fs::path& p : planted) {
      CHECK(fs::is_symlink(fs::symlink_status(p)));
      fs::remove(p);
    }
  }
}

TEST_CASE("writers: output names of up to 255 bytes are written with their checkpoint, longer ones are refused before any work") {
  const fs::path dir = scratch("writers-long");
  fs::create_directories(dir);
  for (std::size_t n : {247, 251, 255}) {
    const fs::path text = dir / (std::string(n - 4, 't') + ".csv");
    tn::write_text_atomically(text.string(), "a\n");
    CHECK(slurp(text) == "a\n");
    tn::write_text_atomically(text.string(), "b\n");  // replacing, with the stale-temporary clean-up
    CHECK(slurp(text) == "b\n");
  }
  const fs::path run = dir / (std::string(252, 'r') + ".h5");  // 255 bytes
  tn::Config cfg = spirals_to(run);
  CHECK(fs::path(cfg.train.checkpoint.path).filename().native().size() <= 255);
  CHECK(fs::path(cfg.train.checkpoint.path).filename().string().find(".ckpt.h5") != std::string::npos);
  cfg.train.checkpoint.every_epochs = 1;
  {
    tn::TrainingRun train(cfg, 1, true, std::chrono::steady_clock::now());
    train.run({});
  }
  CHECK(tn::read_run_file(run.string()).meta.swarm_size == 2);
  CHECK(tn::read_run_file(cfg.train.checkpoint.path).state.present());
  for (const auto& e : fs::directory_iterator(dir)) {  // no temporary or lock file left
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
    CHECK(e.path().extension() != ".lock");
  }
  tn::Config too_long = spirals_to(dir / (std::string(253, 'r') + ".h5"));
  too_long.train.checkpoint.path = (dir / "short.ckpt.h5").string();
  CHECK_THROWS_WITH_AS(tn::TrainingRun(too_long, 1, true, std::chrono::steady_clock::now()),
                       doctest::Contains("its file name is 256 bytes long"), tn::UsageError);
}

TEST_CASE("writers: temporary files of killed writes are removed unless a writer on another machine locks them") {
  const fs::path out = scratch(std::string(240, 's') + ".txt");  // a long name: its temporaries' names are cut
  const std::string prefix = fmt::format(".{}.tmp-", tn::io::fitted_name(out.filename().string(), 255 - 1 - 26));
  const fs::path dead = out.parent_path() / (prefix + "4194304-0"), remote = out.parent_path() / (prefix + "4194304-1");
  std::ofstream(dead) << "left by a killed write";
  std::ofstream(remote) << "being written on another machine";
  const int fd = ::open(remote.c_str(), O_RDWR);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  tn::write_text_atomically(out.string(), "new\n");
  CHECK(slurp(out) == "new\n");
  CHECK(!fs::exists(dead));
  CHECK(fs::exists(remote));
  ::close(fd);
  fs::remove(remote);
}

TEST_CASE("writers: a loop of symbolic links is refused as such, before any work, and nothing is written") {
  const fs::path dir = scratch("writers-loop");
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink("l2.csv", dir / "l1.csv");
  fs::create_symlink("l1.csv", dir / "l2.csv");
  const std::string l1 = (dir / "l1.csv").string(), loop = "'" + l1 + "' is a loop of symbolic links",
                    train_loop = "output.path: " + loop;
  CHECK_THROWS_WITH_AS(tn::write_text_atomically(l1, "x\n"), doctest::Contains(loop.c_str()), tn::RunFileError);
  CHECK_THROWS_WITH_AS(tn::TrainingRun(spirals_to(l1), 1, true, std::chrono::steady_clock::now()),
                       doctest::Contains(train_loop.c_str()), tn::UsageError);
  tn::PredictOptions p;
  p.run_path = trained().string();
  p.input = write_file("writers-loop-in.csv", "x,y\n0.1,0.2\n").string();
  p.out = l1;
  p.force = true;
  p.verbosity = tn::Verbosity::Quiet;
  const auto [rc, err] = exit_and_stderr([&] { return tn::run_predict(p); });
  CHECK(rc == tn::kExitUsage);
  CHECK(err.find("is a loop of symbolic links") != std::string::npos);
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  CHECK(entries == 2);  // the links alone: no l2.<pid>-0.csv beside them
}

TEST_CASE("writers: two eval --save on one run file at once both land") {
  const fs::path run = scratch("writers-saves.h5");
  fs::copy_file(trained(), run, fs::copy_options::overwrite_existing);
  for (int round = 0; round < 4; ++round) {
    const std::string a = fmt::format("a{}", round), b = fmt::format("b{}", round);
    const pid_t pa = start_binary({"eval", run.string(), "--save", a, "-q"}, scratch("writers-save-a.log"));
    const pid_t pb = start_binary({"eval", run.string(), "--save", b, "-q"}, scratch("writers-save-b.log"));
    CHECK_MESSAGE(exit_code(pa) == 0, slurp(scratch("writers-save-a.log")));
    CHECK_MESSAGE(exit_code(pb) == 0, slurp(scratch("writers-save-b.log")));
    const std::vector<std::string> names = eval_names(run);
    CHECK_MESSAGE(has(names, a), "round " << round);
    CHECK_MESSAGE(has(names, b), "round " << round);
  }
}

TEST_CASE("writers: eval --save refuses a run file that another run replaced while it evaluated, and writes nothing") {
  const fs::path run = scratch("writers-replaced.h5");
  fs::copy_file(trained(), run, fs::copy_options::overwrite_existing);
  tn::EvalOutcome o = evaluate_on_one_thread(run);
  {  // train --force meanwhile: another seed, another run
    tn::TrainingRun other(spirals_to(run, 4), 1, true, std::chrono::steady_clock::now());
    other.run({});
  }
  const std::string replaced = slurp(run);
  CHECK_THROWS_WITH_AS(tn::save_evaluation(o, "late", run.string(), false),
                       doctest::Contains("was replaced by another run while this one was evaluated"), tn::UsageError);
  CHECK(slurp(run) == replaced);
  // A record of the same name stored meanwhile is replaced only with --force.
  tn::EvalOutcome first = evaluate_on_one_thread(run);
  tn::EvalOutcome second = first;
  tn::save_evaluation(first, "same", run.string(), false);
  CHECK_THROWS_WITH_AS(tn::save_evaluation(second, "same", run.string(), false),
                       doctest::Contains("got a record 'same' from another process"), tn::UsageError);
  tn::save_evaluation(second, "same", run.string(), true);
  CHECK(has(eval_names(run), "same"));
}

TEST_CASE("writers: a training run whose checkpoint or run file a live process holds is refused naming it, until that process ends") {
  const fs::path run = scratch("writers-owned.h5");
  fs::remove(run);
  const tn::Config cfg = spirals_to(run);
  for (const std::string& held : {cfg.train.checkpoint.path, cfg.output.path}) {
    CAPTURE(held);
    const pid_t owner = hold_lock_in_child(held);
    const std::string key = held == cfg.output.path ? "output.path" : "train.checkpoint.path";
    const std::string refused = key + ": '" + held + "' belongs to a run in progress, process " + std::to_string(owner) + " (";
    CHECK_THROWS_WITH_AS(tn::TrainingRun(cfg, 1, true, std::chrono::steady_clock::now()), doctest::Contains(refused.c_str()),
                         tn::ConfigError);
    // eval --save does not wait for a run either, and names it.
    const auto asked = std::chrono::steady_clock::now();
    const tn::io::LockAttempt write = tn::io::lock_file(held, tn::io::Hold::Write);
    CHECK(std::chrono::steady_clock::now() - asked < tn::io::kWriteWait / 2);
    CHECK(!write.lock.held());
    CHECK(write.holder.find("process " + std::to_string(owner) + " (") == 0);
    ::kill(owner, SIGKILL);
    CHECK(exit_code(owner) == 1000 + SIGKILL);
    // Killed: its lock is gone, though its lock file is left; the next run takes it.
    tn::TrainingRun next(cfg, 1, true, std::chrono::steady_clock::now());
    CHECK_THROWS_AS(tn::TrainingRun(cfg, 1, true, std::chrono::steady_clock::now()), tn::ConfigError);
  }
  for (const auto& e : fs::directory_iterator(run.parent_path()))  // released: no lock file of the run left
    CHECK(e.path().filename().string().rfind(".writers-owned.", 0) != 0);
}
