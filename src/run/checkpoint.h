// Checkpoints of a training run and resuming from them: the state after some epochs as a
// run file with /train_state (written atomically like every run file), and the reverse, a
// checkpoint read back into the trainer's layout after checking that it belongs to this run.
#pragma once
#include <string>
#include <vector>

#include "backend/backend.h"
#include "config/config.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "io/file_lock.h"
#include "io/run_file.h"
#include "train/trainer.h"

namespace tn {

// What a training run holds from its start-up checks to its end: the locks (io/file_lock.h) of
// its run file and checkpoint, so that a second run writing either is refused before any work
// and eval --save waits for the run instead of storing into a file it is about to replace. The
// kernel releases them when the process ends, however it ends.
struct RunFilesHeld {
  io::FileLock run_file, checkpoint;
};

// Takes both locks of the run `cfg` describes (output.path, train.checkpoint.path) at once,
// without waiting. Throws ConfigError naming the key, the file and the process that holds it;
// RunFileError when the lock cannot be taken (e.g. a directory that cannot be written).
RunFilesHeld hold_run_files(const Config& cfg);

// Keys of the configuration a resumed run may change: they do not change what is trained.
// train.epochs only when the schedule does not depend on it (not cosine or linear), and
// data file paths because the data are compared by their fingerprint instead.
const std::vector<std::string>& resumable_keys();

// The device and SIMD target of `be`, the part of its description results depend on
// ("cpu: avx2 kernels (8 floats per vector)").
std::string kernel_target(const Backend& be);

// The checkpoint of `t`, the state after t.epochs epochs (histories [S, t.epochs], the
// optimizer state and the non-restored parameters).
RunFile make_checkpoint(const Config& cfg, const PreparedData& data, const MemberSets& sets, const TrainOutput& t,
                        const Backend& be, double wall, const std::string& fingerprint);

struct ResumePoint {
  TrainOutput state;         // what the trainer continues from (TrainControl::resume)
  std::string kernel_target;  // of the run that wrote it
};

// Reads `path` (a checkpoint or an interrupted run file) and checks it against the run `cfg`
// is about to start: ConfigError naming the keys that differ and may not (resumable_keys), a
// different data fingerprint, or a file without a training state; RunFileError when the
// file cannot be read. An epoch interrupted between steps comes back as state.partial.
ResumePoint read_resume_point(const std::string& path, const Config& cfg, const PreparedData& data,
                              const MemberSets& sets, const std::string& fingerprint);

}  // namespace tn
