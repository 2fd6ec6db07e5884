// Sharding a swarm over independent jobs (`train --shard k/K`, e.g. a Slurm job array): shard
// k of K trains one contiguous block of the swarm's members into a run file of its own, and
// `turbanet merge` (run/merge_runs.h) joins the K files into the file one run would have
// written. Members are independent, so a member trained in a shard is bitwise the member of
// the whole swarm (the same random streams, sample sets and steps per epoch).
#pragma once
#include <set>
#include <string>
#include <utility>

#include "config/config.h"
#include "data/member_sets.h"

namespace tn {

struct Shard {
  int index = 0;  // k, 0-based
  int count = 0;  // K; 0: not sharded
  bool enabled() const { return count > 0; }
};

// "k/K" with 0 <= k < K (SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT with --array=0-(K-1));
// throws UsageError naming the rule otherwise.
Shard parse_shard(const std::string& text);

// The block [m0, m1) of local members (0..S-1) that shard k of K trains: contiguous blocks
// whose summed per-member work (samples per epoch, sets.size) is as even as the members allow;
// every block holds at least one member. Throws ConfigError when K exceeds the swarm size.
std::pair<int, int> shard_block(const MemberSets& sets, int S, Shard shard);

// A shard's run file: output.path (from the config or --out) NAME.h5 becomes
// NAME.shard-k-of-K.h5 beside it, and the default checkpoint path follows it
// (NAME.shard-k-of-K.ckpt.h5; a train.checkpoint.path CK.h5 becomes CK.shard-k-of-K.h5), so
// the K shards of one command line never write the same file.
void set_shard_paths(Config& cfg, Shard shard);
// `whole` with shard `shard`'s paths (set_shard_paths on a copy).
Config shard_paths(const Config& whole, Shard shard);

// Restricts `cfg` and `sets` (the whole swarm's) to shard `shard`: swarm.first_member and
// swarm.size of its block, and the block's member sets. Returns the block [m0, m1).
std::pair<int, int> restrict_to_shard(Config& cfg, MemberSets& sets, Shard shard);

// runs/x.h5 -> runs/x.shard-2-of-8.h5.
std::string shard_output_path(const std::string& output, Shard shard);

// What is left of each shard of an earlier job of this configuration (mpirun, or train
// --shard k/K for every k), read from the files beside its run file and checkpoint: how such
// a job resumes, with any number of ranks.
struct ShardProgress {
  Shard shard;
  bool done = false;        // its run file is there and finished
  std::string resume_from;  // else: its checkpoint, or its interrupted run file, or "" (nothing written)
};
// `whole` is the whole swarm's configuration (output.path and train.checkpoint.path as one
// process uses them). K comes from the names of the shards' files; the files of shards
// k = `rank` mod `ranks` are read (a process decides only about its own shards). A finished
// shard whose train.epochs is not whole's is resumed from its checkpoint (extended). Throws
// UsageError when there are no shards, files of jobs with different K, or a finished shard to
// extend without a checkpoint; RunFileError for an unreadable run file.
std::vector<ShardProgress> job_shards(const Config& whole, int rank = 0, int ranks = 1);
// The shard counts K of the jobs whose shard files are there (none: empty).
std::set<int> job_shard_counts(const Config& whole);

}  // namespace tn
