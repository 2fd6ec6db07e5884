// The training of an MPI job: each rank its shards, then rank 0 merges them into the run file.
#include "run/train_ranks.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <exception>
#include <filesystem>
#include <vector>

#include "io/run_file.h"
#include "io/run_file_error.h"
#include "run/command_files.h"
#include "run/errors.h"
#include "run/merge_runs.h"
#include "run/shard.h"
#include "run/stop_signals.h"
#include "util/error_report.h"
#include "util/exit_codes.h"

namespace tn {
namespace {

bool interruption(int code) { return code == interrupted_exit(SIGINT) || code == interrupted_exit(SIGTERM); }

// The job's checks before any rank trains: a new job's files (each rank's TrainingRun checks
// its shard's), or a resumed job's shards of this rank.
std::vector<ShardProgress> plan_job(const Config& whole, const TrainRequest& req, const World& w) {
  if (req.resume.empty()) {
    CommandFiles files = req.other;
    files.outputs.insert(files.outputs.begin(),
                         {.key = "output.path", .path = whole.output.path, .what = "run file", .replace = req.force});
    for (const NamedFile& in : config_inputs(whole)) files.inputs.push_back(in);
    check_command_files(files.outputs, files.inputs);
    return {};
  }
  if (std::filesystem::exists(req.resume))
    throw UsageError("--resume '" + req.resume + "' with mpirun: ranks resume the shards of an MPI job (or of "
                     "train --shard k/K), which this job finds beside its run file when the --resume file is not "
                     "there; a one-process run's checkpoint resumes in one process (without mpirun)");
  try {
    return job_shards(whole, w.rank, w.size);
  } catch (const UsageError& e) {
    throw UsageError("--resume '" + req.resume + "': " + e.what());
  }
}

// This rank's part of a resumed job: its shards of `job`, one after another. A signal between
// two shards (or while one finishes) stops before the next: the handlers stay installed.
int resume_shards(const Config& whole, const TrainRequest& req, const World& w, const std::vector<ShardProgress>& job,
                  const TrainReports& reports) {
  const StopSignals signals;
  int code = kExitOk;
  for (std::size_t k = static_cast<std::size_t>(w.rank); k < job.size(); k += static_cast<std::size_t>(w.size)) {
    if (job[k].done) continue;
    if (const int sig = StopSignals::requested()) {
      spdlog::warn("{} received: shard {} of {} not started", sig == SIGTERM ? "SIGTERM" : "SIGINT", k, job.size());
      return interrupted_exit(sig);
    }
    TrainRequest shard = req;
    shard.resume = job[k].resume_from;  // "" when the shard wrote nothing: it starts
    shard.force = true;                 // its own earlier run file
    shard.started = std::chrono::steady_clock::now();
    const int c = train_reported(whole, shard, job[k].shard, reports);
    if (c == kExitDiverged) code = c;
    else if (c != kExitOk) return c;  // failed or interrupted: the rest waits for the next resume
  }
  return code;
}

// Rank 0, every shard finished: the K shards' run files merged into the run file, then removed
// with their checkpoints.
void merge_job(const Config& whole, int K, bool force) {
  std::vector<std::string> parts;
  std::vector<NamedFile> named;
  for (int k = 0; k < K; ++k) {
    parts.push_back(shard_paths(whole, Shard{k, K}).output.path);
    named.push_back({"PART", parts.back()});
  }
  const std::string& out = whole.output.path;
  check_command_files({{.key = "output.path", .path = out, .what = "run file", .replace = force}}, named);
  const RunFile r = merge_shards(parts, out);
  writing_output([&] { write_run_file(out, r, force); });
  spdlog::info("wrote {}: members {}..{} from {} shards", out, r.meta.first_member,
               r.meta.first_member + r.meta.swarm_size - 1, K);
  for (int k = 0; k < K; ++k) {
    const Config c = shard_paths(whole, Shard{k, K});
    std::error_code ec;
    std::filesystem::remove(c.output.path, ec);
    std::filesystem::remove(c.train.checkpoint.path, ec);
  }
}

}  // namespace

JobOutcome train_job(const std::function<Config()>& whole_config, const TrainRequest& req, const World& w,
                     const TrainReports& reports) {
  int code = kExitOk;
  std::string message;
  Config whole;
  std::vector<ShardProgress> job;
  try {
    whole = whole_config();
    job = plan_job(whole, req, w);
  } catch (const std::exception& e) {
    code = exit_code_of(e);
    message = e.what();
  }
  const int K = req.resume.empty() ? w.size : static_cast<int>(job.size());
  // A rank that cannot start stops them all before any trains (it alone reports why).
  const bool others_failed = worst_code(code) != kExitOk && code == kExitOk;
  if (code == kExitOk && !others_failed) {
    if (w.rank == 0 && K < w.size)
      spdlog::warn("the job being resumed has {} shards: {} of the {} ranks have none to train", K, w.size - K, w.size);
    try {  // every rank must reach the gathering below, whatever happens to its training
      if (!req.resume.empty()) code = resume_shards(whole, req, w, job, reports);
      else {
        TrainRequest shard = req;
        shard.started = std::chrono::steady_clock::now();
        code = train_reported(whole, shard, Shard{w.rank, w.size}, reports);
      }
    } catch (const std::exception& e) {
      code = report_failure(e);
      if (!dynamic_cast<const UserError*>(&e)) message = std::string("internal error: ") + e.what();
    }
    if (message.empty() && code != kExitOk && code != kExitDiverged && !interruption(code))
      message = "training its shard failed (exit " + std::to_string(code) + ")";
  } else if (w.rank == 0) {
    spdlog::error("{}", message);
  }
  const auto status = gather_status(code, message);
  JobOutcome outcome{.shards = K, .out = whole.output.path, .checkpoint = whole.train.checkpoint.path};
  if (w.rank == 0) {
    int worst = kExitOk, failed = 0, interrupted = 0;
    bool diverged = false;
    for (std::size_t r = 0; r < status.size(); ++r) {
      const auto& [c, m] = status[r];
      diverged |= c == kExitDiverged;
      if (c == kExitOk || c == kExitDiverged) continue;
      worst = std::max(worst, c);
      if (interruption(c)) {
        ++interrupted;
        continue;
      }
      ++failed;
      if (r > 0 || m != message || code == kExitOk) spdlog::error("rank {} of {} failed (exit {}): {}", r, w.size, c, m);
    }
    if (failed > 0 && w.size > 1)
      spdlog::error("no run file written: {} of {} ranks failed; the shards that finished are kept beside it", failed,
                    w.size);
    if (failed > 0 || interrupted > 0) {  // one process resuming a job's shards: its error is logged
      code = worst;
      if (failed == 0) outcome.interrupted = interrupted;
    } else {
      try {
        merge_job(whole, K, req.force || !req.resume.empty());
        code = diverged ? kExitDiverged : kExitOk;
      } catch (const std::exception& e) {  // the ranks wait for this code
        code = report_failure(e, "merging the shards failed");
      }
    }
  }
  outcome.code = broadcast_code(code);
  return outcome;
}

}  // namespace tn
