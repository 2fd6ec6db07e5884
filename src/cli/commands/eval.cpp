// `turbanet eval`: options → the evaluation service (run/evaluate_run.h) → table or JSON on
// stdout, and /eval/<split> in the run file (or --out).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "cli/commands/eval_report.h"
#include "io/text_file.h"
#include "run/evaluate_run.h"

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
  // The results go into the run file itself unless --out names another file (an --out that is
  // the run file is the same as none).
  std::error_code ec;
  if (!opt.out || fs::equivalent(*opt.out, opt.run_path, ec)) return OutKind::RunFile;
  check_out_file(*opt.out, opt.force, {opt.data.value_or("")});
  const std::string ext = fs::path(*opt.out).extension().string();
  if (ext == ".json") return OutKind::Json;
  if (ext == ".h5" || ext == ".hdf5") return OutKind::RunFile;
  throw UsageError("--out: '" + *opt.out + "' must end in .json (the JSON report) or .h5 (a copy of "
                   "the run file with the results)");
}

int evaluate_run(const EvalOptions& opt, OutKind out_kind) {
  EvalOutcome o = evaluate_stored({opt.run_path, opt.split, opt.data, parse_combine(opt.combine), opt.threads});
  const StoredSwarm& run = o.run;
  const std::vector<std::string>& groups = run.file.members.group_names;
  const std::string json = o.own ? own_eval_json(o.record, opt.run_path, run.class_names, groups)
                                 : eval_json(o.record, opt.run_path, run.class_names, &o.hparams);
  const std::string text = opt.json ? json
                           : o.own  ? own_eval_table(o.record, opt.run_path, groups)
                                    : eval_table(o.eval, o.record, opt.run_path, run.class_names, &o.hparams);
  if (!print_stdout(text)) return kExitIo;
  std::error_code ec;
  const bool into_run = !opt.out || (out_kind == OutKind::RunFile && fs::equivalent(*opt.out, opt.run_path, ec));
  try {
    if (out_kind == OutKind::Json) write_text_atomically(*opt.out, json, opt.force);
    else save_evaluation(o, into_run ? opt.run_path : *opt.out, into_run || opt.force);
  } catch (const RunFileError& err) {
    spdlog::error("{}", err.what());
    return kExitIo;
  }
  spdlog::info("wrote the results to {}", opt.out.value_or(opt.run_path));
  return kExitOk;
}

}  // namespace

int run_eval(const EvalOptions& opt) {
  setup_logging(opt.verbosity);
  return with_user_errors([&] { return evaluate_run(opt, check_options(opt)); });
}

}  // namespace tn
