// The evaluation service: load, inputs, predictions, metrics, records.
#include "run/evaluate_run.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "eval/own.h"
#include "run/eval_record.h"
#include "run/lineage.h"

namespace tn {

EvalOutcome evaluate_stored(const EvalRequest& req) {
  EvalOutcome o{load_swarm(req.run_path, !req.data)};
  const StoredSwarm& run = o.run;
  check_combine(run, req.combine);
  const Inputs in = req.data ? new_data(run, *req.data, true) : own_split(run, req.split);
  if (in.n == 0) throw UsageError(in.source + " has no samples");
  o.source = in.source;
  o.n = in.n;
  // New series of a group_by sequence run are each evaluated by their own member too.
  o.own = one_member_per_group(run) && (!req.data || run.file.data.seq_len > 0);
  if (o.own) {
    if (req.combine != Combine::MeanProb)
      spdlog::warn("--combine {} is not used: a run with one member per group has no ensemble", to_string(req.combine));
    spdlog::info("evaluating {} members of {} on {} ({} samples), each on its own group's samples", run.S,
                 req.run_path, in.source, in.n);
    const OwnPredictions preds = run_own(run, in, req.threads);
    const OwnTargets targets = own_targets(in.y, in.units, in.naive);
    const OwnEvaluation e = evaluate_own(preds, run.cfg.loss.type, targets);
    o.record = make_own_eval_record(e, in.split, in.source, run.first_member, in.n);
    if (!o.record.excluded.empty())
      spdlog::warn("members {} have non-finite predictions (diverged): left out", fmt::join(o.record.excluded, ", "));
    o.predictions = make_own_predictions(in.split, preds, targets, run.first_member, run.classification);
    return o;
  }
  spdlog::info("evaluating {} members of {} on {} ({} samples)", run.S, req.run_path, in.source, in.n);
  const SwarmPredictions preds = run_swarm(run, in, req.threads);
  o.eval = evaluate(preds, run.cfg.loss.type, in.y, req.combine);
  o.record = make_eval_record(o.eval, in.split, in.source, req.combine, run.first_member, in.n);
  if (!o.record.excluded.empty())
    spdlog::warn("members {} have non-finite predictions (diverged): left out of the ensemble and "
                 "the member mean", fmt::join(o.record.excluded, ", "));
  o.hparams = hparam_report(o.eval, run.file.members.hparams, architecture_hparams(run));
  // Each group's own ensemble (members of one learning rate, one architecture, ...).
  for (std::vector<HparamGroup>& groups : o.hparams.by_value)
    for (HparamGroup& g : groups)
      if (g.members > 0)
        g.ensemble = evaluate_members(preds, g.member_list, run.cfg.loss.type, in.y, req.combine).ensemble.values;
  o.predictions = make_predictions(in.split, preds, in.y, run.classification);
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
  o.run.file.put(std::move(p));
  o.run.file.put(std::move(e));
  write_run_file(path, o.run.file, replace);
}

}  // namespace tn
