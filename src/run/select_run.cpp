// The selection split, the ensemble a command uses and its records.
#include "run/select_run.h"
#include "run/stored_predict.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tn {
namespace {

// The split's samples as the run file stores them, or nullopt when it keeps only their rows.
std::optional<Inputs> stored_split(const StoredSwarm& run, const std::string& name) {
  const auto at = std::find_if(run.file.splits.begin(), run.file.splits.end(),
                               [&](const DataSplit& s) { return s.name == name; });
  if (at == run.file.splits.end() || at->X.data.empty() || at->y.data.empty() || at->rows.empty()) return std::nullopt;
  Inputs in;
  in.split = name;
  in.n = static_cast<int>(at->rows.size());
  in.X = at->X.data;
  in.y = at->y.data;
  int train_n = in.n;
  for (const DataSplit& s : run.file.splits)
    if (s.name == "train") train_n = std::max(1, static_cast<int>(s.rows.size()));
  in.batch = std::min(run.cfg.train.batch_size, train_n);
  in.source = name + " split (stored in " + run.path + ")";
  return in;
}

}  // namespace

std::string selection_split_name(const RunFile& file) {
  for (const DataSplit& s : file.splits)
    if (s.name == "val") return s.rows.empty() ? "train" : "val";
  // Files without /data/splits: the config says whether there is a validation split.
  return file.val_loss.size() > 0 ? "val" : "train";
}

SelectionSplit predict_selection_split(const StoredSwarm& run, Combine how, int threads, const Inputs* reuse_in,
                                       const SwarmPredictions* reuse) {
  SelectionSplit sel;
  const std::string name = selection_split_name(run.file);
  if (reuse_in && reuse && reuse_in->split == name) {
    sel.in = *reuse_in;
    sel.preds = *reuse;
  } else {
    std::optional<Inputs> stored = stored_split(run, name);
    if (stored) sel.in = std::move(*stored);
    else sel.in = own_split(load_swarm_with_own_data(run.path), name);  // too large to be stored: rebuilt
    sel.preds = run_swarm(run, sel.in, threads);
  }
  sel.eval = evaluate(sel.preds, run.cfg.loss.type, sel.in.y, how);
  return sel;
}

SelectSpec config_selection(const EnsembleConfig& e) {
  SelectSpec s;
  s.method = e.select == "top" ? SelectMethod::Top : e.select == "greedy" ? SelectMethod::Greedy : SelectMethod::All;
  s.k = e.k;
  s.metric = e.metric;
  return s;
}

SelectionRecord selection_record(const Selection& s, const std::string& split, int first_member) {
  SelectionRecord r;
  r.method = to_string(s.method);
  r.k = s.k;
  r.metric = s.metric;
  r.split = split;
  r.value = s.value;
  double total = 0;
  for (int c : s.counts) total += c;
  for (std::size_t i = 0; i < s.members.size(); ++i) {
    r.member.push_back(first_member + s.members[i]);
    r.weight.push_back(s.counts[i] / total);
  }
  return r;
}

std::vector<double> selection_weights(const SelectionRecord& r, int first_member, int S) {
  if (!r.present()) return {};
  std::vector<double> w(static_cast<std::size_t>(S), 0.0);
  for (std::size_t i = 0; i < r.member.size(); ++i) {
    const int s = r.member[i] - first_member;
    if (s < 0 || s >= S || !(r.weight[i] >= 0))
      throw UsageError("the ensemble selection names member " + std::to_string(r.member[i]) + " with weight " +
                       fmt::format("{}", r.weight[i]) + ", but the run has members " + std::to_string(first_member) +
                       ".." + std::to_string(first_member + S - 1) + "; choose again with --select");
    w[static_cast<std::size_t>(s)] = r.weight[i];
  }
  return w;
}

SelectionRecord command_selection(const StoredSwarm& run, const std::optional<SelectSpec>& spec,
                                  const SelectionSplit* sel, Combine how) {
  if (!spec) return run.file.ensemble;
  if (one_member_per_group(run))
    throw UsageError("--select: this run has one member per group (data.per_member group_by), each for its own "
                     "group, so there is no ensemble to choose members for");
  if (spec->method == SelectMethod::All) return {};
  if (!sel) throw std::logic_error("command_selection: no selection split");
  try {
    const Selection s = select_members(sel->preds, sel->eval, run.cfg.loss.type, sel->in.y, how, *spec);
    if (s.members.empty())
      throw UsageError("--select: every member has non-finite predictions on the " + sel->in.split +
                       " split (diverged), so none can be chosen");
    return selection_record(s, sel->in.split, run.first_member);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--select-by: ") + e.what());
  }
}

std::string describe_selection(const SelectionRecord& r) {
  if (!r.present()) return "every member";
  std::vector<std::size_t> order(r.member.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return r.weight[a] > r.weight[b]; });
  std::string members;
  for (std::size_t i = 0; i < order.size() && i < 8; ++i)
    members += fmt::format("{}#{} {:.3g}", i ? ", " : "", r.member[order[i]], r.weight[order[i]]);
  if (order.size() > 8) members += fmt::format(", ... ({} members)", order.size());
  const std::string how = r.method == "greedy" ? fmt::format("greedy ({} rounds)", r.k)
                          : r.method == "top"  ? fmt::format("top {}", r.k)
                                               : r.method;
  return fmt::format("{} by {} {} {:.4g}: {}", how, r.split, r.metric, r.value, members);
}

}  // namespace tn
