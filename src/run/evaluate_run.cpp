// The evaluation service: load, inputs, predictions, metrics, records.
#include "run/evaluate_run.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>

#include "eval/per_group.h"
#include "io/file_lock.h"
#include "run/eval_record.h"
#include "run/lineage.h"
#include "run/stored_inputs.h"
#include "run/stored_predict.h"

namespace tn {
namespace {

bool same_bits(const Array& a, const Array& b) {
  return a.shape == b.shape && a.data.size() == b.data.size() &&
         (a.data.empty() || std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0);
}

bool same_layers(const std::vector<LayerParams>& a, const std::vector<LayerParams>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const LayerParams& x, const LayerParams& y) {
    return std::equal(x.tensors.begin(), x.tensors.end(), y.tensors.begin(), y.tensors.end(),
                      [](const auto& s, const auto& t) { return s.first == t.first && same_bits(s.second, t.second); });
  });
}

// Whether `now` holds the run `then` was read from: the same configuration, time of creation
// and parameters, bit for bit (NaN parameters of diverged members included).
bool same_run(const RunFile& now, const RunFile& then) {
  return now.config_yaml == then.config_yaml && now.meta.created == then.meta.created &&
         same_layers(now.params, then.params) &&
         std::equal(now.architectures.begin(), now.architectures.end(), then.architectures.begin(),
                    then.architectures.end(), [](const ArchitectureParams& a, const ArchitectureParams& b) {
                      return a.members == b.members && same_layers(a.params, b.params);
                    });
}

void drop_predictions(RunFile& file, const std::string& split) {
  file.predictions.erase(std::remove_if(file.predictions.begin(), file.predictions.end(),
                                        [&](const Predictions& q) { return q.split == split; }),
                         file.predictions.end());
}

}  // namespace

namespace {

// What the run cannot do of what `req` asks: choose members or thresholds with one member
// per group, thresholds for more than two classes or with votes.
void check_request(const StoredSwarm& run, const EvalRequest& req) {
  const bool thresholds = req.threshold || req.threshold_auto;
  if ((req.select || thresholds) && one_member_per_group(run))
    throw UsageError(std::string(req.select ? "--select" : "--threshold") + ": this run has one member per group "
                     "(data.per_member group_by), each scored on its own group, so there is no ensemble to choose "
                     "members or thresholds for");
  if (!thresholds) return;
  if (run.K != 2)
    throw UsageError("--threshold: a decision threshold needs a two-class run; this one " +
                     (run.classification ? "has " + std::to_string(run.K) + " classes" : std::string("is a regression")));
  if (req.combine == Combine::Vote)
    throw UsageError("--threshold decides from the probability of class 1, and --combine vote decides by counting "
                     "votes; use --combine mean_prob or mean_logit with --threshold");
}

}  // namespace

EvalOutcome evaluate_stored(const EvalRequest& req) {
  EvalOutcome o;
  o.run = req.data ? load_swarm_model(req.run_path) : load_swarm_with_own_data(req.run_path);
  const StoredSwarm& run = o.run;
  check_combine(run, req.combine);
  check_request(run, req);
  const Inputs in = req.data ? new_data(run, *req.data, true) : own_split(run, req.split);
  if (in.n == 0) throw UsageError(in.source + " has no samples");
  o.source = in.source;
  o.n = in.n;
  // New series of a group_by sequence run are each evaluated by their own member too.
  o.per_group = one_member_per_group(run) && (!req.data || run.file.data.seq_len > 0);
  if (o.per_group) {
    if (req.combine != Combine::MeanProb)
      spdlog::warn("--combine {} is not used: a run with one member per group has no ensemble", to_string(req.combine));
    spdlog::info("evaluating {} members of {} on {} ({} samples), each on its own group's samples", run.S,
                 req.run_path, in.source, in.n);
    const GroupPredictions preds = run_per_group(run, in, req.threads);
    const GroupTargets targets = group_targets(in.y, in.units, in.naive);
    const GroupEvaluation e = evaluate_per_group(preds, run.cfg.loss.type, targets);
    o.record = make_group_eval_record(e, in.split, in.source, run.first_member, in.n);
    if (!o.record.excluded.empty())
      spdlog::warn("members {} have non-finite predictions (diverged): left out", fmt::join(o.record.excluded, ", "));
    o.predictions = make_group_predictions(in.split, preds, targets, run.first_member, run.classification);
    return o;
  }
  spdlog::info("evaluating {} members of {} on {} ({} samples)", run.S, req.run_path, in.source, in.n);
  const SwarmPredictions preds = run_swarm(run, in, req.threads);
  const bool needs_split = (req.select && req.select->method != SelectMethod::All) || req.threshold_auto;
  SelectionSplit sel;
  try {
    sel = predict_selection_split(run, req.combine, req.threads, req.data ? nullptr : &in, &preds);
    o.select_split = sel.in.split;
    o.select_eval = sel.eval;
    o.ranked = rank_members(sel.eval);
  } catch (const std::runtime_error& e) {  // the data cannot be rebuilt: no ranking, no choice made now
    if (needs_split) throw;
    o.select_note = e.what();
    spdlog::warn("members are not ranked on the validation split, which could not be rebuilt: {}", e.what());
  }
  const SelectionRecord selection = command_selection(run, req.select, o.select_split.empty() ? nullptr : &sel, req.combine);
  const std::vector<double> w = selection_weights(selection, run.first_member, run.S);
  const std::vector<double>* weights = w.empty() ? nullptr : &w;
  Thresholds thresholds;
  if (req.threshold_auto) thresholds = f1_thresholds(sel.preds, run.cfg.loss.type, sel.in.y, req.combine, weights);
  else if (req.threshold) thresholds = same_threshold(run.S, *req.threshold);
  const bool thresholded = req.threshold || req.threshold_auto;
  o.eval = evaluate(preds, run.cfg.loss.type, in.y, req.combine, thresholded ? &thresholds : nullptr, weights);
  o.record = make_eval_record(o.eval, in.split, in.source, req.combine, run.first_member, in.n);
  o.record.selection = selection;
  o.naive = compare_with_naive(preds, o.eval, in, run.cfg.loss.type);
  if (thresholded) {
    o.record.threshold_from = req.threshold_auto ? o.select_split : "fixed";
    o.record.threshold = thresholds.ensemble;
    o.record.member_threshold = thresholds.members;
  }
  if (!o.record.excluded.empty())
    spdlog::warn("members {} have non-finite predictions (diverged): left out of the ensemble and "
                 "the member mean", fmt::join(o.record.excluded, ", "));
  o.hparams = hparam_report(o.eval, run.file.members.hparams, architecture_hparams(run),
                            o.select_split.empty() ? nullptr : &o.select_eval);
  // Each group's own ensemble (members of one learning rate, one architecture, ...).
  for (std::vector<HparamGroup>& groups : o.hparams.by_value)
    for (HparamGroup& g : groups)
      if (g.members > 0)
        g.ensemble = evaluate_members(preds, g.member_list, run.cfg.loss.type, in.y, req.combine).ensemble.values;
  o.predictions = make_predictions(in.split, preds, in.y, run.classification, weights);
  const SearchRecord& search = run.file.search;
  if (search.type == "halving" && static_cast<int>(search.rung.size()) == run.S) {
    o.finished = halving_kept(search.rung, run.file.diverged_epoch);
    if (!o.finished.empty())  // the ensemble of the members the rungs kept: what halving selects
      o.finished_eval = evaluate_members(preds, o.finished, run.cfg.loss.type, in.y, req.combine);
  }
  return o;
}

void check_record_name(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 64 && name[0] != '.' &&
                  std::all_of(name.begin(), name.end(), [](unsigned char c) {
                    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
                  });
  if (!ok)
    throw UsageError("--save: '" + name + "' is not a record name; use up to 64 letters, digits, '.', '_' and '-' "
                     "(not starting with '.'), e.g. --save test-vote");
}

bool has_record(const RunFile& file, const std::string& name) {
  return file.find_predictions(name) != nullptr ||
         std::any_of(file.evals.begin(), file.evals.end(), [&](const EvalRecord& e) { return e.split == name; });
}

void save_evaluation(EvalOutcome& o, const std::string& name, const std::string& path, bool replace) {
  Predictions p = o.predictions;
  EvalRecord e = o.record;
  p.split = e.split = name;
  const bool kept = keep_predictions(o.run.cfg.output.predictions, p);  // as training stored them
  if (path != o.run.path) {  // a copy (eval --out FILE.h5): the run as it was read, with the records
    if (kept) o.run.file.put(std::move(p));
    else drop_predictions(o.run.file, name);
    o.run.file.put(std::move(e));
    write_run_file(path, o.run.file, replace);
    return;
  }
  // The run file itself (eval --save): read again and written under its lock, so that records
  // other processes stored since it was read are kept, and a run that replaced it meanwhile
  // (train --force) is not overwritten with the one evaluated.
  const io::LockAttempt held = io::lock_file(path, io::Hold::Write);
  if (!held.lock.held())
    throw UsageError("--save: run file '" + path + "' is being written by " + held.holder +
                     "; the results were not stored: evaluate it again when that has ended");
  RunFile now = read_run_file(path);
  if (!same_run(now, o.run.file))
    throw UsageError("--save: run file '" + path + "' was replaced by another run while this one was evaluated; "
                     "the results, which are those of the run it held before, were not stored: evaluate it again");
  if (!replace && has_record(now, name))
    throw UsageError("--save: run file '" + path + "' got a record '" + name + "' from another process while this "
                     "one was evaluated; pass --force to replace it, or choose another name");
  if (kept) now.put(std::move(p));
  else drop_predictions(now, name);  // a record replaced with --force leaves none of its own behind
  now.put(std::move(e));
  write_run_file(path, now, true);
  o.run.file = std::move(now);
}

}  // namespace tn
