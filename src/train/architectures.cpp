// Per-member architectures: grouping members by architecture and training the groups as
// sub-swarms scheduled together (train/architectures.h).
#include "train/architectures.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "data/member_sets.h"
#include "model/build.h"

namespace tn {
namespace {

// Rows `members` of `whole` [S, E] take part's rows [M, part_epochs] (NaN past them).
void put_rows(std::vector<float>& whole, int E, const std::vector<float>& part, int part_epochs,
              const std::vector<int>& members) {
  if (part.empty()) return;
  for (std::size_t i = 0; i < members.size(); ++i)
    for (int e = 0; e < E && e < part_epochs; ++e)
      whole[static_cast<std::size_t>(members[i]) * E + e] = part[i * static_cast<std::size_t>(part_epochs) + e];
}

template <class T>
void put(std::vector<T>& whole, const std::vector<T>& part, const std::vector<int>& members) {
  for (std::size_t i = 0; i < members.size() && i < part.size(); ++i) whole[static_cast<std::size_t>(members[i])] = part[i];
}

// The whole swarm's result from its groups' (parts[g] is group g's sub-swarm).
TrainOutput merge_groups(const Config& cfg, const std::vector<ArchitectureGroup>& groups, std::vector<TrainOutput>& parts) {
  TrainOutput out;
  const int S = cfg.swarm.size;
  int E = 0;
  for (const TrainOutput& p : parts) E = std::max(E, p.epochs);
  out.epochs = E;
  out.shape = parts.front().shape;
  out.steps_per_epoch = parts.front().steps_per_epoch;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto history = [&](std::vector<float> TrainOutput::*h) {
    if (std::all_of(parts.begin(), parts.end(), [&](const TrainOutput& p) { return (p.*h).empty(); })) return;
    out.*h = std::vector<float>(static_cast<std::size_t>(S) * E, nan);
    for (std::size_t g = 0; g < groups.size(); ++g) put_rows(out.*h, E, parts[g].*h, parts[g].epochs, groups[g].members);
  };
  for (auto h : {&TrainOutput::train_loss, &TrainOutput::val_loss, &TrainOutput::train_acc, &TrainOutput::val_acc})
    history(h);
  out.diverged_epoch.assign(static_cast<std::size_t>(S), -1);
  const bool stops = !parts.front().stopped_epoch.empty();
  if (stops) {
    out.stopped_epoch.assign(static_cast<std::size_t>(S), -1);
    out.best_epoch.assign(static_cast<std::size_t>(S), 0);
    out.best_value.assign(static_cast<std::size_t>(S), 0.0);
  }
  out.pred_split = parts.front().pred_split;
  out.pred_n = parts.front().pred_n;
  const std::size_t per = static_cast<std::size_t>(out.pred_n) * out.shape.outputs();
  out.pred_members.assign(static_cast<std::size_t>(S) * per, 0.0f);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    TrainOutput& p = parts[g];
    const std::vector<int>& m = groups[g].members;
    put(out.diverged_epoch, p.diverged_epoch, m);
    if (stops) {
      put(out.stopped_epoch, p.stopped_epoch, m);
      put(out.best_epoch, p.best_epoch, m);
      put(out.best_value, p.best_value, m);
    }
    for (std::size_t i = 0; i < m.size() && !p.pred_members.empty(); ++i)
      std::copy_n(p.pred_members.begin() + static_cast<std::ptrdiff_t>(i * per), per,
                  out.pred_members.begin() + static_cast<std::ptrdiff_t>(m[i] * per));
    out.interrupted = out.interrupted || p.interrupted;
    ArchitectureOutput a;
    a.name = groups[g].name;
    a.members = m;
    a.shape = p.shape;
    a.layout = p.layout;
    a.init_params = std::move(p.init_params);
    a.params = std::move(p.params);
    a.opt1 = std::move(p.opt1);
    a.opt2 = std::move(p.opt2);
    a.best_params = std::move(p.best_params);
    out.architectures.push_back(std::move(a));
  }
  return out;
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
  Config sub = cfg;
  sub.model = g.model;
  sub.swarm.size = static_cast<int>(g.members.size());
  sub.swarm.first_member = 0;
  sub.grid.clear();
  sub.member_values.clear();
  for (const MemberValues& mv : cfg.member_values) {
    if (is_architecture_key(mv.key)) continue;
    MemberValues v;
    v.key = mv.key;
    for (int s : g.members) v.values.push_back(mv.at(static_cast<long long>(cfg.swarm.first_member) + s));
    sub.member_values.push_back(v);
  }
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
  for (const ArchitectureGroup& g : architecture_groups(cfg)) {
    try {
      const ChunkPlan p = plan_training(architecture_config(cfg, g), data, group_sets(cfg, data, sets, g), be, with_run_file);
      if (!p.note.empty()) note += (note.empty() ? "" : "; ") + g.name + ": " + p.note;
    } catch (const ConfigError& e) {
      throw ConfigError("the members of architecture " + g.name + ": " + e.what());
    } catch (const BackendError& e) {
      throw BackendError("the members of architecture " + g.name + ": " + e.what());
    }
  }
  return ChunkPlan{cfg.swarm.size, 1, 0, note};
}

TrainOutput train_architectures(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                                const ProgressFn& progress, const TrainControl& control) {
  (void)progress;  // groups train at different times: each reports when it is done instead
  if (control.resume || control.checkpoint_every > 0 || control.init)
    throw std::logic_error("train_architectures: resuming, checkpoints and warm starts are not supported");
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<ArchitectureGroup> groups = architecture_groups(cfg);
  const int G = static_cast<int>(groups.size());
  std::vector<Config> cfgs;
  std::vector<double> cost;
  for (const ArchitectureGroup& g : groups) {
    cfgs.push_back(architecture_config(cfg, g));
    cost.push_back(group_cost(make_model_shape(cfgs.back(), data), g.members.size()));
  }
  std::vector<int> order(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g) order[static_cast<std::size_t>(g)] = g;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost[a] > cost[b]; });

  std::vector<TrainOutput> parts(static_cast<std::size_t>(G));
  std::vector<std::string> kernels(static_cast<std::size_t>(G));
  std::mutex log_mutex;
  int done = 0;
  const auto train_group = [&](int g, Backend& gbe) {
    const ArchitectureGroup& group = groups[static_cast<std::size_t>(g)];
    const Config& sub = cfgs[static_cast<std::size_t>(g)];
    const auto start = std::chrono::steady_clock::now();
    const MemberSets sub_sets = group_sets(cfg, data, sets, group);
    std::vector<int> global;
    std::vector<float> scales;
    for (int s : group.members) {
      global.push_back(cfg.swarm.first_member + s);
      scales.push_back(static_cast<float>(member_init_scale(cfg, global.back())));
    }
    TrainControl c;
    // Member k's initial parameters are those of global member k (train_pass numbers them
    // from 0); called once per chunk with the chunk's first (local) member.
    c.init = [&](int first, const ParamLayout& layout, std::vector<float>& p) {
      const std::vector<int> members(global.begin() + first, global.begin() + first + layout.S);
      const std::vector<float> k(scales.begin() + first, scales.begin() + first + layout.S);
      p = init_params(make_model_shape(sub, data), layout, cfg.seed, members, k);
    };
    const ChunkPlan plan = plan_training(sub, data, sub_sets, gbe);
    if (plan.chunks <= 1) c.stop = control.stop;  // chunks train one after another, unstoppable
    parts[static_cast<std::size_t>(g)] = train_swarm_in_chunks(sub, data, sub_sets, gbe, {}, plan.chunk, c);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard<std::mutex> lock(log_mutex);
    ++done;
    kernels[static_cast<std::size_t>(g)] = parts[static_cast<std::size_t>(g)].kernel;
    spdlog::info("architecture {}/{} done ({}): {} members in {:.2f} s", done, G, group.name, group.members.size(),
                 seconds);
  };

  const int W = be.workers();
  const bool pool = be.host_memory() && W > 1 && G >= W;
  if (pool) {
    // Each thread trains whole groups on a one-thread CPU backend (results do not depend on
    // the thread count), taking the next most costly group when it is done.
    std::atomic<int> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    std::vector<std::thread> threads;
    for (int w = 0; w < W; ++w)
      threads.emplace_back([&] {
        try {
          const std::unique_ptr<Backend> one = make_backend({DeviceKind::Cpu, 1}, nullptr);
          for (int i = next++; i < G; i = next++) {
            {
              std::lock_guard<std::mutex> lock(error_mutex);
              if (error) return;
            }
            train_group(order[static_cast<std::size_t>(i)], *one);
          }
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      });
    for (std::thread& t : threads) t.join();
    if (error) std::rethrow_exception(error);
  } else {
    for (int g : order) train_group(g, be);
  }
  TrainOutput out = merge_groups(cfg, groups, parts);
  out.train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.kernel = std::to_string(G) + " architectures, " +
               (pool ? "trained " + std::to_string(W) + " at a time, one per thread"
                     : std::string("trained one after another")) +
               "; the first: " + kernels.front();
  return out;
}

}  // namespace tn
