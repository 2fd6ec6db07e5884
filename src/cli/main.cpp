// turbanet command line: parses arguments and dispatches to the subcommand functions.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "run/world/world.h"
#include "util/error_report.h"
#include "util/suggest.h"

namespace {

// --threads of every command that computes.
constexpr const char* kThreadsHelp = "CPU threads (default: the cores this process may use, or OMP_NUM_THREADS if fewer)";

void add_verbosity(CLI::App* cmd, bool* quiet, bool* verbose) {
  cmd->add_flag("-q,--quiet", *quiet, "Only warnings and errors");
  cmd->add_flag("-v,--verbose", *verbose, "Debug output (resolved config, kernel choice)");
}

// A whole number in [lo, hi], with a message a person can read: "must be a whole number
// >= 1, got '-3'" (CLI11's own range checks print the largest double in full).
CLI::Validator whole_number(long long lo, long long hi = INT_MAX) {
  const std::string range = hi == INT_MAX ? ">= " + std::to_string(lo)
                                            : "from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& v) -> std::string {
        long long x = 0;
        std::size_t used = 0;
        try {
          x = std::stoll(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != v.size() || x < lo || x > hi) return "must be a whole number " + range + ", got '" + v + "'";
        return "";
      },
      "INT " + range);
}

// "unknown subcommand 'trian'; did you mean 'train'? ..." when the first argument is a word
// that names no subcommand (CLI11 would only say that one is required); "" otherwise.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string word = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return "";
    names.push_back(sub->get_name());
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return "unknown subcommand '" + word + "'" + tn::did_you_mean(word, names) + " Subcommands: " + list +
         " (turbanet --help describes them)";
}

// --select and --select-by of eval, predict and export (the ensemble's members).
struct SelectArgs {
  std::string select, select_by;
};

void add_select(CLI::App* cmd, SelectArgs& a) {
  cmd->add_option("--select", a.select, "Ensemble members: all, top:K (the K best) or greedy[:K] (K rounds of greedy "
                                        "selection, default 20), chosen on the validation split (default: the run's "
                                        "config `ensemble`, else all)");
  cmd->add_option("--select-by", a.select_by, "Metric --select chooses by on the validation split (default: the "
                                              "loss's: log_loss, mse or mae)");
}

void take_select(const CLI::App* cmd, const SelectArgs& a, std::optional<std::string>& select,
                 std::optional<std::string>& select_by) {
  if (cmd->count("--select")) select = a.select;
  if (cmd->count("--select-by")) select_by = a.select_by;
}

tn::Verbosity verbosity(bool quiet, bool verbose) {
  return quiet ? tn::Verbosity::Quiet : verbose ? tn::Verbosity::Verbose : tn::Verbosity::Normal;
}

}  // namespace

int run_command(int argc, char** argv);

int main(int argc, char** argv) {
  tn::join_world(&argc, &argv);  // an MPI rank when mpirun or srun started this process
  const int code = run_command(argc, argv);
  tn::leave_world();
  return code;
}

int run_command(int argc, char** argv) {
  tn::setup_logging(tn::Verbosity::Normal);  // on stderr until a command sets its verbosity
  CLI::App app{"turbanet: train swarms of small neural networks, vectorized over members"};
  app.set_version_flag("--version", tn::version_text, "Print the version, git commit, CPU targets and CUDA support, and exit");
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  turbanet train configs/spirals.yaml\n"
      "  turbanet train configs/spirals-small.yaml --swarm 16 --set optimizer.lr=3e-3 --force\n"
      "  turbanet train configs/iris.yaml --threads 1 --out runs/iris-1.h5\n"
      "  turbanet eval runs/spirals.h5 --split test --json\n"
      "  turbanet predict runs/iris.h5 --input new.csv --out predictions.csv\n"
      "  turbanet export runs/iris.h5 --format onnx --out iris.onnx\n"
      "  turbanet report runs/spirals.h5   # runs/spirals.html, opens offline\n"
      "  turbanet train configs/spirals.yaml --shard 0/4   # then: turbanet merge runs/spirals.h5 runs/spirals.shard-*-of-4.h5\n"
      "  mpirun -np 4 turbanet train configs/spirals.yaml   # a build with MPI: 4 ranks, one run file\n"
      "  turbanet sweep configs/spirals-small.yaml --swarm 1..128 --mode both --out sweep.csv\n"
      "  turbanet data generate configs/random-walk.yaml --out data/random-walk.csv\n"
      "Exit codes: 0 ok, 1 I/O failure, 2 bad config/data/arguments/run file, 3 some members diverged,\n"
      "130/143 training interrupted by SIGINT/SIGTERM (work saved: checkpoint and run file).");

  tn::TrainOptions train;
  bool quiet = false, verbose = false;
  std::string seed;
  int swarm = 0;
  std::string out;
  CLI::App* t = app.add_subcommand("train", "Train the swarm a YAML config describes; write runs/<name>.h5");
  t->add_option("config", train.config_path, "YAML configuration file")->required();
  t->add_option("--set", train.set, "Override a config key, e.g. --set optimizer.lr=3e-4 (repeatable)")
      ->allow_extra_args(false);
  t->add_option("--out", out, "Run file to write (overrides output.path)");
  t->add_option("--swarm", swarm, "Swarm size (overrides swarm.size)")->check(whole_number(1));
  t->add_option("--seed", seed, "Seed for initialization and batch order (overrides seed)")
      ->check(CLI::Validator(
          [](std::string& v) {
            return tn::parse_seed(v) ? std::string()
                                     : "expected a whole number from 0 to 18446744073709551615 (2^64 - 1), got '" + v + "'";
          },
          "UINT64"));
  t->add_option("--threads", train.threads, kThreadsHelp)->check(whole_number(0));
  t->add_flag("--force", train.force, "Replace an existing run file");
  t->add_option("--resume", train.resume,
                "Continue from a checkpoint (train.checkpoint) or an interrupted run file; replaces the run file");
  std::string shard;
  t->add_option("--shard", shard,
                "k/K: train only shard k (0 <= k < K) of the swarm's members into NAME.shard-k-of-K.h5 beside the "
                "run file (e.g. one Slurm array task each); join the K files with turbanet merge");
  std::string trials, trials_out;
  t->add_option("--trials", trials,
                "FILE.csv or FILE.json: one member per trial, its columns per-member keys (e.g. optimizer.lr); "
                "the swarm has as many members as trials (ask/tell, scripts/optuna_swarm.py)");
  t->add_option("--trials-out", trials_out,
                "RESULTS.json: each trial's status, best epoch, histories and evaluation metrics (with --trials)");
  add_verbosity(t, &quiet, &verbose);
  t->footer("Example: turbanet train configs/spirals.yaml --swarm 32 --set train.epochs=200");

  tn::EvalOptions eval;
  std::string split, data, eval_out, eval_save;
  CLI::App* e = app.add_subcommand("eval", "Metrics of every member and of the ensemble, printed; the run file is "
                                           "changed only with --save");
  e->add_option("run", eval.run_path, "Run file written by turbanet train")->required();
  e->add_option("--split", split, "Split of the run's data: test (default; train if there is none), val, train, all")
      ->check(CLI::IsMember({"test", "val", "train", "all"}));
  e->add_option("--data", data, "Evaluate new data instead: a YAML config (its data section) or a CSV file "
                                "with the run's feature and target columns");
  e->add_option("--combine", eval.combine, "Ensemble rule: mean_prob (default), vote, mean_logit")
      ->check(CLI::IsMember({"mean_prob", "vote", "mean_logit"}));
  e->add_flag("--json", eval.json, "Print one JSON object on stdout instead of the table");
  e->add_option("--out", eval_out, "Also write the results to FILE.json, or to FILE.h5 (a copy of the run "
                                   "file with the results)");
  e->add_option("--save", eval_save, "Store the results in the run file as /eval/NAME and /predictions/NAME "
                                     "(e.g. --save test-vote)");
  e->add_flag("--force", eval.force, "Replace an existing --out file, or the record --save names");
  e->add_option("--threads", eval.threads, kThreadsHelp)->check(whole_number(0));
  SelectArgs eval_select, predict_select, export_select;
  std::string threshold;
  add_select(e, eval_select);
  e->add_option("--threshold", threshold, "Two-class runs: decide class 1 from this probability on, or auto (each "
                                          "member's and the ensemble's F1-maximizing threshold on the validation split)");
  add_verbosity(e, &quiet, &verbose);
  e->footer("Examples: turbanet eval runs/spirals.h5 --split all --combine vote --save all-vote\n"
            "          turbanet eval runs/diabetes.h5 --select greedy --select-by rmse");

  tn::PredictOptions predict;
  std::string predict_out;
  CLI::App* p = app.add_subcommand("predict", "Ensemble and member predictions with per-sample uncertainty for new inputs, "
                                               "or forecasts per series for sequence runs");
  p->add_option("run", predict.run_path, "Run file written by turbanet train")->required();
  p->add_option("--input", predict.input, "CSV file with the training feature columns (by name), or a "
                                          "YAML config whose data to predict; sequence runs: a CSV of new "
                                          "history in the training data's long format (one forecast per series)")->required();
  p->add_option("--out", predict_out, "FILE.csv or FILE.h5 (default: CSV on stdout)");
  p->add_option("--combine", predict.combine, "Ensemble rule: mean_prob (default), vote, mean_logit")
      ->check(CLI::IsMember({"mean_prob", "vote", "mean_logit"}));
  p->add_flag("--force", predict.force, "Replace an existing --out file");
  p->add_option("--id", predict.ids, "Input column to carry through to the output, as text (repeatable); "
                                     "sequence runs: its value at each series' last row");
  p->add_option("--threads", predict.threads, kThreadsHelp)->check(whole_number(0));
  add_select(p, predict_select);
  add_verbosity(p, &quiet, &verbose);
  p->footer("Examples: turbanet predict runs/iris.h5 --input data/iris.csv --out runs/iris-predictions.h5\n"
            "          turbanet predict runs/random-walk.h5 --input history.csv --out forecasts.csv");

  tn::SweepOptions sweep;
  int sweep_epochs = 0;
  std::string sweep_out;
  CLI::App* w = app.add_subcommand("sweep", "Training time against swarm size, swarm vs one member after another, GFLOP/s vs peak");
  w->add_option("config", sweep.config_path, "YAML configuration file")->required();
  w->add_option("--swarm", sweep.swarm, "Swarm sizes: A..B (powers of two), A..B:K (steps of K) or a list 1,3,17 (default 1..128)");
  w->add_option("--repeats", sweep.repeats, "Timed runs per point after one warm-up (default 3)")->check(whole_number(1));
  w->add_option("--epochs", sweep_epochs, "Override train.epochs")->check(whole_number(1));
  w->add_option("--set", sweep.set, "Override a config key (repeatable)")->allow_extra_args(false);
  w->add_option("--mode", sweep.mode, "swarm (default), sequential (members one after another, same code) or both")
      ->check(CLI::IsMember({"swarm", "sequential", "both"}));
  w->add_option("--out", sweep_out, "Write the table as FILE.csv or FILE.h5");
  w->add_flag("--force", sweep.force, "Replace an existing --out file");
  w->add_option("--threads", sweep.threads, kThreadsHelp)->check(whole_number(0));
  add_verbosity(w, &quiet, &verbose);
  w->footer("Example: turbanet sweep configs/spirals-small.yaml --swarm 1..128 --mode both --out sweep.csv\n"
            "Under mpirun -np P each rank trains its block of every point's members; a point's time is the job's.");

  tn::ExportOptions exp;
  std::string export_format;
  int export_member = 0;
  CLI::App* x = app.add_subcommand("export", "A member or the whole ensemble as an ONNX model or NumPy arrays (.npz)");
  x->add_option("run", exp.run_path, "Run file written by turbanet train")->required();
  x->add_option("--format", export_format, "onnx or npz (default: from the --out extension)")
      ->check(CLI::IsMember({"onnx", "npz"}));
  x->add_option("--out", exp.out, "FILE.onnx or FILE.npz to write")->required();
  x->add_option("--member", export_member, "Export this member alone (its global index)")->check(whole_number(0));
  x->add_flag("--ensemble", exp.ensemble, "Export every member in one graph with the combined prediction (default)");
  x->add_flag("--force", exp.force, "Replace an existing --out file");
  add_select(x, export_select);
  x->add_option("--threads", exp.threads, kThreadsHelp)->check(whole_number(0));
  add_verbosity(x, &quiet, &verbose);
  x->footer("Examples: turbanet export runs/iris.h5 --format onnx --out iris.onnx\n"
            "          turbanet export runs/stocks-lstm.h5 --member 3 --out stock3.onnx");

  tn::ReportOptions report;
  std::string report_out;
  CLI::App* rp = app.add_subcommand("report", "One self-contained HTML page of a run: curves, metrics, hyperparameters, "
                                              "predictions, searches (opens offline)");
  rp->add_option("run", report.run_path, "Run file (finished, interrupted, checkpoint or merged), or the table of "
                                         "turbanet sweep --out FILE.csv|FILE.h5")->required();
  rp->add_option("--out", report_out, "HTML file to write (default: RUN.html beside the run file)");
  rp->add_flag("--force", report.force, "Replace an existing --out file");
  add_verbosity(rp, &quiet, &verbose);
  rp->footer("Example: turbanet report runs/spirals-halving.h5 --out halving.html");

  tn::MergeOptions merge;
  CLI::App* m = app.add_subcommand("merge", "Join the run files of a sharded swarm (train --shard k/K) into the run "
                                            "file one run of the whole swarm writes");
  m->add_option("out", merge.out, "Run file to write")->required();
  m->add_option("parts", merge.parts, "The K shards' run files, in any order")->required();
  m->add_flag("--force", merge.force, "Replace an existing run file");
  add_verbosity(m, &quiet, &verbose);
  m->footer("Example: turbanet merge runs/seeds.h5 runs/seeds.shard-*-of-8.h5");

  tn::DataGenerateOptions generate;
  CLI::App* dt = app.add_subcommand("data", "Data tools");
  dt->require_subcommand(1);
  CLI::App* dg = dt->add_subcommand("generate", "Write a config's built-in generated data (random_walk, spirals, moons, sine) as CSV");
  dg->add_option("config", generate.config_path, "YAML configuration file (its data section)")->required();
  dg->add_option("--out", generate.out, "CSV file to write")->required();
  dg->add_flag("--force", generate.force, "Replace an existing --out file");
  dg->add_option("--set", generate.set, "Override a config key, e.g. --set data.source.series=10 (repeatable)")
      ->allow_extra_args(false);
  add_verbosity(dg, &quiet, &verbose);
  dg->footer("Example: turbanet data generate configs/random-walk.yaml --out data/random-walk.csv");

  CLI::App* d = app.add_subcommand("devices", "List the GPUs this build can train on (name, memory, compute capability)");
  d->footer("Example: turbanet devices");

  std::string shell;
  CLI::App* cp = app.add_subcommand("completion", "Print the shell completion script for bash, zsh or fish "
                                                 "(commands, flags, config keys for --set, files)");
  cp->add_option("shell", shell, "bash, zsh or fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cp->footer("Examples: source <(turbanet completion bash)      # this shell; docs/install.md installs it for good\n"
             "          turbanet completion fish | source");

  if (const std::string unknown = unknown_subcommand(app, argc, argv); !unknown.empty()) {
    std::fprintf(stderr, "%s\n", unknown.c_str());
    return tn::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print on standard output, checked like every write there: on a full
    // disk or a closed file they exit 1 with the error on stderr instead of 0.
    std::ostringstream out, err;
    const int code = app.exit(e, out, err);
    std::fputs(err.str().c_str(), stderr);
    if (!out.str().empty() && !tn::print_stdout(out.str())) return tn::kExitIo;
    return code == 0 ? 0 : tn::kExitUsage;
  }
  try {
    if (t->parsed()) {
      if (t->count("--out")) train.out = out;
      if (t->count("--swarm")) train.swarm = swarm;
      if (t->count("--seed")) train.seed = tn::parse_seed(seed);
      if (t->count("--shard")) train.shard = shard;
      if (t->count("--trials")) train.trials = trials;
      if (t->count("--trials-out")) train.trials_out = trials_out;
      train.verbosity = verbosity(quiet, verbose);
      return tn::run_train(train);
    }
    if (e->parsed()) {
      if (e->count("--split")) eval.split = split;
      if (e->count("--data")) eval.data = data;
      if (e->count("--out")) eval.out = eval_out;
      if (e->count("--save")) eval.save = eval_save;
      if (e->count("--threshold")) eval.threshold = threshold;
      take_select(e, eval_select, eval.select, eval.select_by);
      eval.verbosity = verbosity(quiet, verbose);
      return tn::run_eval(eval);
    }
    if (d->parsed()) return tn::run_devices();
    if (cp->parsed()) return tn::print_stdout(tn::completion_script(app, shell)) ? tn::kExitOk : tn::kExitIo;
    if (m->parsed()) {
      merge.verbosity = verbosity(quiet, verbose);
      return tn::run_merge(merge);
    }
    if (dg->parsed()) {
      generate.verbosity = verbosity(quiet, verbose);
      return tn::run_data_generate(generate);
    }
    if (w->parsed()) {
      if (w->count("--epochs")) sweep.epochs = sweep_epochs;
      if (w->count("--out")) sweep.out = sweep_out;
      sweep.verbosity = verbosity(quiet, verbose);
      return tn::run_sweep(sweep);
    }
    if (x->parsed()) {
      if (x->count("--format")) exp.format = export_format;
      if (x->count("--member")) exp.member = export_member;
      take_select(x, export_select, exp.select, exp.select_by);
      exp.verbosity = verbosity(quiet, verbose);
      return tn::run_export(exp);
    }
    if (rp->parsed()) {
      if (rp->count("--out")) report.out = report_out;
      report.verbosity = verbosity(quiet, verbose);
      return tn::run_report(report);
    }
    if (p->parsed()) {
      if (p->count("--out")) predict.out = predict_out;
      take_select(p, predict_select, predict.select, predict.select_by);
      predict.verbosity = verbosity(quiet, verbose);
      return tn::run_predict(predict);
    }
  } catch (const std::exception& e) {  // internal: each command reports its user errors (with_user_errors)
    const int code = tn::report_failure(e);
    // Under mpirun the other ranks may wait for this one in a collective: end them too.
    if (tn::world().size > 1) tn::abort_world(code);
    return code;
  }
  return tn::kExitUsage;
}
