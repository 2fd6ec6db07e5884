// `turbanet train`: options → resolved config → the training service (run/train_run.h; under
// mpirun the job's, run/train_ranks.h) → progress, summaries and the exit code.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <cstdlib>
#include <set>
#include <sstream>

#include "cli/commands/commands.h"
#include "config/trials.h"
#include "io/run_file.h"
#include "io/text_file.h"
#include "cli/commands/eval_group_report.h"
#include "cli/commands/eval_report.h"
#include "cli/progress.h"
#include "cli/commands/cli_util.h"
#include "run/errors.h"
#include "run/lineage.h"
#include "run/select_run.h"
#include "run/world/world.h"
#include "run/stop_signals.h"
#include "run/train_ranks.h"
#include "run/train_run.h"
#include "run/trial_results.h"
#include "turbanet_version.h"
#include "util/command_line.h"

namespace tn {
namespace {
namespace fs = std::filesystem;

Config resolve_config(const TrainOptions& opt) {
  std::vector<Override> ov;
  for (const auto& s : opt.set) ov.push_back(parse_override(s));
  // Dedicated flags are overrides too, so they are validated and recorded like any key.
  if (opt.swarm) ov.push_back({"swarm.size", std::to_string(*opt.swarm)});
  if (opt.seed) ov.push_back({"seed", std::to_string(*opt.seed)});
  if (opt.out) ov.push_back({"output.path", "'" + *opt.out + "'"});
  if (opt.tensorboard) ov.push_back({"train.tensorboard", "'" + *opt.tensorboard + "'"});
  if (!opt.trials) return load_config(opt.config_path, ov);
  // Trials come last: each row is one member, whatever the config's per-member values say.
  const Trials trials = read_trials(*opt.trials);
  check_trials_config(trials, load_config(opt.config_path, ov));
  for (Override& o : trial_overrides(trials)) ov.push_back(std::move(o));
  try {
    return load_config(opt.config_path, ov);
  } catch (const ConfigError& e) {
    throw ConfigError(trial_error(trials, e.what()));
  }
}

// Checks --trials and --trials-out before any work.
void check_trial_options(const TrainOptions& opt) {
  if (opt.trials_out && !opt.trials)
    throw UsageError("--trials-out reports the trials of --trials FILE; give both");
  if (opt.trials && opt.swarm)
    throw UsageError("--swarm with --trials: the trials file gives one member per row; leave out --swarm");
  if (opt.trials_out && opt.shard)
    throw UsageError("--trials-out with --shard: a shard holds only some trials; merge the shards (turbanet merge) and "
                     "train without --trials-out, or run the whole swarm in one job (mpirun)");
  if (opt.trials_out && fs::path(*opt.trials_out).extension() != ".json")
    throw UsageError("--trials-out: '" + *opt.trials_out + "' must end in .json");
}

// --trials and --trials-out, checked with the run's own files (run/command_files.h). A resumed
// run replaces the results its interrupted start did not write, as it replaces its run file.
CommandFiles trial_files(const TrainOptions& opt) {
  CommandFiles f;
  if (opt.trials) f.inputs.push_back({"--trials", *opt.trials});
  if (opt.trials_out)
    f.outputs.push_back({.key = "--trials-out", .path = *opt.trials_out, .what = "trials results file",
                         .replace = opt.force || !opt.resume.empty()});
  return f;
}

// Writes --trials-out from the run file the finished run wrote; `code` is the run's exit code.
int write_trial_results(const TrainOptions& opt, int code) {
  const Config cfg = resolve_config(opt);
  const RunFile f = read_run_file(cfg.output.path);
  const std::string text = trial_results_json(read_trials(*opt.trials), f, cfg.output.path);
  // The run file was read above (a failure there is bad input); failing to write is exit 1.
  writing_output([&] { write_text_atomically(*opt.trials_out, text, opt.force || !opt.resume.empty()); });
  spdlog::info("wrote the results of {} trials to {}", cfg.swarm.size, *opt.trials_out);
  return code;
}

// Where an epoch interrupted between steps stands: "members at step 40 of 250" (or a range).
std::string step_position(const PartialEpoch& p) {
  const auto [lo, hi] = std::minmax_element(p.next_step.begin(), p.next_step.end());
  return *lo == *hi ? fmt::format("members at step {}", *lo) : fmt::format("members at steps {} to {}", *lo, *hi);
}

void log_start(const TrainOptions& opt, const TrainingRun& run) {
  const Config& cfg = run.config();
  const PreparedData& data = run.data();
  spdlog::info("turbanet {} | config {} | device {} | threads {}", TURBANET_VERSION, opt.config_path,
               run.backend().name(), run.backend().workers());
  spdlog::debug("resolved configuration (also in the run file's /config):\n{}", to_yaml(cfg));
  spdlog::info("data {}: {} train / {} val / {} test samples, {} features{}", data.origin, data.train.n,
               data.val.n, data.test.n, data.features,
               data.num_classes ? fmt::format(", {} classes", data.num_classes) : "");
  if (data.seq_len > 0)
    spdlog::info("sequence windows: {} steps x {} features, horizon {}, stride {}, {} series", data.seq_len,
                 data.step_features, cfg.data.sequence.horizon, cfg.data.sequence.stride,
                 std::max<std::size_t>(1, data.group_names.size()));
  if (!run.plan().note.empty()) spdlog::info("{}", run.plan().note);
}

// Early stopping: how many members stopped, when, and which parameters they keep.
void log_early_stopping(const Config& cfg, const TrainOutput& t) {
  const EarlyStoppingConfig& es = cfg.train.early_stopping;
  if (!es.enabled()) return;
  int stopped = 0, first = 0, last = 0;
  for (int e : t.stopped_epoch) {
    if (e <= 0) continue;
    first = stopped++ ? std::min(first, e) : e;
    last = std::max(last, e);
  }
  spdlog::info("early stopping on {}: {} of {} members stopped{}{}", es.metric, stopped, cfg.swarm.size,
               stopped ? fmt::format(" (after epochs {} to {})", first, last) : "",
               es.restore_best ? "; every member keeps the parameters of its best epoch" : "");
}

// Search: how many members each rung kept, or how many took over better members' state.
void log_search(const Config& cfg, const TrainOutput& t) {
  const SearchConfig& sc = cfg.search;
  if (!sc.enabled() || t.search_epochs.empty()) return;
  std::string epochs;
  for (int e : t.search_epochs) epochs += (epochs.empty() ? "" : ", ") + std::to_string(e);
  if (sc.type == SearchConfig::Type::Halving) {
    std::string kept;
    for (int n : halving_counts(t.search_epochs, t.search_rung, t.diverged_epoch))
      kept += (kept.empty() ? "" : " -> ") + std::to_string(n);
    spdlog::info("halving on {}: members training {} (rungs after epochs {}); /search/rung has each member's rung",
                 sc.metric, kept, epochs);
    return;
  }
  int exploits = 0;
  for (std::size_t i = 0; i < t.search_source.size(); ++i) exploits += t.search_source[i] != static_cast<int>(i % cfg.swarm.size);
  spdlog::info("pbt on {}: {} rounds (after epochs {}), {} exploits; `turbanet eval` shows the best member's lineage",
               sc.metric, t.search_epochs.size(), epochs, exploits);
}

void log_summary(const Config& cfg, const TrainOutput& t, int resumed) {
  const int S = cfg.swarm.size, E = t.epochs;
  double loss = 0, acc = 0;
  int finite = 0;
  for (int s = 0; s < S; ++s) {
    // A member stopped early: its last epoch trained.
    const int e = (t.stopped_epoch.empty() || t.stopped_epoch[s] <= 0 ? E : t.stopped_epoch[s]) - 1;
    if (e < 0) continue;
    const float l = t.train_loss[static_cast<std::size_t>(s) * E + e];
    if (!std::isfinite(l)) continue;
    ++finite;
    loss += l;
    if (!t.train_acc.empty()) acc += t.train_acc[static_cast<std::size_t>(s) * E + e];
  }
  double steps = static_cast<double>(t.steps_per_epoch) * (E - resumed);
  if (!t.architectures.empty()) {  // each architecture trained its own epochs (a resumed one: in all)
    double member_epochs = 0;
    for (const ArchitectureOutput& a : t.architectures) member_epochs += static_cast<double>(a.members.size()) * a.epochs;
    steps = static_cast<double>(t.steps_per_epoch) * member_epochs / S;
  }
  spdlog::info("trained {} members x {} steps in {:.3f} s ({:.3g} member-steps/s); final train loss "
               "mean {:.5f}{}", S, static_cast<long>(steps), t.train_seconds, S * steps / t.train_seconds,
               finite ? loss / finite : NAN,
               t.train_acc.empty() || !finite ? "" : fmt::format(", accuracy mean {:.4f}", acc / finite));
  spdlog::debug("kernel: {}", t.kernel);
  log_early_stopping(cfg, t);
  log_search(cfg, t);
}

// The binary this process runs, as a command: `turbanet` when that name on PATH is this very
// file, else its absolute path (a build tree's build/turbanet), so the printed command runs.
std::string running_binary() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "turbanet";
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (dir.empty()) continue;
      std::error_code same;
      if (std::filesystem::equivalent(std::filesystem::path(dir) / "turbanet", self, same) && !same) return "turbanet";
    }
  }
  return self.string();
}

// The command that continues an interrupted run: this binary, the same config and options,
// --resume CKPT.
std::string resume_command(const TrainOptions& opt, const std::string& checkpoint) {
  const auto quote = shell_quoted;
  std::string cmd = quote(running_binary()) + " train " + quote(opt.config_path);
  for (const std::string& s : opt.set) cmd += " --set " + quote(s);
  if (opt.swarm) cmd += " --swarm " + std::to_string(*opt.swarm);
  if (opt.seed) cmd += " --seed " + std::to_string(*opt.seed);
  if (opt.out) cmd += " --out " + quote(*opt.out);
  if (opt.tensorboard) cmd += " --tensorboard " + quote(*opt.tensorboard);
  if (opt.shard) cmd += " --shard " + *opt.shard;
  if (opt.trials) cmd += " --trials " + quote(*opt.trials);
  if (opt.trials_out) cmd += " --trials-out " + quote(*opt.trials_out);
  return cmd + " --resume " + quote(checkpoint);
}

// Halving: the ensemble of the members trained to the end, which the whole swarm's (with the
// members stopped at rungs, undertrained by design) understates.
void log_kept_ensemble(const FinalEval& f) {
  if (f.kept.empty()) return;
  const Evaluation& e = f.kept_eval;
  std::string text;
  for (std::size_t m : headline_metrics(e.names)) text += fmt::format(" {} {:.4g}", e.names[m], e.ensemble.values[m]);
  spdlog::info("halving: the ensemble of the {} members trained to the end:{}", f.kept.size(), text);
}

void log_eval(const Config& cfg, const PreparedData& data, const FinalEval& f) {
  if (f.split->name != "test")
    spdlog::info("no test split: evaluated on the training split, which the members were trained on (optimistic)");
  if (!f.record.per_group()) {
    const RankView rank{f.select_split->name, &f.select_eval, rank_members(f.select_eval), ""};
    if (f.select_split->name != "val")
      spdlog::info("no validation split: members are ranked{} on the training split (set data.split.val to choose on "
                   "data they did not train on)", cfg.ensemble.enabled() ? " and the ensemble is chosen" : "");
    if (f.selection.present()) spdlog::info("ensemble of the selected members: {}", describe_selection(f.selection));
    else if (cfg.ensemble.enabled())
      spdlog::info("ensemble: every member (a shard does not choose among the members; choose on the merged run with "
                   "eval, predict or export --select)");
    spdlog::info("{}", eval_summary(f.eval, f.record, rank));
    log_kept_ensemble(f);
    return;
  }
  spdlog::info("{}", group_eval_summary(f.record));
  spdlog::info("evaluation of each member on its own group's samples:\n{}",
               group_eval_table(f.record, cfg.output.path, data.group_names));
}

}  // namespace

std::optional<std::uint64_t> parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const auto r = std::from_chars(text.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end) return std::nullopt;
  return v;
}

namespace {

// What the training service is asked besides the config.
TrainRequest train_request(const TrainOptions& opt) {
  return {.threads = opt.threads, .force = opt.force, .resume = opt.resume, .other = trial_files(opt)};
}

// How a training is reported: its set-up, progress, summaries and how it ended. `in_job`: a
// shard of a job (mpirun, or its shards resumed in one process), whose resume command rank 0
// prints for the whole job.
TrainReports train_reports(const TrainOptions& opt, bool in_job) {
  TrainReports reports;
  reports.starting = [&opt](const TrainingRun& run, const TrainRequest& req) {
    if (!run.device_note().empty()) spdlog::info("{}", run.device_note());
    log_start(opt, run);
    const Config& cfg = run.config();
    if (!req.resume.empty()) {
      if (const PartialEpoch* p = run.resumed_partial())
        spdlog::info("resuming from {} in epoch {} of {} ({})", req.resume, run.resumed_epochs() + 1, cfg.train.epochs,
                     step_position(*p));
      else
        spdlog::info("resuming from {} after epoch {} of {}", req.resume, run.resumed_epochs(), cfg.train.epochs);
    }
    if (!run.resume_note().empty()) spdlog::warn("{}", run.resume_note());
  };
  reports.callbacks = [&opt](const TrainingRun& run) {
    const Config& cfg = run.config();
    const auto progress =
        std::make_shared<Progress>(cfg.train.epochs, cfg.train.log_every, opt.verbosity == Verbosity::Quiet);
    TrainCallbacks cb;
    cb.progress = [progress](const EpochStats& st) { (*progress)(st); };
    cb.trained = [progress, &run](const TrainOutput& t) {
      const Config& cfg = run.config();
      progress->finish();
      const char* sig = StopSignals::requested() == SIGTERM ? "SIGTERM" : "SIGINT";
      if (t.interrupted && !t.architectures.empty()) {
        int lo = t.epochs, hi = 0;
        for (const ArchitectureOutput& a : t.architectures) lo = std::min(lo, a.epochs), hi = std::max(hi, a.epochs);
        spdlog::warn("{} received: the {} architectures stopped after {} to {} of {} epochs (each trains on "
                     "its own); saving the work", sig, t.architectures.size(), lo, hi, cfg.train.epochs);
      } else if (t.interrupted && t.partial.present())
        spdlog::warn("{} received: stopped in epoch {} of {} ({}); saving the work", sig, t.epochs + 1,
                     cfg.train.epochs, step_position(t.partial));
      else if (t.interrupted)
        spdlog::warn("{} received: stopped after epoch {} of {}; saving the work", sig, t.epochs, cfg.train.epochs);
      log_summary(cfg, t, run.resumed_epochs());
    };
    cb.evaluated = [&run](const FinalEval& f) { log_eval(run.config(), run.data(), f); };
    return cb;
  };
  reports.finished = [&opt, in_job](const TrainingRun& run, const TrainResult& r) {
    const Config& cfg = run.config();
    spdlog::debug("phases: setup and training {:.3f} s (training loop {:.3f} s), evaluation {:.3f} s, "
                  "run file {:.3f} s", r.setup_and_train_seconds, r.out.train_seconds, r.eval_seconds, r.write_seconds);
    spdlog::info("wrote {}{}", cfg.output.path, r.out.interrupted ? " (marked interrupted)" : "");
    if (r.out.interrupted) {
      if (in_job)  // rank 0 prints the job's resume command
        spdlog::warn("wrote {} (marked interrupted){}", cfg.output.path, r.checkpoint.empty() ? "" : " and " + r.checkpoint);
      else if (!r.checkpoint.empty())
        spdlog::warn("wrote checkpoint {}; continue with:\n  {}", r.checkpoint, resume_command(opt, r.checkpoint));
      else
        spdlog::warn("continue with:\n  {}", resume_command(opt, cfg.output.path));
    } else if (!r.diverged.empty()) {
      spdlog::error("{} of {} members diverged (members {}): frozen at the step their loss became non-finite, their "
                    "predictions NaN and left out of the ensemble. "
                    "Lower optimizer.lr or set optimizer.grad_clip", r.diverged.size(), cfg.swarm.size,
                    fmt::join(r.diverged, ", "));
    }
  };
  return reports;
}

// One process: the whole swarm, or the shard --shard names.
int train_alone(const TrainOptions& opt, std::chrono::steady_clock::time_point started) {
  const Shard shard = opt.shard ? parse_shard(*opt.shard) : Shard{};
  TrainRequest req = train_request(opt);
  req.started = started;
  return train_reported(resolve_config(opt), req, shard, train_reports(opt, false));
}

// The ranks of a job (run/train_ranks.h); rank 0 says how an interrupted job continues.
int train_on_ranks(const TrainOptions& opt, const World& w) {
  if (w.size > 1) log_as_rank(w);
  const auto whole = [&opt] {
    if (opt.shard) throw UsageError("--shard with mpirun: the ranks are the shards; leave --shard out");
    return resolve_config(opt);
  };
  const JobOutcome o = train_job(whole, train_request(opt), w, train_reports(opt, true));
  if (o.interrupted > 0) {
    TrainOptions again = opt;
    again.force = false;
    spdlog::warn("{} of {} ranks were interrupted; their shards are saved beside {}. Continue with any number of "
                 "ranks (up to {}, the shards), or one process:\n  {}{}", o.interrupted, w.size, o.out, o.shards,
                 w.size > 1 ? fmt::format("mpirun -np {} ", w.size) : "", resume_command(again, o.checkpoint));
  }
  return o.code;
}

// `train --resume CK` where CK is no file but the job it names left shards: the shards are
// resumed (one process: every shard in turn) and merged, as under mpirun.
// A --resume file that exists beside a job's shards is refused: which one is meant?
bool resumes_job(const TrainOptions& opt) {
  if (opt.resume.empty() || opt.shard) return false;
  if (!std::filesystem::exists(opt.resume)) return true;
  std::set<int> counts;
  try {
    counts = job_shard_counts(resolve_config(opt));
  } catch (const std::exception&) {  // the config's errors are train_alone's to report
    return false;
  }
  if (!counts.empty())
    throw UsageError("--resume '" + opt.resume + "' is a one-process run's file, but the shards of a job writing "
                     "the same run file are there too (" + std::to_string(*counts.begin()) + " shards): remove '" +
                     opt.resume + "' to resume the job, or the shard files to resume it");
  return false;
}

}  // namespace

int run_train(const TrainOptions& opt) {
  const auto started = std::chrono::steady_clock::now();
  setup_logging(opt.verbosity);
  const World& w = world();
  bool job = w.size > 1;
  return with_user_errors([&] {
    check_trial_options(opt);
    if (!job) job = resumes_job(opt);
    const int code = job ? train_on_ranks(opt, w) : train_alone(opt, started);
    // Trials that diverged are results too (status "diverged"); an interrupted run has none yet.
    if (opt.trials_out && w.rank == 0 && (code == kExitOk || code == kExitDiverged)) return write_trial_results(opt, code);
    return code;
  });
}

}  // namespace tn
