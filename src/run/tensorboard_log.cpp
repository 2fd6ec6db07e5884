// Live TensorBoard logs of a training run (run/tensorboard_log.h).
#include "run/tensorboard_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "io/atomic_file.h"
#include "io/tensorboard_events.h"
#include "run/command_files.h"
#include "run/errors.h"

namespace tn {
namespace {

namespace fs = std::filesystem;

double now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// The group of each local member: members with the same value of every per-member key (in
// order of their first member), and how many there are.
std::vector<int> member_groups(const Config& cfg, int& groups) {
  std::map<std::string, int> index;
  std::vector<int> g(static_cast<std::size_t>(cfg.swarm.size));
  for (int s = 0; s < cfg.swarm.size; ++s) {
    std::string key;
    for (const MemberValues& mv : cfg.member_values) key += mv.text(cfg.swarm.first_member + s) + '\n';
    g[s] = index.emplace(key, static_cast<int>(index.size())).first->second;
  }
  groups = static_cast<int>(index.size());
  return g;
}

// Run directory names of equal width: member-007, group-12.
std::string run_name(const char* kind, int k, int last) {
  const std::string n = std::to_string(k), width = std::to_string(std::max(last, 0));
  return std::string(kind) + "-" + std::string(width.size() - std::min(width.size(), n.size()), '0') + n;
}

// The event files of the runs a training run writes in `dir` (its own, swarm, ensemble,
// member-*, group-*); other runs in it (another experiment's subdirectory) are not ours.
std::vector<fs::path> our_event_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  const auto add_files = [&](const fs::path& d) {
    for (const fs::directory_entry& e : fs::directory_iterator(d, ec))
      if (e.is_regular_file() && io::is_event_file(e.path().filename().string())) out.push_back(e.path());
  };
  add_files(dir);
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (e.is_directory() && (n == "swarm" || n == "ensemble" || n.rfind("member-", 0) == 0 || n.rfind("group-", 0) == 0))
      add_files(e.path());
  }
  return out;
}

io::HParamValue member_value(const MemberValues& mv, int member) {
  if (!mv.labels.empty()) return mv.text(member);
  return mv.at(member);
}

// The experiment's hparams: each per-member key, with its values or range, and what a run is.
std::vector<io::HParamInfo> hparam_infos(const Config& cfg, TensorBoardRuns runs) {
  std::vector<io::HParamInfo> out;
  if (runs == TensorBoardRuns::Members)
    out.push_back({"member", false, {}, static_cast<double>(cfg.swarm.first_member),
                   static_cast<double>(cfg.swarm.first_member + cfg.swarm.size - 1)});
  else
    out.push_back({"members", false, {}, 1, static_cast<double>(cfg.swarm.size)});
  for (const MemberValues& mv : cfg.member_values) {
    io::HParamInfo h{mv.key, !mv.labels.empty(), {}, 0, 0};
    if (h.text)
      for (const std::string& l : mv.labels) h.discrete.emplace_back(l);
    else if (mv.form == MemberValues::Form::Values)
      for (double v : mv.values) h.discrete.emplace_back(v);
    else
      h.lo = std::min(mv.lo, mv.hi), h.hi = std::max(mv.lo, mv.hi);
    out.push_back(std::move(h));
  }
  return out;
}

// A tag's values over members, or over a group's members: only the finite ones.
struct Tagged {
  const char* tag;
  float MemberEpoch::*value;
};
constexpr Tagged kFloatTags[] = {{"loss", &MemberEpoch::loss},
                                 {"val_loss", &MemberEpoch::val_loss},
                                 {"accuracy", &MemberEpoch::acc},
                                 {"val_accuracy", &MemberEpoch::val_acc}};

// The metrics the HParams tab shows against each session's hparams: its runs' last values.
std::vector<io::MetricInfo> metric_infos(const Config& cfg) {
  const bool classification = is_classification(cfg.loss.type), val = cfg.data.split.val > 0;
  std::vector<io::MetricInfo> m = {{"loss", false}};
  if (val) m.push_back({"val_loss", true});
  if (classification) m.push_back({"accuracy", false});
  if (classification && val) m.push_back({"val_accuracy", true});
  return m;
}

// mean, median, q10, q90, min, max of `v` (sorted here), linear between order statistics.
void summary_curves(const std::string& tag, std::vector<double>& v, std::vector<io::Scalar>& out) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  const auto q = [&](double p) {
    const double at = p * static_cast<double>(v.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(at), hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
  };
  double sum = 0;
  for (double x : v) sum += x;
  const std::pair<const char*, double> curves[] = {{"mean", sum / static_cast<double>(v.size())},
                                                   {"median", q(0.5)}, {"q10", q(0.1)}, {"q90", q(0.9)},
                                                   {"min", v.front()}, {"max", v.back()}};
  for (const auto& [name, value] : curves) out.push_back({tag + "/" + name, static_cast<float>(value)});
}

}  // namespace

struct TensorBoardLog::Run {
  io::EventWriter events;
  std::vector<int> members;  // local
  Run(const std::string& dir, int keep) : events(dir, keep) {}
};

TensorBoardRuns resolved_runs(const Config& cfg) {
  if (cfg.train.tensorboard_runs != TensorBoardRuns::Auto) return cfg.train.tensorboard_runs;
  if (cfg.swarm.size <= kTensorBoardAutoRuns) return TensorBoardRuns::Members;
  int groups = 0;
  member_groups(cfg, groups);
  return groups <= kTensorBoardAutoRuns && !cfg.member_values.empty() ? TensorBoardRuns::Groups : TensorBoardRuns::Swarm;
}

void check_tensorboard_dir(const Config& cfg, bool force, bool resume, const std::string& refusal) {
  const std::string& dir = cfg.train.tensorboard;
  if (dir.empty()) return;
  if (!refusal.empty())
    throw ConfigError("train.tensorboard: the logs follow every member epoch by epoch, but " + refusal +
                      "; leave out train.tensorboard (--tensorboard), or see docs/commands.md#tensorboard-logs");
  std::error_code ec;
  const fs::path d = fs::weakly_canonical(dir, ec);
  for (const NamedFile& in : config_inputs(cfg)) {
    const fs::path i = fs::weakly_canonical(in.path, ec);
    const auto [a, b] = std::mismatch(i.begin(), i.end(), d.begin(), d.end());
    if (a == i.end())
      throw UsageError("train.tensorboard: '" + dir + "' is " + (b == d.end() ? "" : "inside ") + in.key + " '" +
                       in.path + "', an input of this run; write the logs to a directory of their own");
  }
  for (const auto& [key, path] : {std::pair<std::string, std::string>("output.path", cfg.output.path),
                                  std::pair<std::string, std::string>("train.checkpoint.path", cfg.train.checkpoint.path)})
    if (fs::weakly_canonical(path, ec) == d)
      throw UsageError("train.tensorboard: '" + dir + "' is " + key + "; write the logs to a directory of their own");
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw UsageError("train.tensorboard: '" + dir + "' exists and is not a directory; name a directory for the logs");
  fs::create_directories(dir, ec);
  if (ec) throw ConfigError("train.tensorboard: cannot create directory '" + dir + "': " + ec.message());
  if (const std::string why = io::output_problem((fs::path(dir) / "events.out.tfevents").string()); !why.empty())
    throw ConfigError("train.tensorboard: " + why);
  if (resume || force) return;
  if (const std::vector<fs::path> old = our_event_files(dir); !old.empty())
    throw UsageError("train.tensorboard: '" + dir + "' already holds TensorBoard logs ('" + old.front().string() +
                     "'); pass --force to replace them, --resume CHECKPOINT to continue them, or name another "
                     "directory");
}

TensorBoardLog::TensorBoardLog(const Config& cfg, int resumed_epochs) : cfg_(cfg), runs_(resolved_runs(cfg)) {
  const fs::path dir = cfg.train.tensorboard;
  std::error_code ec;
  if (resumed_epochs < 0)  // a new run: the logs of an earlier one go (--force)
    for (const fs::path& f : our_event_files(dir)) fs::remove(f, ec);
  const double t = now();
  io::EventWriter top(dir.string(), resumed_epochs);
  if (top.started_new()) top.experiment(t, hparam_infos(cfg, runs_), metric_infos(cfg));
  swarm_ = std::make_unique<io::EventWriter>((dir / "swarm").string(), resumed_epochs);
  ensemble_ = std::make_unique<io::EventWriter>((dir / "ensemble").string(), resumed_epochs);
  const int S = cfg.swarm.size, first = cfg.swarm.first_member;
  int count = 0;
  if (runs_ == TensorBoardRuns::Members) {
    for (int s = 0; s < S; ++s) group_of_.push_back(s);
    count = S;
  } else if (runs_ == TensorBoardRuns::Groups) {
    group_of_ = member_groups(cfg, count);
  }
  for (int g = 0; g < count; ++g) {
    const std::string name = runs_ == TensorBoardRuns::Members ? run_name("member", first + g, first + S - 1)
                                                               : run_name("group", g, count - 1);
    runs_out_.push_back(std::make_unique<Run>((dir / name).string(), resumed_epochs));
  }
  for (int s = 0; s < static_cast<int>(group_of_.size()); ++s) runs_out_[group_of_[s]]->members.push_back(s);
  for (int g = 0; g < count; ++g) {
    Run& r = *runs_out_[g];
    if (!r.events.started_new()) continue;
    const int m = first + r.members.front();
    std::vector<std::pair<std::string, io::HParamValue>> hp;
    if (runs_ == TensorBoardRuns::Members) hp.emplace_back("member", static_cast<double>(m));
    else hp.emplace_back("members", static_cast<double>(r.members.size()));
    for (const MemberValues& mv : cfg.member_values) hp.emplace_back(mv.key, member_value(mv, m));
    r.events.session_start(t, hp);
  }
  top.flush();
  flush_all();  // the runs are there from the start
}

TensorBoardLog::~TensorBoardLog() = default;  // the writers flush what is pending

void TensorBoardLog::flush_all() {
  swarm_->flush();
  ensemble_->flush();
  for (const auto& r : runs_out_) r->events.flush();
  flushed_ = std::chrono::steady_clock::now();
}

void TensorBoardLog::flush() {
  write([&] { flush_all(); });
}

void TensorBoardLog::write(const std::function<void()>& fn) {
  if (failed_) return;
  try {
    fn();
  } catch (const std::exception& e) {  // training goes on; what was written stays readable
    failed_ = true;
    spdlog::error("{}; the TensorBoard logs stop here, training goes on", e.what());
  }
}

void TensorBoardLog::epoch(const EpochStats& st) {
  write([&] {
    const double t = now();
    const int first = cfg_.swarm.first_member;
    std::vector<io::Scalar> swarm;
    for (const Tagged& tag : kFloatTags) {
      std::vector<double> v;
      for (const MemberEpoch& m : st.members)
        if (std::isfinite(m.*tag.value)) v.push_back(m.*tag.value);
      summary_curves(tag.tag, v, swarm);
    }
    std::vector<double> lr;
    for (const MemberEpoch& m : st.members)
      if (std::isfinite(m.loss)) lr.push_back(m.lr);
    summary_curves("lr", lr, swarm);
    swarm.push_back({"members_training", static_cast<float>(st.training)});
    swarm.push_back({"members_diverged", static_cast<float>(st.diverged)});
    swarm_->scalars(st.epoch, t, swarm);
    if (runs_out_.empty()) return;
    std::vector<const MemberEpoch*> of(group_of_.size(), nullptr);  // by local member
    for (const MemberEpoch& m : st.members) of[static_cast<std::size_t>(m.member - first)] = &m;
    for (const auto& r : runs_out_) {
      std::vector<io::Scalar> values;
      for (const Tagged& tag : kFloatTags) {
        double sum = 0;
        int n = 0;
        for (int s : r->members)
          if (of[s] && std::isfinite(of[s]->*tag.value)) sum += of[s]->*tag.value, ++n;
        if (n) values.push_back({tag.tag, static_cast<float>(sum / n)});
      }
      double sum = 0;
      int n = 0;
      for (int s : r->members)
        if (of[s] && std::isfinite(of[s]->loss)) sum += of[s]->lr, ++n;
      if (n) values.push_back({"lr", static_cast<float>(sum / n)});
      r->events.scalars(st.epoch, t, values);
    }
  });
  if (std::chrono::steady_clock::now() - flushed_ >= std::chrono::seconds(1)) flush();
}

void TensorBoardLog::finished(int epochs, const std::vector<int>& diverged_epoch,
                              const std::vector<std::pair<std::string, double>>& ensemble_scores, bool interrupted) {
  if (interrupted) return;
  write([&] {
    const double t = now();
    std::vector<io::Scalar> values;
    for (const auto& [tag, value] : ensemble_scores) values.push_back({tag, static_cast<float>(value)});
    ensemble_->scalars(epochs, t, values);
    for (const auto& r : runs_out_) {
      bool any = false;
      for (int s : r->members) any = any || diverged_epoch[s] <= 0;
      r->events.session_end(epochs, t, any);
    }
    flush_all();
  });
}

}  // namespace tn
