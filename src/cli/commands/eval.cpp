// `turbanet eval`: run file → rebuilt split (or new data) → member and ensemble metrics →
// table or JSON on stdout, and /eval/<split> in the run file (or --out).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "io/text_file.h"
#include "run/eval_record.h"
#include "cli/commands/eval_report.h"
#include "run/stored_swarm.h"

namespace tn {
namespace {

namespace fs = std::filesystem;

enum class OutKind { RunFile, Json };

OutKind check_options(const EvalOptions& opt) {
  if (opt.split && opt.data)
    throw UsageError("--split selects a split of the run's own data; --data evaluates every sample of "
                     "the given data, so use one or the other");
  if (opt.split && *opt.split != "test" && *opt.split != "val" && *opt.split != "train" && *opt.split != "all")
    throw UsageError("--split: unknown split '" + *opt.split + "'; allowed: test, val, train, all");
  if (!opt.out) return OutKind::RunFile;
  const std::string ext = fs::path(*opt.out).extension().string();
  if (ext == ".json") return OutKind::Json;
  if (ext == ".h5" || ext == ".hdf5") return OutKind::RunFile;
  throw UsageError("--out: '" + *opt.out + "' must end in .json (the JSON report) or .h5 (a copy of "
                   "the run file with the results)");
}

// Writes the results: the JSON report to --out FILE.json, or the records into the run file
// (or its copy --out FILE.h5).
int write_results(const EvalOptions& opt, OutKind out_kind, StoredSwarm& run, const std::string& json,
                  Predictions preds, EvalRecord record) {
  try {
    if (out_kind == OutKind::Json) {
      write_text_atomically(*opt.out, json);
    } else {
      run.file.put(std::move(preds));
      run.file.put(std::move(record));
      write_run_file(opt.out.value_or(opt.run_path), run.file);
    }
  } catch (const RunFileError& err) {
    spdlog::error("{}", err.what());
    return kExitIo;
  }
  spdlog::info("wrote the results to {}", opt.out.value_or(opt.run_path));
  return kExitOk;
}

// group_by runs on their own splits: each member on its own group's samples.
int evaluate_own_run(const EvalOptions& opt, OutKind out_kind, StoredSwarm& run, const Inputs& in) {
  if (opt.combine != "mean_prob")
    spdlog::warn("--combine {} is not used: a run with one member per group has no ensemble", opt.combine);
  spdlog::info("evaluating {} members of {} on {} ({} samples), each on its own group's samples", run.S,
               opt.run_path, in.source, in.n);
  const OwnPredictions preds = run_own(run, in, opt.threads);
  const OwnTargets targets{in.y, in.persistence, run.file.normalization.target_mean.data,
                           run.file.normalization.target_std.data};
  const OwnEvaluation e = evaluate_own(preds, run.cfg.loss.type, targets);
  EvalRecord record = make_own_eval_record(e, in.split, in.source, run.first_member, in.n);
  if (!record.excluded.empty())
    spdlog::warn("members {} have non-finite predictions (diverged): left out", fmt::join(record.excluded, ", "));
  const std::vector<std::string>& groups = run.file.members.group_names;
  const std::string json = own_eval_json(record, opt.run_path, run.class_names, groups);
  std::fputs(opt.json ? json.c_str() : own_eval_table(record, opt.run_path, groups).c_str(), stdout);
  std::fflush(stdout);
  return write_results(opt, out_kind, run, json,
                       make_own_predictions(in.split, preds, targets, run.first_member, run.classification),
                       std::move(record));
}

int evaluate_run(const EvalOptions& opt, OutKind out_kind) {
  StoredSwarm run = load_swarm(opt.run_path, !opt.data);
  const Combine how = parse_combine(opt.combine, run.classification);
  const Inputs in = opt.data ? new_data(run, *opt.data, true) : own_split(run, opt.split);
  if (in.n == 0) throw UsageError(in.source + " has no samples");
  if (!opt.data && one_member_per_group(run)) return evaluate_own_run(opt, out_kind, run, in);
  spdlog::info("evaluating {} members of {} on {} ({} samples)", run.S, opt.run_path, in.source, in.n);
  const SwarmPredictions preds = run_swarm(run, in, opt.threads);
  const Evaluation e = evaluate(preds, run.cfg.loss.type, in.y, how);
  const EvalRecord record = make_eval_record(e, in.split, in.source, how, run.first_member, in.n);
  if (!record.excluded.empty())
    spdlog::warn("members {} have non-finite predictions (diverged): left out of the ensemble and "
                 "the member mean", fmt::join(record.excluded, ", "));
  const HparamReport hp = hparam_report(e, run.file.members.hparams);
  const std::string json = eval_json(record, opt.run_path, run.class_names, &hp);
  std::fputs(opt.json ? json.c_str() : eval_table(e, record, opt.run_path, run.class_names, &hp).c_str(), stdout);
  std::fflush(stdout);
  return write_results(opt, out_kind, run, json, make_predictions(in.split, preds, in.y, run.classification), record);
}

}  // namespace

int run_eval(const EvalOptions& opt) {
  setup_logging(opt.verbosity);
  return with_user_errors([&] { return evaluate_run(opt, check_options(opt)); });
}

}  // namespace tn
