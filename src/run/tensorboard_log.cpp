// Live TensorBoard logs of a training run (run/tensorboard_log.h).
#include "run/tensorboard_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>

#include "io/atomic_file.h"
#include "io/tensorboard_events.h"
#include "math/quantile.h"
#include "run/command_files.h"
#include "run/errors.h"
#include "train/architectures.h"

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
    if (e.is_directory() && (n == "swarm" || n == "ensemble" || n.rfind("member-", 0) == 0 || n.rfind("group-", 0) == 0 ||
                             n.rfind("arch-", 0) == 0))
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
  if (per_member_architecture(cfg)) {
    io::HParamInfo h{"architecture", true, {}, 0, 0};
    for (const ArchitectureGroup& g : architecture_groups(cfg)) h.discrete.emplace_back(g.name);
    out.push_back(std::move(h));
  }
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

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// mean, median, q10, q90, min, max of `v` (sorted here), linear between order statistics.
void summary_curves(const std::string& tag, std::vector<double>& v, std::vector<io::Scalar>& out) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  const auto q = [&](double p) { return quantile_of_sorted(v, p); };
  const std::pair<const char*, double> curves[] = {{"mean", mean_of(v)},
                                                   {"median", q(0.5)}, {"q10", q(0.1)}, {"q90", q(0.9)},
                                                   {"min", v.front()}, {"max", v.back()}};
  for (const auto& [name, value] : curves) out.push_back({tag + "/" + name, static_cast<float>(value)});
}

}  // namespace

struct TensorBoardLog::Run {
  io::EventWriter events;
  std::vector<int> members;  // local, increasing
  int last = 0;              // the last epoch written
  Run(const std::string& dir, int keep) : events(dir, keep), last(std::max(keep, 0)) {}
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

TensorBoardLog::TensorBoardLog(const Config& cfg, const TrainOutput* resumed) : cfg_(cfg), runs_(resolved_runs(cfg)) {
  const fs::path dir = cfg.train.tensorboard;
  const int S = cfg.swarm.size, first = cfg.swarm.first_member;
  std::error_code ec;
  if (!resumed)  // a new run: the logs of an earlier one go (--force)
    for (const fs::path& f : our_event_files(dir)) fs::remove(f, ec);
  // Where each member's logs continue: its architecture's own epoch (each trains at its own).
  std::vector<int> kept(static_cast<std::size_t>(S), resumed ? resumed->epochs : -1);
  if (resumed)
    for (const ArchitectureOutput& a : resumed->architectures)
      for (int s : a.members) kept[static_cast<std::size_t>(s)] = a.epochs;
  const auto keep_of = [&](const std::vector<int>& members) {
    int k = resumed ? resumed->epochs : -1;
    for (int s : members) k = std::min(k, kept[static_cast<std::size_t>(s)]);
    return k;
  };
  const double t = now();
  io::EventWriter top(dir.string(), resumed ? resumed->epochs : -1);
  if (top.started_new()) top.experiment(t, hparam_infos(cfg, runs_), metric_infos(cfg));
  ensemble_ = std::make_unique<io::EventWriter>((dir / "ensemble").string(), resumed ? resumed->epochs : -1);
  std::vector<int> all(static_cast<std::size_t>(S));
  for (int s = 0; s < S; ++s) all[static_cast<std::size_t>(s)] = s;
  summaries_.push_back(std::make_unique<Run>((dir / "swarm").string(), keep_of(all)));
  summaries_.back()->members = all;
  std::vector<std::string> arch_of(static_cast<std::size_t>(S));
  if (per_member_architecture(cfg)) {
    const std::vector<ArchitectureGroup> groups = architecture_groups(cfg);
    for (std::size_t a = 0; a < groups.size(); ++a) {
      const std::string name = run_name("arch", static_cast<int>(a), static_cast<int>(groups.size()) - 1);
      summaries_.push_back(std::make_unique<Run>((dir / name).string(), keep_of(groups[a].members)));
      summaries_.back()->members = groups[a].members;
      for (int s : groups[a].members) arch_of[static_cast<std::size_t>(s)] = groups[a].name;
      spdlog::debug("TensorBoard run {}: the {} members of architecture {}", name, groups[a].members.size(), groups[a].name);
    }
    // One line at the default level (a run per architecture made one each: 21 for spirals-widths).
    spdlog::info("TensorBoard: {} runs arch-<i>, one per architecture (-v lists them; each session's hparam "
                 "'architecture' names its own)", groups.size());
  }
  std::vector<int> group_of;  // [S] the run of each local member (members: itself; groups: its group)
  int count = 0;
  if (runs_ == TensorBoardRuns::Members) {
    group_of = all;
    count = S;
  } else if (runs_ == TensorBoardRuns::Groups) {
    group_of = member_groups(cfg, count);
  }
  std::vector<std::vector<int>> members_of(static_cast<std::size_t>(count));
  for (int s = 0; s < static_cast<int>(group_of.size()); ++s) members_of[group_of[s]].push_back(s);
  for (int g = 0; g < count; ++g) {
    const std::string name = runs_ == TensorBoardRuns::Members ? run_name("member", first + g, first + S - 1)
                                                               : run_name("group", g, count - 1);
    runs_out_.push_back(std::make_unique<Run>((dir / name).string(), keep_of(members_of[g])));
    Run& r = *runs_out_.back();
    r.members = members_of[g];
    if (!r.events.started_new()) continue;
    const int m = first + r.members.front();
    std::vector<std::pair<std::string, io::HParamValue>> hp;
    if (runs_ == TensorBoardRuns::Members) hp.emplace_back("member", static_cast<double>(m));
    else hp.emplace_back("members", static_cast<double>(r.members.size()));
    if (!arch_of.front().empty()) hp.emplace_back("architecture", arch_of[static_cast<std::size_t>(r.members.front())]);
    for (const MemberValues& mv : cfg.member_values) hp.emplace_back(mv.key, member_value(mv, m));
    r.events.session_start(t, hp);
  }
  // A run over members whose architectures stand at different epochs continues from the
  // earliest: the later ones' epochs up to their own come from the state's histories (they
  // are not trained again), without a learning rate.
  if (resumed && !resumed->architectures.empty())
    for (int e = 1; e <= resumed->epochs; ++e) {
      for (int s = 0; s < S; ++s) {
        if (e > kept[static_cast<std::size_t>(s)] || e <= keep_of(all)) continue;
        Pending& p = pending_at(e);
        const std::size_t at = static_cast<std::size_t>(s) * static_cast<std::size_t>(resumed->epochs) + e - 1;
        const auto h = [&](const std::vector<float>& v) { return v.empty() ? std::nanf("") : v[at]; };
        const MemberEpoch m{first + s, h(resumed->train_loss), h(resumed->val_loss), h(resumed->train_acc),
                            h(resumed->val_acc), std::nan("")};
        p.of[static_cast<std::size_t>(s)] = m;
        p.known[static_cast<std::size_t>(s)] = 1;
        const int d = resumed->diverged_epoch[static_cast<std::size_t>(s)];
        std::pair<int, int>& counts = p.parts[first + s];
        counts = {std::isfinite(m.loss) ? 1 : 0, d > 0 && d <= e ? 1 : 0};
      }
    }
  if (resumed)  // each architecture's diverged members, for the epochs it has no more
    for (const ArchitectureOutput& a : resumed->architectures)
      part_diverged_[first + a.members.front()] = static_cast<int>(std::count_if(
          a.members.begin(), a.members.end(), [&](int s) { return resumed->diverged_epoch[static_cast<std::size_t>(s)] > 0; }));
  top.flush();
  flush_all();  // the runs are there from the start
}

TensorBoardLog::~TensorBoardLog() = default;  // the writers flush what is pending

TensorBoardLog::Pending& TensorBoardLog::pending_at(int epoch) {
  Pending& p = pending_[epoch];
  const auto S = static_cast<std::size_t>(cfg_.swarm.size);
  if (p.of.empty()) p.of.resize(S), p.known.assign(S, 0);
  return p;
}

void TensorBoardLog::flush_all() {
  ensemble_->flush();
  for (const auto& r : summaries_) r->events.flush();
  for (const auto& r : runs_out_) r->events.flush();
  flushed_ = std::chrono::steady_clock::now();
}

void TensorBoardLog::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
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

// Writes r's epochs after its last one, in order, as long as each is known for all r's
// members (`finishing`: all of them, with the members known).
void TensorBoardLog::write_ready(Run& r, bool finishing) {
  for (auto it = pending_.upper_bound(r.last); it != pending_.end(); ++it) {
    const Pending& p = it->second;
    const bool all = std::all_of(r.members.begin(), r.members.end(), [&](int s) { return p.known[static_cast<std::size_t>(s)] != 0; });
    if (!all && !finishing) return;
    write_epoch(r, it->first, p);
    r.last = it->first;
  }
}

void TensorBoardLog::write_epoch(Run& r, int epoch, const Pending& p) {
  const double t = now();
  const bool summary = std::any_of(summaries_.begin(), summaries_.end(), [&](const auto& x) { return x.get() == &r; });
  std::vector<const MemberEpoch*> of;
  for (int s : r.members)
    if (p.known[static_cast<std::size_t>(s)]) of.push_back(&p.of[static_cast<std::size_t>(s)]);
  if (of.empty()) return;
  std::vector<io::Scalar> values;
  const auto add = [&](const char* tag, std::vector<double>& v) {
    if (summary) return summary_curves(tag, v, values);
    if (!v.empty()) values.push_back({tag, static_cast<float>(mean_of(v))});
  };
  for (const Tagged& tag : kFloatTags) {
    std::vector<double> v;
    for (const MemberEpoch* m : of)
      if (std::isfinite(m->*tag.value)) v.push_back(m->*tag.value);
    add(tag.tag, v);
  }
  std::vector<double> lr;  // none for an epoch with values from a resumed state's histories
  bool lr_known = true;
  for (const MemberEpoch* m : of)
    if (std::isfinite(m->loss)) lr.push_back(m->lr), lr_known = lr_known && std::isfinite(m->lr);
  if (lr_known) add("lr", lr);
  if (summary) {  // the parts of r's members: those of this epoch, the ones ended before as they ended
    const int first = cfg_.swarm.first_member;
    const auto in_r = [&](int part) { return std::binary_search(r.members.begin(), r.members.end(), part - first); };
    int training = 0, diverged = 0;
    for (const auto& [part, counts] : p.parts)
      if (in_r(part)) training += counts.first, diverged += counts.second;
    for (const auto& [part, d] : part_diverged_)
      if (in_r(part) && !p.parts.count(part)) diverged += d;
    values.push_back({"members_training", static_cast<float>(training)});
    values.push_back({"members_diverged", static_cast<float>(diverged)});
  }
  r.events.scalars(epoch, t, values);
}

void TensorBoardLog::epoch(const EpochStats& st) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int first = cfg_.swarm.first_member;
  Pending& p = pending_at(st.epoch);
  for (const MemberEpoch& m : st.members) {
    p.of[static_cast<std::size_t>(m.member - first)] = m;
    p.known[static_cast<std::size_t>(m.member - first)] = 1;
  }
  const int part = st.members.empty() ? first : st.members.front().member;
  p.parts[part] = {st.training, st.diverged};
  part_diverged_[part] = st.diverged;
  write([&] {
    for (const auto& r : summaries_) write_ready(*r, false);
    for (const auto& r : runs_out_) write_ready(*r, false);
  });
  int done = std::numeric_limits<int>::max();  // epochs every run has written are not needed again
  for (const auto* runs : {&summaries_, &runs_out_})
    for (const auto& r : *runs) done = std::min(done, r->last);
  pending_.erase(pending_.begin(), pending_.upper_bound(done));
  if (std::chrono::steady_clock::now() - flushed_ >= std::chrono::seconds(1)) write([&] { flush_all(); });
}

void TensorBoardLog::finished(int epochs, const std::vector<int>& diverged_epoch,
                              const std::vector<std::pair<std::string, double>>& ensemble_scores, bool interrupted) {
  std::lock_guard<std::mutex> lock(mutex_);
  write([&] {  // an interrupted run leaves the epochs not yet complete to the resumed one
    for (const auto* runs : {&summaries_, &runs_out_})
      for (const auto& r : *runs) write_ready(*r, !interrupted);
    if (interrupted) return flush_all();
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
