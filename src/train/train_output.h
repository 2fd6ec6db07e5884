// What training takes and produces: the progress of an epoch, how a run is continued, saved
// and stopped, and the result (a checkpoint's contents). Every file in train/ speaks these.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "config/config.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "model/build.h"

namespace tn {

// One member's values of an epoch (EpochStats::members), from its histories: NaN where the run
// has none (no validation split; accuracy: classification only) and once it stopped or diverged.
struct MemberEpoch {
  int member = 0;  // global index
  float loss = 0, val_loss = 0, acc = 0, val_acc = 0;
  double lr = 0;  // the learning rate of its last step of the epoch (schedule and search included)
};

// Swarm summary after one epoch, for progress reporting.
struct EpochStats {
  int epoch = 0;  // 1-based
  int epochs = 0;
  double loss_mean = 0, loss_min = 0, loss_max = 0;  // over members with a finite loss
  double acc_mean = -1;                              // classification only, else -1
  double val_loss_mean = -1;                         // when a validation split exists, else -1
  int diverged = 0;                                  // members whose loss is not finite
  std::vector<int> newly_diverged;                   // member indices (global) diverged this epoch
  bool early_stopping = false;                       // train.early_stopping is on
  int training = 0;                                  // members neither diverged nor stopped early
  int newly_stopped = 0;                             // members stopped early after this epoch
  int chunk = 1, chunks = 1;                         // members trained in chunks: which one
  double seconds = 0;                                // since training started (of this chunk)
  double member_samples_per_s = 0;
  std::vector<MemberEpoch> members;  // every member's values, when TrainControl::member_epochs asks for them
};
using ProgressFn = std::function<void(const EpochStats&)>;
struct TrainOutput;

// How a run is continued, saved and stopped while it trains (whole-swarm passes only).
struct TrainControl {
  const TrainOutput* resume = nullptr;  // continue after resume->epochs epochs from its state
  int checkpoint_every = 0;             // epochs between calls of `checkpoint` (0: none)
  // Called with the whole state (TrainOutput as far as trained, histories [S, epochs]).
  std::function<void(const TrainOutput&)> checkpoint;
  // Polled between epochs, and between steps when an epoch is a chunk of its own on a backend
  // that runs steps one by one (the CPU; a GPU replays whole epochs): true ends training
  // there, with the epoch's position in TrainOutput::partial. Called from every worker thread.
  std::function<bool()> stop;
  // Replaces the random initial parameters (`params`, ParamLayout order) of members
  // [first_member, first_member + layout.S) before training: a warm start (model.init_from).
  // Not called when resuming. Works with chunks too (called once per chunk).
  std::function<void(int first_member, const ParamLayout& layout, std::vector<float>& params)> init;
  // The same for a swarm of members of several architectures (train/architectures.h): the
  // initial parameters of `members` (global indices, one per layout member, one architecture).
  std::function<void(const std::vector<int>& members, const ParamLayout& layout, std::vector<float>& params)> init_members;
  // Fill EpochStats::members (live per-member logs): every member's values in a whole-swarm
  // pass; each chunk's own members, chunk after chunk, when trained in chunks.
  bool member_epochs = false;
  // With member_epochs, a swarm of several architectures (train/architectures.h): called with
  // each architecture's (or its chunk's) epochs, its members only (global indices), each
  // architecture's in epoch order but out of step with the others and from the thread that
  // trains it. The progress function gets the swarm's averaged epochs without members.
  std::function<void(const EpochStats&)> member_progress;
};

// An epoch interrupted between steps (TrainOutput::partial): with the parameters and
// optimizer state at that point, what continuing it exactly takes.
struct PartialEpoch {
  std::vector<int> next_step;       // [S] the epoch's step each member continues from
  std::vector<double> loss_sum;     // [S] training loss summed over the steps taken
  std::vector<double> correct_sum;  // [S] correct predictions over them (classification)
  bool present() const { return !next_step.empty(); }
};

// A swarm whose members differ in architecture (train/architectures.h) trains one sub-swarm
// per architecture; each one's model and parameters (the fields of TrainOutput of that name).
struct ArchitectureOutput {
  std::string name;          // architecture_text of its model, e.g. "dense 64 relu, dense 3"
  std::vector<int> members;  // local member indices (0 .. S-1), increasing
  ModelShape shape;
  ParamLayout layout;        // for members.size() members
  std::vector<float> init_params, params, opt1, opt2, best_params;
  // Each architecture trains on its own: the epochs it trained (at most TrainOutput::epochs,
  // fewer when interrupted or when its members all stopped early) and where an epoch it was
  // interrupted in stands (local members).
  int epochs = 0;
  PartialEpoch partial;
};

// What training produced, and everything it needs to continue (a checkpoint's contents).
struct TrainOutput {
  ModelShape shape;
  ParamLayout layout;
  std::vector<float> init_params, params;  // host copies in layout order
  // Optimizer state in layout order (adam/adamw: first and second moments; sgd: momentum;
  // rmsprop: square average in opt2); step counts and schedule positions follow from `epochs`.
  std::vector<float> opt1, opt2;
  int epochs = 0;  // epochs trained (fewer than train.epochs when interrupted or all stopped early)
  long steps_per_epoch = 0;
  // [S, epochs], empty if n/a; NaN after a member's stopped_epoch
  std::vector<float> train_loss, val_loss, train_acc, val_acc;
  std::vector<int> diverged_epoch;                              // [S], 1-based, -1 = never
  // Early stopping (train.early_stopping), else empty: per member [S] the 1-based epoch it
  // stopped after (-1 = still training), its best epoch (0 = none yet) and metric value, and
  // the parameters of that epoch [layout order] when restore_best.
  std::vector<int> stopped_epoch, best_epoch;
  std::vector<double> best_value;
  std::vector<float> best_params;
  // Search (config `search`), else empty. Halving stops members through stopped_epoch too.
  std::vector<int> search_epochs;  // epochs after which a rung or round ran, in order (R of them)
  std::vector<int> search_rung;    // halving: [S] the rung (1-based) member k stopped at; 0: trained to the end
  std::vector<int> search_source;  // pbt: [R, S] the member whose state member k took in round r (k: kept)
  // pbt: per search.perturb key, [R + 1, S] its value for each member: at the start, then after each round
  std::vector<std::vector<double>> search_values;
  bool interrupted = false;  // stopped by TrainControl::stop before train.epochs
  PartialEpoch partial;      // interrupted between steps: where epoch `epochs` (0-based) stands
  std::string pred_split;                                       // "test" or "train"
  int pred_n = 0;
  std::vector<float> pred_members;                              // [S, N, outputs]; empty for group_by
  // group_by runs (one member per group): each member predicts only the samples of its own
  // group, so pred_members stays empty and these hold the predictions instead.
  std::vector<int> pred_member;  // [N] member of each sample (its group index), else empty
  std::vector<float> pred_group;  // [N, outputs] that member's output on the sample
  double train_seconds = 0;
  std::string kernel;                                           // backend and block layout
  // Members of several architectures: one entry per architecture, and then `layout`, the
  // parameter and optimizer arrays above are empty (`shape` is the first one's: its outputs
  // are every architecture's). Histories, divergence, stops and predictions are the whole
  // swarm's as always.
  std::vector<ArchitectureOutput> architectures;
};

// The [S, epochs] history of a ranking metric (ranking_metrics()), and its value for every
// member at epoch e (0-based): what early stopping and search rank members by.
const std::vector<float>& metric_history(const TrainOutput& out, const std::string& metric);
std::vector<double> epoch_metric(const TrainOutput& out, const std::string& metric, int S, int e);

// Rows per training batch (train.batch_size, at most the largest member set) and the steps of
// an epoch: those of the member with the largest set.
int epoch_batch(const Config& cfg, const MemberSets& sets);
long epoch_steps(const Config& cfg, const MemberSets& sets);

}  // namespace tn
