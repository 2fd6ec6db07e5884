// Per-member architectures: grouping members by architecture and training the groups as
// sub-swarms scheduled together (train/architectures.h).
#include "train/architectures.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <utility>

#include <spdlog/spdlog.h>

#include "data/member_sets.h"
#include "model/build.h"
#include "train/architecture_progress.h"
#include "train/chunks.h"
#include "train/host_memory_estimate.h"
#include "train/member_state.h"
#include "train/memory_plan.h"
#include "train/search_steps.h"
#include "train/survivors.h"

namespace tn {
namespace {

// The whole swarm's result, or state, from its groups' (parts[g] is group g's sub-swarm, its
// histories [M, parts[g].epochs]): histories [S, the most epochs] (NaN past a group's), per-member
// arrays, predictions, and one TrainOutput::architectures entry per group.
TrainOutput merge_groups(const Config& cfg, const std::vector<ArchitectureGroup>& groups,
                         const std::vector<TrainOutput>& parts) {
  TrainOutput out;
  const int S = cfg.swarm.size;
  int E = 0;
  for (const TrainOutput& p : parts) E = std::max(E, p.epochs);
  out.epochs = E;
  out.shape = parts.front().shape;
  for (const TrainOutput& p : parts) out.steps_per_epoch = std::max(out.steps_per_epoch, p.steps_per_epoch);
  std::vector<const TrainOutput*> of;
  for (const TrainOutput& p : parts) of.push_back(&p);
  train_detail::size_member_state(out, S, E, of);
  out.pred_split = parts.front().pred_split;
  out.pred_n = parts.front().pred_n;
  const std::size_t per = static_cast<std::size_t>(out.pred_n) * out.shape.outputs();
  if (per > 0) out.pred_members.assign(static_cast<std::size_t>(S) * per, 0.0f);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const TrainOutput& p = parts[g];
    const std::vector<int>& m = groups[g].members;
    train_detail::scatter_members(out, p, m);
    out.interrupted = out.interrupted || p.interrupted;
    out.architectures.push_back({groups[g].name, m, p.shape, p.layout, p.init_params, p.params, p.opt1, p.opt2,
                                 p.best_params, p.epochs, p.partial});
  }
  return out;
}

// Group g's part of the whole swarm's state `whole` (merge_groups' form): what its sub-swarm
// resumes from.
TrainOutput group_state(const TrainOutput& whole, std::size_t g) {
  const ArchitectureOutput& a = whole.architectures[g];
  TrainOutput t = train_detail::gather_members(whole, a.members, a.epochs);
  t.shape = a.shape;
  t.layout = a.layout;
  t.init_params = a.init_params;
  t.params = a.params;
  t.opt1 = a.opt1;
  t.opt2 = a.opt2;
  t.best_params = a.best_params;
  t.partial = a.partial;
  return t;
}

// Rough cost of training a group: members × parameters per member (the steps are the same
// for every group), to schedule the most costly first.
double group_cost(const ModelShape& shape, std::size_t members) {
  const ParamLayout one(shape, 1);
  return static_cast<double>(one.total) * static_cast<double>(members);
}

}  // namespace

std::vector<ArchitectureGroup> architecture_groups(const Config& cfg) {
  std::vector<ArchitectureGroup> groups;
  std::map<std::string, std::size_t> index;
  for (int s = 0; s < cfg.swarm.size; ++s) {
    ModelConfig m = member_model(cfg, static_cast<long long>(cfg.swarm.first_member) + s);
    const std::string name = architecture_text(m);
    auto [it, fresh] = index.emplace(name, groups.size());
    if (fresh) groups.push_back({name, std::move(m), {}});
    groups[it->second].members.push_back(s);
  }
  return groups;
}

Config architecture_config(const Config& cfg, const ArchitectureGroup& g) {
  Config sub = sub_swarm(cfg, g.members);
  sub.model = g.model;
  // Halving's cuts rank the whole swarm (train_architectures); a sub-swarm only keeps its
  // stopped members stopped (and packs the others), with no rungs of its own.
  sub.search.rungs.clear();
  std::vector<MemberValues>& mv = sub.member_values;
  mv.erase(std::remove_if(mv.begin(), mv.end(), [](const MemberValues& v) { return is_architecture_key(v.key); }),
           mv.end());
  return sub;
}

namespace {
MemberSets group_sets(const Config& cfg, const PreparedData& data, const MemberSets& sets, const ArchitectureGroup& g) {
  return select_member_sets(sets, g.members, cfg.swarm.first_member, cfg.seed, static_cast<std::uint32_t>(data.train.n));
}
}  // namespace

ChunkPlan plan_architectures(const Config& cfg, const PreparedData& data, const MemberSets& sets, const Backend& be,
                             bool with_run_file) {
  std::string note;
  int chunks = 1;  // the most any group is split into
  // Host memory: every architecture's state is held until the end (and copied for
  // checkpoints), and several train at once, so the whole run is the sum of the groups'.
  std::int64_t total = 0, loaded = 0;
  const std::vector<ArchitectureGroup> groups = architecture_groups(cfg);
  for (const ArchitectureGroup& g : groups) {
    const Config sub = architecture_config(cfg, g);
    const MemberSets sub_sets = group_sets(cfg, data, sets, g);
    try {
      const ChunkPlan p = train_detail::plan_swarm(sub, data, sub_sets, be, with_run_file);
      chunks = std::max(chunks, p.chunks);
      if (!p.note.empty()) note += (note.empty() ? "" : "; ") + g.name + ": " + p.note;
    } catch (const ConfigError& e) {
      throw ConfigError("the members of architecture " + g.name + ": " + e.what());
    } catch (const BackendError& e) {
      throw BackendError("the members of architecture " + g.name + ": " + e.what());
    }
    if (be.memory_budget() == 0 && be.host_memory()) {
      const HostMemoryEstimate est = estimate_host_memory(sub, data, sub_sets, be, with_run_file);
      loaded = est.loaded_bytes;  // the data, counted once
      total += est.peak() - est.loaded_bytes;
    }
  }
  const std::uint64_t available = be.memory_budget() == 0 && be.host_memory() ? available_memory() : 0;
  if (available > 0 && static_cast<std::uint64_t>(std::max<std::int64_t>(0, total)) > available)
    throw ConfigError("the " + std::to_string(cfg.swarm.size) + " members of " +
                      std::to_string(groups.size()) + " architectures need an estimated " +
                      format_bytes(total + loaded) + " (" + format_bytes(loaded) + " of data, the rest every "
                      "architecture's parameters, optimizer state and buffers, held together), but " +
                      format_bytes(static_cast<std::int64_t>(available) + loaded) + " are available; reduce "
                      "swarm.size or the widest architectures' units");
  return ChunkPlan{cfg.swarm.size, chunks, 0, note};
}

TrainOutput train_architectures(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                                const ProgressFn& progress, const TrainControl& control) {
  if (control.init) throw std::logic_error("train_architectures: a warm start of several architectures is init_members");
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<ArchitectureGroup> groups = architecture_groups(cfg);
  const int G = static_cast<int>(groups.size());
  if (control.resume && control.resume->architectures.size() != groups.size())
    throw std::logic_error("train_architectures: the state to resume from has other architectures");
  std::vector<Config> cfgs;
  std::vector<ModelShape> shapes;
  std::vector<double> cost;
  for (const ArchitectureGroup& g : groups) {
    cfgs.push_back(architecture_config(cfg, g));
    shapes.push_back(make_model_shape(cfgs.back(), data));
    cost.push_back(group_cost(shapes.back(), g.members.size()));
  }
  std::vector<int> order(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g) order[static_cast<std::size_t>(g)] = g;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost[a] > cost[b]; });

  const double total_cost = std::accumulate(cost.begin(), cost.end(), 0.0);
  std::vector<std::string> names;
  std::vector<std::vector<int>> members_of;
  for (const ArchitectureGroup& g : groups) names.push_back(g.name), members_of.push_back(g.members);
  train_detail::ArchitectureProgress report_progress(cfg, std::move(names), std::move(members_of), cost, sets.max_size(), progress, control.resume, t0);
  const auto report = [&](int g, const EpochStats& st, bool finished = false) { report_progress.report(g, st, finished); };
  if (progress && G > 1)
    spdlog::info("{} architectures train on their own; a progress line's epoch is theirs averaged, weighted by their "
                 "cost", G);

  // The parameters members [first, first + layout.S) of group g start from: those of their
  // global index (a sub-swarm numbers its members from 0), random or a warm start's
  // (control.init_members).
  const auto start_params = [&](int g, int first, const ParamLayout& layout) {
    std::vector<int> members;
    std::vector<float> scales;
    for (int i = first; i < first + layout.S; ++i) {
      members.push_back(cfg.swarm.first_member + groups[static_cast<std::size_t>(g)].members[static_cast<std::size_t>(i)]);
      scales.push_back(static_cast<float>(member_init_scale(cfg, members.back())));
    }
    std::vector<float> p = init_params(shapes[static_cast<std::size_t>(g)], layout, cfg.seed, members, scales);
    if (control.init_members) control.init_members(members, layout, p);
    return p;
  };
  // Checkpoints hold every group's latest state, each at its own epoch: a group not started
  // yet is at epoch 0 (its initial parameters, zero optimizer state).
  const SearchConfig& sc = cfg.search;
  const bool halving = sc.type == SearchConfig::Type::Halving;
  const bool keep_states = static_cast<bool>(control.checkpoint) || halving;
  std::vector<TrainOutput> latest(static_cast<std::size_t>(G));
  for (int g = 0; g < G && keep_states; ++g) {
    TrainOutput& t = latest[static_cast<std::size_t>(g)];
    if (control.resume) {
      t = group_state(*control.resume, static_cast<std::size_t>(g));
      continue;
    }
    const int M = static_cast<int>(groups[static_cast<std::size_t>(g)].members.size());
    t.shape = shapes[static_cast<std::size_t>(g)];
    t.layout = ParamLayout(t.shape, M);
    t.init_params = start_params(g, 0, t.layout);
    t.params = t.init_params;
    t.opt1.assign(static_cast<std::size_t>(t.layout.total), 0.0f);
    t.opt2 = t.opt1;
    train_detail::init_member_state(cfg, M, t);
  }

  std::vector<TrainOutput> parts(static_cast<std::size_t>(G));
  std::vector<std::string> kernels(static_cast<std::size_t>(G));
  std::mutex state_mutex;
  int done = 0;
  long written = 0;  // Σ over architectures of their epochs at the last periodic checkpoint
  for (const TrainOutput& l : latest) written += l.epochs;
  // Halving: the training between two rungs is a segment, every group trained to epoch `until`
  // (0: to the end) from `resume_from` (the state after the last cut), then cut as one swarm.
  int until = 0;
  const TrainOutput* resume_from = control.resume;
  std::vector<int> search_epochs, search_rung;  // the whole swarm's halving record so far
  if (halving) {
    search_rung.assign(static_cast<std::size_t>(cfg.swarm.size), 0);
    if (control.resume && !control.resume->search_rung.empty()) {
      search_epochs = control.resume->search_epochs;
      search_rung = control.resume->search_rung;
    }
  }
  // The whole swarm from its groups' results or states, with the halving record.
  const auto whole = [&](const std::vector<TrainOutput>& p) {
    TrainOutput w = merge_groups(cfg, groups, p);
    w.search_epochs = search_epochs;
    w.search_rung = search_rung;
    return w;
  };
  std::atomic<bool> user_stopped{false};
  const auto train_group = [&](int g, Backend& gbe) {
    const ArchitectureGroup& group = groups[static_cast<std::size_t>(g)];
    const Config& sub = cfgs[static_cast<std::size_t>(g)];
    const auto start = std::chrono::steady_clock::now();
    const MemberSets sub_sets = group_sets(cfg, data, sets, group);
    TrainControl c;
    TrainOutput from;
    if (resume_from) {
      from = group_state(*resume_from, static_cast<std::size_t>(g));
      if (until > 0 && from.epochs >= until && !from.partial.present()) {  // already at the rung
        std::lock_guard<std::mutex> lock(state_mutex);
        latest[static_cast<std::size_t>(g)] = from;
        parts[static_cast<std::size_t>(g)] = std::move(from);
        return;
      }
      c.resume = &from;
    } else {
      c.init = [&, g](int first, const ParamLayout& layout, std::vector<float>& p) { p = start_params(g, first, layout); };
    }
    const ChunkPlan plan = train_detail::plan_swarm(sub, data, sub_sets, gbe, false);
    // A segment ends at epoch `until`: the stop is asked for right after that epoch is reported.
    auto reached = std::make_shared<std::atomic<bool>>(false);
    c.member_epochs = control.member_epochs && control.member_progress;
    const ProgressFn progress_to = [&, reached, g, u = until](const EpochStats& st) {
      if (u > 0 && st.epoch >= u) *reached = true;
      if (st.members.empty()) return report(g, st);
      EpochStats whole_st = st;  // the sub-swarm numbers its members from sub.swarm.first_member
      for (MemberEpoch& m : whole_st.members)
        m.member = cfg.swarm.first_member + group.members[static_cast<std::size_t>(m.member - sub.swarm.first_member)];
      control.member_progress(whole_st);
      whole_st.members.clear();
      report(g, whole_st);
    };
    if (plan.chunks <= 1) {  // chunks train one after another, without checkpoints or stops
      c.stop = [&, reached] {
        if (control.stop && control.stop()) return user_stopped = true, true;
        return reached->load();
      };
      if (keep_states) {
        // Its state at the end too (every group's is in the last checkpoint); a segment's
        // chunks of epochs end at `until`.
        const int every = control.checkpoint_every > 0 ? control.checkpoint_every : cfg.train.epochs;
        c.checkpoint_every = until > 0 ? std::gcd(control.checkpoint_every > 0 ? every : until, until) : every;
        c.checkpoint = [&, g, u = until](const TrainOutput& t) {
          std::lock_guard<std::mutex> lock(state_mutex);
          latest[static_cast<std::size_t>(g)] = t;
          // Stopped at the rung: a state like any other, not an interruption.
          if (u > 0 && !user_stopped) latest[static_cast<std::size_t>(g)].interrupted = false;
          if (control.checkpoint_every <= 0 || t.interrupted) return;
          // One checkpoint each time the architectures have trained checkpoint_every epochs
          // each on average (not one per architecture).
          long trained = 0;
          for (const TrainOutput& l : latest) trained += l.epochs;
          if (trained < written + static_cast<long>(control.checkpoint_every) * G) return;
          written = trained;
          if (control.checkpoint) control.checkpoint(whole(latest));
        };
      }
    } else if (until > 0) {
      throw BackendError("search: halving over architectures stops every architecture at each rung, but " +
                         group.name + " is trained in " + std::to_string(plan.chunks) +
                         " chunks on this device; lower swarm.size or train on the CPU (device: cpu)");
    }
    TrainOutput part = train_detail::train_in_chunks(sub, data, sub_sets, gbe, progress_to, plan.chunk, c);
    if (until > 0 && !user_stopped) part.interrupted = false;  // stopped at the rung, not by the user
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard<std::mutex> lock(state_mutex);
    ++done;
    if (until > 0 && !part.interrupted)
      spdlog::debug("architecture {}/{} ({}) reached epoch {}", done, G, group.name, until);
    else if (part.interrupted)
      spdlog::info("architecture {}/{} stopped after epoch {} ({}): {} members, {:.2f} s", done, G, part.epochs,
                   group.name, group.members.size(), seconds);
    else
      spdlog::info("architecture {}/{} done ({}): {} members in {:.2f} s", done, G, group.name, group.members.size(),
                   seconds);
    kernels[static_cast<std::size_t>(g)] = part.kernel;
    const bool finished = until == 0 && !part.interrupted;
    parts[static_cast<std::size_t>(g)] = std::move(part);
    if (finished) report(g, EpochStats{}, true);
  };

  const int W = be.workers();
  // An architecture that costs more than a thread's fair share trains alone on every thread
  // first (one thread would make the run wait for it); the others share the threads.
  std::vector<int> heavy, light;
  for (int g : order) (cost[static_cast<std::size_t>(g)] * W > total_cost ? heavy : light).push_back(g);
  const bool pool = be.host_memory() && W > 1 && static_cast<int>(light.size()) >= W;
  if (!pool) {
    heavy = order;
    light.clear();
  }
  const auto train_all = [&] {
    done = 0;
    for (int g : heavy) train_group(g, be);
    if (pool) {
      // Each thread trains whole groups on a one-thread CPU backend (results do not depend on
      // the thread count), taking the next most costly group when it is done.
      train_detail::on_threads(W, static_cast<int>(light.size()), [&](int i, Backend& one) { train_group(light[static_cast<std::size_t>(i)], one); });
    }
  };
  // Halving: each rung is a segment all architectures train to, then the whole swarm's cut.
  TrainOutput state;  // the whole swarm after the last cut
  for (const int rung : halving ? sc.rungs : std::vector<int>{}) {
    if (std::count(search_epochs.begin(), search_epochs.end(), rung)) continue;  // resumed after it
    until = rung;
    train_all();
    if (user_stopped) break;
    state = whole(latest);
    if (state.epochs < rung) break;  // every member stopped before the rung: nothing left to cut
    if (training_members(state, cfg.swarm.size).empty()) break;  // none left training
    train_detail::halving_round(cfg, state, rung);
    search_epochs = state.search_epochs;
    search_rung = state.search_rung;
    // Every group continues from the cut swarm (its stopped members stay stopped).
    for (std::size_t g = 0; g < groups.size(); ++g) latest[g] = group_state(state, g);
    resume_from = &state;
  }
  until = 0;
  if (!user_stopped) train_all();
  TrainOutput out = whole(parts);
  out.interrupted = out.interrupted || user_stopped;
  if (control.checkpoint && (out.interrupted || control.checkpoint_every > 0)) {
    // The state of every group where it stopped: the checkpoint an interrupted run resumes from.
    TrainOutput st = whole(latest);
    st.interrupted = out.interrupted;
    control.checkpoint(st);
  }
  out.train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.kernel = std::to_string(G) + " architectures, " +
               (pool ? (heavy.empty() ? "" : std::to_string(heavy.size()) + " on every thread, then ") + "trained " +
                           std::to_string(W) + " at a time, one per thread"
                     : std::string("trained one after another")) +
               "; the most costly: " + kernels[static_cast<std::size_t>(order.front())];
  return out;
}

}  // namespace tn
