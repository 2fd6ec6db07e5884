// `turbanet eval`: options → the evaluation service (run/evaluate_run.h) → table or JSON on
// stdout; the results go into the run file only with --save, into other files only with --out.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "cli/commands/eval_group_report.h"
#include "cli/commands/eval_report.h"
#include "io/run_file_error.h"
#include "io/text_file.h"
#include "run/evaluate_run.h"

namespace tn {
namespace {

namespace fs = std::filesystem;

enum class OutKind { None, RunCopy, Json };

OutKind check_options(const EvalOptions& opt) {
  if (opt.split && opt.data)
    throw UsageError("--split selects a split of the run's own data; --data evaluates every sample of "
                     "the given data, so use one or the other");
  if (opt.split && *opt.split != "test" && *opt.split != "val" && *opt.split != "train" && *opt.split != "all")
    throw UsageError("--split: unknown split '" + *opt.split + "'; allowed: test, val, train, all");
  if (opt.save) check_record_name(*opt.save);
  if (opt.out && same_file(*opt.out, opt.run_path))
    throw UsageError("--out: '" + *opt.out + "' is the run file; to store the results in it, use --save NAME "
                     "(records /eval/NAME and /predictions/NAME)");
  std::vector<NamedFile> inputs = opt.data ? new_data_files("--data", *opt.data) : std::vector<NamedFile>{};
  inputs.push_back({"RUN", opt.run_path});
  std::vector<OutputFile> outputs;
  if (opt.out) outputs.push_back({.key = "--out", .path = *opt.out, .what = "results file", .replace = opt.force});
  if (opt.save) outputs.push_back({"--save", opt.run_path, "run file", true, opt.run_path});
  check_command_files(outputs, inputs);
  if (!opt.out) return OutKind::None;
  const std::string ext = fs::path(*opt.out).extension().string();
  if (ext == ".json") return OutKind::Json;
  if (ext == ".h5" || ext == ".hdf5") return OutKind::RunCopy;
  throw UsageError("--out: '" + *opt.out + "' must end in .json (the JSON report) or .h5 (a copy of "
                   "the run file with the results)");
}

// --threshold: "auto" or a probability in [0, 1].
void parse_threshold(const std::optional<std::string>& text, EvalRequest& req) {
  if (!text) return;
  if (*text == "auto") {
    req.threshold_auto = true;
    return;
  }
  const auto bad = [&] {
    return UsageError("--threshold: '" + *text + "' is neither auto (the F1-maximizing threshold on the validation "
                      "split) nor a probability in [0, 1], e.g. 0.3");
  };
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(*text, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (used != text->size() || !(v >= 0 && v <= 1)) throw bad();
  req.threshold = v;
}

int evaluate_run(const EvalOptions& opt, OutKind out_kind) {
  EvalRequest req;
  req.run_path = opt.run_path;
  req.split = opt.split;
  req.data = opt.data;
  req.combine = parse_combine(opt.combine);
  req.threads = opt.threads;
  req.select = parse_select_options(opt.select, opt.select_by);
  parse_threshold(opt.threshold, req);
  EvalOutcome o = evaluate_stored(req);
  const StoredSwarm& run = o.run;
  // Checked before anything is printed or written: a record is replaced only when asked.
  if (opt.save && has_record(run.file, *opt.save) && !opt.force)
    throw UsageError("--save: run file '" + opt.run_path + "' already has a record '" + *opt.save +
                     "' (/eval/" + *opt.save + " or /predictions/" + *opt.save +
                     "); pass --force to replace it, or choose another name");
  const std::vector<std::string>& groups = run.file.members.group_names;
  const RankView rank{o.select_split, o.select_split.empty() ? nullptr : &o.select_eval, o.ranked, o.select_note};
  const std::vector<int> ranked = o.select_split.empty() ? rank_members(o.eval) : o.ranked;
  const SearchView search{&run.file.search, run.file.meta.epochs, run.file.meta.swarm_size, &run.file.diverged_epoch,
                          ranked.empty() ? -1 : ranked.front(), run.file.meta.interrupted, &o.finished,
                          &o.finished_eval};
  std::string json = o.per_group ? group_eval_json(o.record, opt.run_path, run.class_names, groups)
                           : eval_json(o.eval, o.record, opt.run_path, run.class_names, rank, &o.hparams, &search);
  if (!o.naive.empty()) {  // sequence data: the ensemble and the members against the naive forecasts
    report::json j = report::json::parse(json);
    j["vs_naive"] = naive_json(o.naive);
    json = j.dump(2) + "\n";
  }
  const std::string text = opt.json ? json
                           : o.per_group ? group_eval_table(o.record, opt.run_path, groups)
                                    : eval_table(o.eval, o.record, opt.run_path, run.class_names, rank, &o.hparams, &search) +
                                          naive_table(o.naive);
  if (!print_stdout(text)) return kExitIo;
  const std::string name = opt.save.value_or(o.record.split);
  writing_output([&] {
    if (out_kind == OutKind::Json) write_text_atomically(*opt.out, json, opt.force);
    if (out_kind == OutKind::RunCopy) save_evaluation(o, name, *opt.out, opt.force);
    if (opt.save) save_evaluation(o, name, opt.run_path, opt.force);
  });
  if (opt.out) spdlog::info("wrote the results to {}", *opt.out);
  if (opt.save) spdlog::info("stored the results in {} as /eval/{} and /predictions/{}", opt.run_path, name, name);
  return kExitOk;
}

}  // namespace

int run_eval(const EvalOptions& opt) {
  setup_logging(opt.verbosity);
  return with_user_errors([&] { return evaluate_run(opt, check_options(opt)); });
}

}  // namespace tn
