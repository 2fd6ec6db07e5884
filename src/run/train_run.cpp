// The training service: checks, training, final evaluation, run file.
#include "run/train_run.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include <spdlog/spdlog.h>

#include "eval/per_group.h"
#include "io/atomic_file.h"
#include "data/sources.h"
#include "io/run_file_error.h"
#include "model/build.h"
#include "train/swarm_forward.h"
#include "run/command_files.h"
#include "run/errors.h"
#include "run/eval_record.h"
#include "run/fingerprint.h"
#include "run/lineage.h"
#include "run/select_run.h"
#include "run/stop_signals.h"
#include "run/swarm_file.h"
#include "run/tensorboard_log.h"
#include "run/world/world.h"
#include "util/exit_codes.h"

namespace tn {
namespace {

// Fails early (before training) when the run file could not be written: a directory that
// cannot be created or written to. `key` names the setting in messages (output.path,
// train.checkpoint.path); what may be at the path itself is check_run_files's question.
void check_output_directory(const std::string& path, const std::string& key = "output.path") {
  namespace fs = std::filesystem;
  const fs::path out(path);
  std::error_code ec;
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(dir, ec);
  if (ec) throw ConfigError(key + ": cannot create directory '" + dir.string() + "': " + ec.message());
  if (const std::string why = io::output_problem(path); !why.empty()) throw ConfigError(key + ": " + why);
}

// The run file and the checkpoint against the run's inputs and `other` files (run/command_files.h).
// A resumed run replaces the run file of the run it continues, and the checkpoint it resumes
// from; any other existing checkpoint only with --force. A checkpoint --resume continues from
// is never replaced by the run file, which would drop its training state.
void check_run_files(const Config& cfg, bool force, const std::string& resume, CommandFiles other) {
  const std::string& ck = cfg.train.checkpoint.path;
  const std::string ck_key = ck == default_checkpoint_path(cfg.output.path)
                                 ? "train.checkpoint.path (default: output.path with .ckpt.h5)"
                                 : "train.checkpoint.path";
  other.outputs.insert(other.outputs.begin(), {{"output.path", cfg.output.path, "run file", force || !resume.empty(), resume},
                                               {ck_key, ck, "checkpoint", true, resume}});
  std::vector<NamedFile> inputs = config_inputs(cfg);
  if (!resume.empty()) inputs.push_back({"--resume", resume});
  inputs.insert(inputs.end(), other.inputs.begin(), other.inputs.end());
  check_command_files(other.outputs, inputs);
  std::error_code ec;
  if (!force && std::filesystem::exists(std::filesystem::symlink_status(ck, ec)) && !same_file(ck, resume))
    throw UsageError(ck_key + ": '" + ck + "' already exists and is not the checkpoint this run resumes from; pass "
                     "--force to replace it, or set train.checkpoint.path to another file" +
                     (resume.empty() ? "" : " (or, when it is this run's, continue from it: --resume " + ck + ")"));
  if (!resume.empty() && same_file(cfg.output.path, resume) && read_run_file(resume).evals.empty())
    throw UsageError("output.path: '" + cfg.output.path + "' is the checkpoint --resume continues from, and the run "
                     "file would replace its training state; write the run file elsewhere (--out), so the checkpoint "
                     "can be resumed again");
}

// group_by: each member on its own group's samples, with the naive-forecast baselines and the
// original units for sequence data. A shard of the groups (train --shard) evaluates its own
// members' samples only, and records where each is in the split (Predictions::sample).
FinalEval evaluate_final_per_group(const Config& cfg, const PreparedData& data, const TrainOutput& t) {
  FinalEval f;
  f.split = t.pred_split == "test" ? &data.test : &data.train;
  const int S = cfg.swarm.size, first = cfg.swarm.first_member, O = t.shape.outputs();
  const GroupTargets all = group_targets(f.split->y, f.split->units, f.split->naive);
  std::vector<int> keep;  // samples of members [first, first + S)
  for (int i = 0; i < t.pred_n; ++i)
    if (t.pred_member[i] >= first && t.pred_member[i] < first + S) keep.push_back(i);
  const bool shard = static_cast<int>(keep.size()) != t.pred_n;
  const auto rows = [&](const std::vector<float>& v) {  // the kept samples' rows of a [N, w] array
    if (!shard || v.empty()) return v;
    const std::size_t w = v.size() / static_cast<std::size_t>(t.pred_n);
    std::vector<float> r;
    for (int i : keep) r.insert(r.end(), v.begin() + static_cast<std::ptrdiff_t>(i * w), v.begin() + static_cast<std::ptrdiff_t>((i + 1) * w));
    return r;
  };
  GroupPredictions p;
  p.S = S;
  p.N = static_cast<int>(keep.size());
  p.O = O;
  for (int i : keep) p.member.push_back(t.pred_member[i] - first);
  p.outputs = rows(t.pred_group);
  if (!all.y_original.empty()) p.outputs_original = rows(f.split->units.original(t.pred_group));
  GroupTargets targets{rows(all.y), rows(all.y_original), {}};
  for (const BaselineForecast& b : all.baselines) targets.baselines.push_back({b.kind, rows(b.values), rows(b.original)});
  const GroupEvaluation e = evaluate_per_group(p, cfg.loss.type, targets);
  f.record = make_group_eval_record(e, f.split->name, f.split->name + " split of " + data.origin, first, p.N);
  f.predictions = make_group_predictions(t.pred_split, p, targets, first, is_classification(cfg.loss.type));
  if (shard) f.predictions.sample = keep;
  return f;
}

// Every member's outputs [S, N, T] in original units, each with its own statistics: per-member
// ones (`sets`, local rows), else the data's ([T], or [G, T] per group).
void members_to_original(std::vector<float>& v, const Config& cfg, const PreparedData& data, const MemberSets& sets) {
  const bool own = !sets.target_mean.empty();
  member_targets_to_original(v, cfg.swarm.size, own ? 0 : cfg.swarm.first_member, data.targets, data.target_scaling,
                             own ? sets.target_mean : data.target_mean, own ? sets.target_std : data.target_std);
}

// Every member's outputs on `split` with the trained parameters, as eval computes them
// (diverged members: NaN).
SwarmPredictions predict_trained(const Config& cfg, const PreparedData& data, const MemberSets& sets,
                                 const TrainOutput& t, const SplitData& split, Backend& be) {
  const int S = cfg.swarm.size, batch = std::max(1, std::min(cfg.train.batch_size, data.train.n));
  SwarmPredictions p;
  if (t.architectures.empty()) {
    p = predict_swarm(be, t.shape, cfg.loss.type, t.params, S, split.X, split.n, batch);
  } else {
    std::vector<SwarmPart> parts;
    for (const ArchitectureOutput& a : t.architectures) parts.push_back({&a.shape, &a.params, a.members});
    p = predict_parts(be, cfg.loss.type, parts, S, t.shape.outputs(), split.X, split.n, batch);
  }
  if (data.seq_len == 0) members_to_original(p.outputs, cfg, data, sets);
  const std::size_t per = static_cast<std::size_t>(p.N) * p.O;
  for (int s = 0; s < S; ++s)
    if (t.diverged_epoch[s] > 0)
      for (std::vector<float>* v : {&p.outputs, &p.logits})
        std::fill_n(v->begin() + static_cast<std::ptrdiff_t>(s * per), per, std::numeric_limits<float>::quiet_NaN());
  return p;
}

// Members ranked and the ensemble chosen (config `ensemble`) on the validation split, else the
// training split; never on the split the run is scored on. A shard sees a block of the swarm
// only, so it chooses no ensemble.
void choose_on_selection_split(const Config& cfg, const PreparedData& data, const MemberSets& sets,
                               const TrainOutput& t, Backend& be, bool shard, FinalEval& f) {
  f.select_split = data.val.n > 0 ? &data.val : &data.train;
  const SwarmPredictions p = predict_trained(cfg, data, sets, t, *f.select_split, be);
  f.select_eval = evaluate(p, cfg.loss.type, f.select_split->y, Combine::MeanProb);
  if (!cfg.ensemble.enabled() || shard) return;
  const Selection s = select_members(p, f.select_eval, cfg.loss.type, f.select_split->y, Combine::MeanProb,
                                     config_selection(cfg.ensemble));
  if (!s.members.empty()) f.selection = selection_record(s, f.select_split->name, cfg.swarm.first_member);
}

FinalEval evaluate_final(const Config& cfg, const PreparedData& data, const MemberSets& sets, const TrainOutput& t,
                         Backend& be, bool shard) {
  if (!t.pred_member.empty()) return evaluate_final_per_group(cfg, data, t);
  FinalEval f;
  f.split = t.pred_split == "test" ? &data.test : &data.train;
  f.preds = {cfg.swarm.size, t.pred_n, t.shape.outputs(), t.pred_members, {}};
  choose_on_selection_split(cfg, data, sets, t, be, shard, f);
  const std::vector<double> w = selection_weights(f.selection, cfg.swarm.first_member, cfg.swarm.size);
  f.eval = evaluate(f.preds, cfg.loss.type, f.split->y, Combine::MeanProb, nullptr, w.empty() ? nullptr : &w);
  f.record = make_eval_record(f.eval, f.split->name, f.split->name + " split of " + data.origin,
                              Combine::MeanProb, cfg.swarm.first_member, t.pred_n);
  f.record.selection = f.selection;
  f.predictions = make_predictions(t.pred_split, f.preds, f.split->y, is_classification(cfg.loss.type),
                                   w.empty() ? nullptr : &w);
  f.kept = halving_kept(t.search_rung, t.diverged_epoch);
  if (!f.kept.empty()) f.kept_eval = evaluate_members(f.preds, f.kept, cfg.loss.type, f.split->y, Combine::MeanProb);
  return f;
}

// Why the TensorBoard logs cannot follow this run's training, or "": a shard's process trains
// part of the swarm, and the swarm's summaries need every member's epochs.
std::string tensorboard_refusal(const Shard& shard) {
  if (!shard.enabled()) return "";
  return "this process trains shard " + std::to_string(shard.index) + " of " + std::to_string(shard.count) +
         " of the swarm (--shard, mpirun), and the swarm's curves need every member; train the whole swarm in "
         "one process (a swarm too large for the device trains in chunks, which log too)";
}

// The ensemble's final scores for the TensorBoard logs, "<split>/<metric>": on the split it is
// scored on (its record) and, when another, on the split the members were ranked on (the
// validation split, every member alike). None for group_by runs, which have no ensemble.
std::vector<std::pair<std::string, double>> ensemble_scores(const FinalEval& f) {
  std::vector<std::pair<std::string, double>> out;
  const EvalRecord& r = f.record;
  for (std::size_t k = 0; k < r.metrics.size() && k < r.ensemble.size(); ++k)
    out.emplace_back(r.split + "/" + r.metrics[k], r.ensemble[k]);
  if (f.select_split && f.select_split->name != r.split && !r.ensemble.empty())
    for (std::size_t k = 0; k < f.select_eval.names.size() && k < f.select_eval.ensemble.values.size(); ++k)
      out.emplace_back(f.select_split->name + "/" + f.select_eval.names[k], f.select_eval.ensemble.values[k]);
  return out;
}

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

TrainingRun::TrainingRun(Config cfg, int threads, bool force, std::chrono::steady_clock::time_point started,
                         const std::string& resume, Shard shard, const CommandFiles& other, SourceArrays* arrays)
    : cfg_(std::move(cfg)), force_(force || !resume.empty()), started_(started), shard_(shard) {
  if (cfg_.search.enabled() && shard_.enabled())
    throw ConfigError("search." + std::string(to_string(cfg_.search.type)) + " ranks every member against the others, "
                      "so the whole swarm trains in one process: leave out --shard and mpirun, or remove `search`");
  const std::string whole_output = cfg_.output.path, whole_checkpoint = cfg_.train.checkpoint.path;
  set_shard_paths(cfg_, shard_);
  check_run_files(cfg_, force, resume, other);
  check_output_directory(cfg_.output.path);
  check_output_directory(cfg_.train.checkpoint.path, "train.checkpoint.path");
  held_ = hold_run_files(cfg_);
  be_ = make_backend({cfg_.device, threads, cfg_.device_index, cfg_.device_precision == DevicePrecision::Tf32,
                      world().local_rank},
                     &device_note_);
  check_generated_data_memory(cfg_);
  const bool classification = is_classification(cfg_.loss.type);
  data_ = prepare_data(cfg_.data.source.type == "arrays" ? load_memory_arrays(cfg_.data, classification, arrays)
                                                          : load_dataset(cfg_.data, classification),
                       cfg_.data);
  resolve_group_swarm(cfg_, data_);  // group_by without swarm.size: one member per group
  const ModelShape shape = make_model_shape(cfg_, data_);  // validates
  // A resumed run continues from its checkpoint, which holds the warm start's parameters.
  if (cfg_.model.init_from.enabled() && resume.empty())
    warm_ = std::make_unique<WarmStart>(load_warm_start(cfg_, shape, data_));
  sets_ = make_member_sets(cfg_, data_);
  if (const std::string note = target_scaling_note(data_, sets_.target_mean, sets_.target_std); !note.empty())
    spdlog::info("{}", note);
  whole_first_ = cfg_.swarm.first_member;
  whole_size_ = cfg_.swarm.size;
  if (shard_.enabled()) {  // with the whole run's paths, as one process stores it
    Config whole = cfg_;
    whole.output.path = whole_output;
    whole.train.checkpoint.path = whole_checkpoint;
    whole_yaml_ = to_yaml(whole);
  }
  restrict_to_shard(cfg_, sets_, shard_);  // from here on the run is the shard's block
  plan_ = plan_training(cfg_, data_, sets_, *be_, /*with_run_file=*/true);
  if (plan_.chunks > 1 && (cfg_.train.checkpoint.every_epochs > 0 || !resume.empty()))
    throw ConfigError(std::string(resume.empty() ? "train.checkpoint.every_epochs" : "--resume") +
                      ": checkpoints need the whole swarm trained at once, but " + be_->name() + " trains it in " +
                      std::to_string(plan_.chunks) + " chunks; reduce swarm.size, or train on device: cpu");
  check_tensorboard_dir(cfg_, force, !resume.empty(), tensorboard_refusal(shard_));
  fingerprint_ = data_fingerprint(data_, sets_);
  if (resume.empty()) return;
  resume_ = std::make_unique<ResumePoint>(read_resume_point(resume, cfg_, data_, sets_, fingerprint_));
  if (resume_->kernel_target != kernel_target(*be_))
    resume_note_ = "'" + resume + "' was trained with " + resume_->kernel_target + ", this run uses " +
                   kernel_target(*be_) + ": the result will not be bitwise that of an uninterrupted run";
}

TrainResult TrainingRun::run(const TrainCallbacks& report) {
  TrainResult r;
  TrainControl control;
  control.resume = resume_ ? &resume_->state : nullptr;
  if (warm_ && per_member_architecture(cfg_))
    control.init_members = [this](const std::vector<int>& members, const ParamLayout& layout, std::vector<float>& params) {
      apply_warm_start(*warm_, members, layout, params);
    };
  else if (warm_)
    control.init = [this](int first_member, const ParamLayout& layout, std::vector<float>& params) {
      apply_warm_start(*warm_, cfg_.model.init_from, first_member, layout, params);
    };
  std::unique_ptr<TensorBoardLog> tensorboard;  // train.tensorboard
  TrainState interrupted;  // the state at an interruption, kept in the run file too
  if (plan_.chunks <= 1) {
    control.stop = report.stop;
    control.checkpoint_every = cfg_.train.checkpoint.every_epochs;
    control.checkpoint = [&](const TrainOutput& t) {
      if (tensorboard) tensorboard->flush();  // the logs reach every epoch the checkpoint holds
      const std::string& path = cfg_.train.checkpoint.path;
      RunFile ck = make_checkpoint(cfg_, data_, sets_, t, *be_, seconds_between(started_, std::chrono::steady_clock::now()),
                                   fingerprint_);
      mark_shard(ck);
      try {
        write_run_file(path, ck, true);
        r.checkpoint = path;
      } catch (const RunFileError& e) {  // training goes on; the previous checkpoint is intact
        spdlog::error("{}", e.what());
      }
      if (!t.interrupted) return;
      interrupted = std::move(ck.state);
      if (cfg_.train.early_stopping.enabled() && cfg_.train.early_stopping.restore_best) {
        interrupted.params = ck.params;
        for (std::size_t a = 0; a < interrupted.architectures.size(); ++a)
          interrupted.architectures[a].params = ck.architectures[a].params;
      }
    };
  }
  ProgressFn progress = report.progress;
  if (!cfg_.train.tensorboard.empty()) {
    tensorboard = std::make_unique<TensorBoardLog>(cfg_, resume_ ? &resume_->state : nullptr);
    control.member_epochs = true;
    control.member_progress = [&](const EpochStats& st) { tensorboard->epoch(st); };  // several architectures
    progress = [&](const EpochStats& st) {
      if (!st.members.empty()) tensorboard->epoch(st);
      if (report.progress) report.progress(st);
    };
  }
  r.out = train_swarm_in_chunks(cfg_, data_, sets_, *be_, progress, plan_.chunk, control);
  if (report.trained) report.trained(r.out);
  if (data_.seq_len == 0) {  // data.normalize_target: scored and stored in the target's original units
    targets_to_original(data_);
    const int T = data_.targets;  // each member with its own statistics (per group: its group's)
    members_to_original(r.out.pred_members, cfg_, data_, sets_);
    targets_to_original(r.out.pred_group, T, data_.target_scaling, data_.target_mean, data_.target_std, r.out.pred_member);
  }
  const auto eval_start = std::chrono::steady_clock::now();
  r.final_eval = evaluate_final(cfg_, data_, sets_, r.out, *be_, shard_.enabled());
  if (report.evaluated) report.evaluated(r.final_eval);
  const auto write_start = std::chrono::steady_clock::now();
  // Without --force the file is linked into place only if nothing is there now: one created
  // while this run trained is kept, and this result is written beside it.
  RunFile file = make_run_file(cfg_, data_, sets_, r.out, *be_, seconds_between(started_, write_start),
                               r.final_eval.predictions, r.final_eval.record);
  file.ensemble = r.final_eval.selection;
  file.state = std::move(interrupted);  // empty unless interrupted: the run file can be resumed too
  mark_shard(file);
  write_run_file(cfg_.output.path, file, force_);
  if (tensorboard)
    tensorboard->finished(r.out.epochs, r.out.diverged_epoch, ensemble_scores(r.final_eval), r.out.interrupted);
  r.setup_and_train_seconds = seconds_between(started_, eval_start);
  r.eval_seconds = seconds_between(eval_start, write_start);
  r.write_seconds = seconds_between(write_start, std::chrono::steady_clock::now());
  for (int s = 0; s < cfg_.swarm.size; ++s)
    if (r.out.diverged_epoch[s] > 0) r.diverged.push_back(cfg_.swarm.first_member + s);
  return r;
}

void TrainingRun::mark_shard(RunFile& f) const {
  if (!shard_.enabled()) return;
  // The whole swarm's config validates (a grid's values divide the whole swarm, not a block),
  // so eval and merge read it as they read any run; the block is /meta@first_member, @swarm_size.
  f.config_yaml = whole_yaml_;
  f.meta.shard_index = shard_.index;
  f.meta.shard_count = shard_.count;
  f.meta.shard_swarm_first = whole_first_;
  f.meta.shard_swarm_size = whole_size_;
}

int train_reported(Config cfg, const TrainRequest& req, Shard shard, const TrainReports& reports) {
  TrainingRun run(std::move(cfg), req.threads, req.force, req.started, req.resume, shard, req.other);
  if (reports.starting) reports.starting(run, req);
  std::unique_ptr<StopSignals> signals;
  if (run.plan().chunks <= 1) signals = std::make_unique<StopSignals>();
  TrainCallbacks report = reports.callbacks ? reports.callbacks(run) : TrainCallbacks{};
  report.stop = [] { return StopSignals::requested() != 0; };
  const TrainResult r = writing_output([&] { return run.run(report); });
  if (reports.finished) reports.finished(run, r);
  if (r.out.interrupted) return interrupted_exit(StopSignals::requested());
  return r.diverged.empty() ? kExitOk : kExitDiverged;
}

}  // namespace tn
