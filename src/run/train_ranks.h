// The training of an MPI job (mpirun -np P turbanet train), and of one process resuming the
// shards of a job: rank r trains shard r/P into NAME.shard-r-of-P.h5 beside the run file (ranks
// share the output directory, as a cluster's file system does); when every rank has finished,
// rank 0 merges the shards (run/merge_runs.h) into the run file, bitwise the file one process
// writes, and removes them and their checkpoints. A rank that fails is named with its exit code
// on rank 0 (its own error is in its log lines), and no run file is written. Resuming, the job
// continues the shards of an earlier job (job_shards, run/shard.h): rank r takes shards r,
// r + P, ... of its K, resuming each from its checkpoint, so any number of ranks resumes it.
#pragma once
#include <functional>
#include <string>

#include "config/config.h"
#include "run/train_run.h"
#include "run/world/world.h"

namespace tn {

// What a job ended with: `code` on every rank (util/exit_codes.h; the worst of the ranks', or
// of the merge); on rank 0 also how many ranks were interrupted (their shards kept beside the
// run file for a resume), the shards K and the run file and checkpoint paths of the whole swarm.
struct JobOutcome {
  int code = 0;
  int interrupted = 0;
  int shards = 0;
  std::string out, checkpoint;
};

// Runs the job on every rank of `w` (collective). `whole_config` gives the whole swarm's
// resolved config; its errors, those of the files (the run file must not exist unless
// req.force) and of a resume stop every rank before any trains, rank 0 naming them. With
// req.resume the job's shards are resumed: refused (UsageError) when req.resume is a file
// (a one-process run's, which resumes in one process), or when there are none. Each shard
// trains as train_reported does, reported with `reports`.
JobOutcome train_job(const std::function<Config()>& whole_config, const TrainRequest& req, const World& w,
                     const TrainReports& reports);

}  // namespace tn
