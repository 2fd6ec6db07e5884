// mpirun -np P turbanet train: the run file of P ranks is bitwise the file of one process
// (apart from the paths in /config and the process attributes in /meta) for P = 1, 2, 3, for a
// per-member lr grid and for group_by series; ranks that cannot train are named and no run
// file is written. Needs a build with MPI (TURBANET_MPI) and mpirun; SKIPPED otherwise.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>

#include "eval_test_util.h"
#include "io/run_file.h"
#include "python_test_util.h"

using namespace evaltest;

namespace {

// Runs a shell command; its exit code and what it printed.
std::pair<int, std::string> shell(const std::string& command) {
  const fs::path log = scratch("mpi-command.log");
  const int status = std::system((command + " >'" + log.string() + "' 2>&1").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 1000, slurp(log)};
}

// Why this machine cannot run the MPI tests, or "".
std::string mpi_missing() {
#ifndef TURBANET_HAVE_MPI
  return "this build has no MPI (TURBANET_MPI=OFF, or libopenmpi-dev was missing when it was configured)";
#else
  if (shell("command -v mpirun").first != 0) return "mpirun is not installed (apt-get install openmpi-bin)";
  return "";
#endif
}

// Without MPI: one visible "SKIPPED: why" line, and the test passes without running.
bool skip_without_mpi() {
  const std::string why = mpi_missing();
  if (!why.empty()) MESSAGE("SKIPPED: " << why);
  return !why.empty();
}

// As root (CI), in a container: Open MPI needs to be told both, and shared-memory transport.
std::string mpirun(int P) {
  return "OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun --allow-run-as-root --oversubscribe -np " +
         std::to_string(P) + " " + TURBANET_BINARY;
}

}  // namespace

TEST_CASE("mpirun: P ranks write the run file of one process, bitwise") {
  if (skip_without_mpi()) return;
  const std::string python = tn::test::python_with_h5py();
  const std::pair<std::string, std::string> configs[] = {
      {"grid", "name: grid\nseed: 3\ndevice: cpu\nswarm: {size: 6}\n"
               "model: {layers: [{units: 8, activation: relu}, {units: 2}]}\nloss: cross_entropy\n"
               "optimizer: {type: adam, lr: {values: [0.001, 0.01, 0.1]}}\n"
               "data:\n  source: {type: spirals, n: 96}\n  split: {train: 0.75, test: 0.25}\n  per_member: bootstrap\n"
               "train: {epochs: 3, batch_size: 16}\n"},
      {"series", "name: series\nseed: 5\ndevice: cpu\nmodel: {layers: [{units: 6, activation: tanh}, {units: 1}]}\n"
                 "loss: mse\ndata:\n  source: {type: random_walk, series: 5, length: 80, seed: 1}\n"
                 "  sequence: {window: 5, target: close}\n  split: {train: 0.8, test: 0.2}\n"
                 "  per_member: {group_by: ticker}\ntrain: {epochs: 2, batch_size: 16}\n"}};
  for (const auto& [name, yaml] : configs) {
    CAPTURE(name);
    const fs::path one = train_run(name + "-one", yaml);
    const std::string config = write_file(name + "-mpi.yaml", yaml).string();
    for (int P : {1, 2, 3}) {
      CAPTURE(P);
      const std::string out = scratch(name + "-np" + std::to_string(P) + ".h5").string();
      const auto [rc, log] = shell(mpirun(P) + " train '" + config + "' --out '" + out + "' --force -q");
      REQUIRE_MESSAGE(rc == 0, log);
      CHECK(fs::exists(out));
      for (int r = 0; r < P; ++r)  // the shards are merged and removed
        CHECK(!fs::exists(scratch(name + "-np" + std::to_string(P) + ".shard-" + std::to_string(r) + "-of-" +
                                  std::to_string(P) + ".h5")));
      if (python.empty()) continue;
      const std::string report = tn::test::run_command(python + " " TURBANET_SOURCE_DIR "/scripts/compare_runs.py '" +
                                                   one.string() + "' '" + out + "' --ignore config 2>&1");
      CHECK_MESSAGE(report.find(", 0 differences") != std::string::npos, report);
    }
  }
}

TEST_CASE("mpirun: ranks that cannot train are named, and no run file is written") {
  if (skip_without_mpi()) return;
  // More ranks than members: every rank refuses its shard before training.
  const std::string config = write_file("mpi-small.yaml",
                                        "name: small\nseed: 1\ndevice: cpu\nswarm: {size: 2}\n"
                                        "model: {layers: [{units: 4}, {units: 2}]}\nloss: cross_entropy\n"
                                        "data: {source: {type: spirals, n: 32}}\ntrain: {epochs: 1}\n").string();
  const std::string out = scratch("mpi-small.h5").string();
  fs::remove(out);
  auto [rc, log] = shell(mpirun(3) + " train '" + config + "' --out '" + out + "'");
  CHECK(rc == 2);
  CHECK_MESSAGE(log.find("fewer than 3 shards") != std::string::npos, log);
  CHECK_MESSAGE(log.find("rank 2 of 3 failed (exit 2)") != std::string::npos, log);
  CHECK_MESSAGE(log.find("no run file written") != std::string::npos, log);
  CHECK(!fs::exists(out));
  // An existing run file is kept without --force, before any rank trains.
  write_file("mpi-small.h5", "keep");
  std::tie(rc, log) = shell(mpirun(2) + " train '" + config + "' --out '" + out + "'");
  CHECK(rc == 2);
  CHECK_MESSAGE(log.find("already exists") != std::string::npos, log);
  CHECK(slurp(out) == "keep");
  // --shard is for job arrays; under mpirun the ranks are the shards.
  std::tie(rc, log) = shell(mpirun(2) + " train '" + config + "' --out '" + out + "' --force --shard 0/2");
  CHECK(rc == 2);
  CHECK_MESSAGE(log.find("the ranks are the shards") != std::string::npos, log);
}

TEST_CASE("mpirun: sweep times the job's ranks together and rank 0 writes one table") {
  if (skip_without_mpi()) return;
  const std::string config = write_file("mpi-sweep.yaml",
                                        "name: sw\nseed: 1\ndevice: cpu\nswarm: {size: 2}\n"
                                        "model: {layers: [{units: 4, activation: relu}, {units: 2}]}\n"
                                        "loss: cross_entropy\ndata: {source: {type: spirals, n: 32}}\n"
                                        "train: {epochs: 2, batch_size: 8}\n").string();
  const std::string out = scratch("mpi-sweep.csv").string();
  // S = 1 leaves two of three ranks without members; S = 4 gives them 2, 1 and 1.
  auto [rc, log] = shell(mpirun(3) + " sweep '" + config + "' --swarm 1,4 --repeats 2 --mode both --out '" + out +
                         "' --force");
  REQUIRE_MESSAGE(rc == 0, log);
  CHECK_MESSAGE(log.find("processes: 3 (mpirun)") != std::string::npos, log);
  CHECK(log.find("mode ") == log.rfind("mode "));  // one table, from rank 0
  const std::string csv = slurp(out);
  std::vector<std::string> lines;
  for (std::size_t a = 0, b; a < csv.size(); a = b + 1) lines.push_back(csv.substr(a, (b = csv.find('\n', a)) - a));
  REQUIRE(lines.size() == 5);  // header, (swarm, sequential) x (1, 4)
  CHECK(lines[0].substr(lines[0].rfind(',') + 1) == "processes");
  for (std::size_t i = 1; i < lines.size(); ++i) CHECK(lines[i].substr(lines[i].rfind(',') + 1) == "3");
  // A rank's error ends the job with its exit code.
  std::tie(rc, log) = shell(mpirun(2) + " sweep '" + config + "' --swarm 2 --set optimizer.lrr=1");
  CHECK(rc == 2);
  CHECK_MESSAGE(log.find("rank 0 of 2 error") != std::string::npos, log);
}

TEST_CASE("mpirun: an interrupted job resumes with another number of ranks, bitwise the uninterrupted run") {
  if (skip_without_mpi()) return;
  const fs::path dir = scratch("mpi-resume");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string yaml =
      "name: mr\nseed: 3\ndevice: cpu\nswarm: {size: 6}\nmodel: {layers: [{units: 6, activation: relu}, {units: 2}]}\n"
      "loss: cross_entropy\noptimizer: {type: adam, lr: {values: [0.001, 0.01, 0.1]}}\n"
      "data:\n  source: {type: spirals, n: 48}\n  split: {train: 0.75, test: 0.25}\n  per_member: bootstrap\n"
      "train: {epochs: 200000, batch_size: 16, checkpoint: {every_epochs: 20}}\n";
  const std::string config = (dir / "c.yaml").string(), out = (dir / "run.h5").string();
  std::ofstream(config) << yaml;
  // Two ranks train until both shards have checkpointed, then SIGINT reaches the ranks (as a
  // scheduler's signal does), not mpirun.
  std::string job = mpirun(2) + " train '" + config + "' --out '" + out + "' --threads 1";
  job.insert(job.find("mpirun "), "timeout 300 ");  // a kill that misses fails the test, not hangs it
  const std::string script =
      "(" + job + " >'" + (dir / "job.log").string() + "' 2>&1; echo $? >'" + (dir / "job.rc").string() + "') & "
      "for i in $(seq 600); do [ -e '" + (dir / "run.shard-0-of-2.ckpt.h5").string() + "' ] && [ -e '" +
      (dir / "run.shard-1-of-2.ckpt.h5").string() + "' ] && break; sleep 0.1; done; "
      "for p in /proc/[0-9]*; do case \"$(tr '\\0' ' ' <$p/cmdline 2>/dev/null)\" in '" TURBANET_BINARY " train " +
      config + " '*) kill -INT ${p#/proc/};; esac; done; wait";
  auto [rc, log] = shell(script);
  const std::string job_log = slurp(dir / "job.log");
  REQUIRE_MESSAGE(slurp(dir / "job.rc") == "130\n", job_log);
  CHECK_MESSAGE(job_log.find("2 of 2 ranks were interrupted") != std::string::npos, job_log);
  CHECK_MESSAGE(job_log.find("--resume " + (dir / "run.ckpt.h5").string()) != std::string::npos, job_log);
  CHECK(!fs::exists(out));
  // The shards stopped at different epochs; resumed to a few epochs past both with 3 ranks.
  int stopped = 0;
  for (int k = 0; k < 2; ++k)
    stopped = std::max(stopped, tn::read_run_head((dir / ("run.shard-" + std::to_string(k) + "-of-2.h5")).string()).meta.epochs);
  const std::string epochs = "train.epochs=" + std::to_string(stopped + 3);
  std::tie(rc, log) = shell(mpirun(3) + " train '" + config + "' --out '" + out + "' --resume '" +
                            (dir / "run.ckpt.h5").string() + "' --set " + epochs + " --threads 1");
  REQUIRE_MESSAGE(rc == 0, log);
  CHECK_MESSAGE(log.find("2 shards: 1 of the 3 ranks have none") != std::string::npos, log);
  for (const char* left : {"run.shard-0-of-2.h5", "run.shard-1-of-2.h5", "run.shard-0-of-2.ckpt.h5"})
    CHECK(!fs::exists(dir / left));
  std::string whole = yaml;
  whole.replace(whole.find("epochs: 200000"), 14, "epochs: " + std::to_string(stopped + 3));
  const fs::path one = train_run("mpi-resume-one", whole);
  if (const std::string python = tn::test::python_with_h5py(); !python.empty()) {
    const std::string report = tn::test::run_command(python + " " TURBANET_SOURCE_DIR "/scripts/compare_runs.py '" +
                                                     one.string() + "' '" + out + "' --ignore config 2>&1");
    CHECK_MESSAGE(report.find(", 0 differences") != std::string::npos, report);
  }
  // Nothing to resume: named, exit 2.
  std::tie(rc, log) = shell(mpirun(2) + " train '" + config + "' --out '" + (dir / "other.h5").string() +
                            "' --resume '" + (dir / "other.ckpt.h5").string() + "'");
  CHECK(rc == 2);
  CHECK_MESSAGE(log.find("no shard of a job writing") != std::string::npos, log);
}
