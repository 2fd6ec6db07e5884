// The export service (export_run.h): load, choose members, build the file, write it atomically.
#include "export/export_run.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "export/onnx_model.h"
#include "io/atomic_file.h"

namespace tn {
namespace {

using U = std::uint64_t;

// The architecture in the words of scripts/to_torch.py.
std::string model_json(const StoredSwarm& run) {
  nlohmann::json m;
  const ModelShape& shape = run.shape;
  m["loss"] = to_string(run.cfg.loss.type);
  m["output"] = run.cfg.loss.type == LossType::CrossEntropy ? "softmax" : run.cfg.loss.type == LossType::Bce ? "sigmoid" : "identity";
  m["inputs"] = shape.inputs();
  m["seq_len"] = run.file.data.seq_len;  // windows, for recurrent and dense models alike
  m["step_features"] = run.file.data.step_features;
  m["recurrent"] = nlohmann::json::array();
  for (const RecurrentLayer& l : shape.recurrent)
    m["recurrent"].push_back({{"cell", l.cell == CellType::Lstm ? "lstm" : "gru"}, {"in", l.in}, {"units", l.units}});
  m["dense"] = nlohmann::json::array();
  for (const DenseLayer& l : shape.layers)
    m["dense"].push_back({{"in", l.in}, {"out", l.out}, {"activation", to_string(l.act)}, {"slope", l.slope}});
  return m.dump();
}

// `a` (a normalization array of the run file) as an .npy array: one member's row of per-group
// statistics, else as stored.
void add_stats(std::vector<NpyArray>& out, const std::string& name, const Array& a, std::size_t width, int row,
               bool one_member) {
  if (a.data.empty()) return;
  if (one_member && a.data.size() > width) out.push_back({name, {width}, stats_row(a.data, width, row)});
  else out.push_back({name, a.shape, a.data});
}

}  // namespace

ExportFormat parse_export_format(const std::string& name) {
  if (name == "onnx") return ExportFormat::Onnx;
  if (name == "npz") return ExportFormat::Npz;
  throw UsageError("--format: unknown format '" + name + "'; allowed: onnx, npz");
}

namespace {

// The parameters of `members` (local) of a swarm of one architecture, under `root`.
void add_params(std::vector<NpyArray>& out, const StoredSwarm& run, const std::vector<int>& members, bool one_member,
                const std::string& root) {
  const ModelShape& shape = run.shape;
  for (int t = 0; t < shape.tensors(); ++t) {
    std::vector<U> dims;
    if (!one_member) dims.push_back(members.size());
    for (std::int64_t d : shape.tensor_dims(t)) dims.push_back(static_cast<U>(d));
    out.push_back({root + "params/layer_" + std::to_string(shape.layer_of(t)) + "/" + shape.tensor_name(t), dims,
                   stacked_tensor(run, t, members)});
  }
}

}  // namespace

std::vector<NpyArray> npz_arrays(const StoredSwarm& run, const std::vector<int>& members, bool one_member,
                                 const std::vector<double>& weights) {
  std::vector<NpyArray> out;
  const ModelShape& shape = run.shape;
  if (!run.architectures.empty() && one_member) {  // the member's architecture alone, as any one member
    const auto [a, j] = architecture_of(run, members.front());
    StoredSwarm view = architecture_view(run, a);
    view.first_member = run.first_member + members.front() - j;  // so that local j is the member
    return npz_arrays(view, {j}, true);
  }
  if (run.architectures.empty()) add_params(out, run, members, one_member, "");
  // Members of several architectures: architectures/arch_<a>/ with each one's members, model and parameters.
  const std::vector<ArchitectureMembers> split = split_by_architecture(run, members);
  for (std::size_t a = 0; a < split.size(); ++a) {
    if (split[a].members.empty()) continue;
    std::vector<std::int32_t> global;
    for (int s : split[a].members) global.push_back(run.first_member + s);
    const StoredSwarm view = architecture_view(run, a);
    const std::string root = "architectures/arch_" + std::to_string(a) + "/";
    add_params(out, view, split[a].local, false, root);
    out.push_back({root + "members/member", {global.size()}, global});
    out.push_back({root + "model", {}, std::vector<std::string>{model_json(view)}});
  }
  std::vector<std::int32_t> global;
  for (int s : members) global.push_back(run.first_member + s);
  out.push_back({"members/member", {global.size()}, global});
  if (!weights.empty()) out.push_back({"members/weight", {weights.size()}, std::vector<float>(weights.begin(), weights.end())});
  const Normalization& n = run.file.normalization;
  const DataInfo& info = run.file.data;
  const std::size_t F = static_cast<std::size_t>(info.seq_len > 0 ? info.step_features : shape.inputs());
  add_stats(out, "data/normalization/mean", n.mean, F, members.front(), one_member);
  add_stats(out, "data/normalization/std", n.std, F, members.front(), one_member);
  // Target statistics: [G] per series for sequences, [T] per target column otherwise, or [G, T] per
  // member group (normalize_per_member); one member: its row.
  const std::size_t T = info.seq_len > 0 ? 1 : static_cast<std::size_t>(shape.outputs());
  add_stats(out, "data/normalization/target_mean", n.target_mean, T, members.front(), one_member);
  add_stats(out, "data/normalization/target_std", n.target_std, T, members.front(), one_member);
  // Per-member target statistics: the exported members' rows [M, T] (one member: its [T]).
  for (const auto& [name, a] : {std::pair{"member_target_mean", &n.member_target_mean}, {"member_target_std", &n.member_target_std}}) {
    if (a->data.empty()) continue;
    const std::vector<std::uint64_t> dims = one_member ? std::vector<std::uint64_t>{T} : std::vector<std::uint64_t>{members.size(), T};
    out.push_back({std::string("data/normalization/") + name, dims, stats_rows(a->data, T, members)});
  }
  if (!n.method.empty()) out.push_back({"data/normalization/method", {}, std::vector<std::string>{n.method}});
  if (info.seq_len == 0 && (!n.target_mean.data.empty() || !n.member_target_mean.data.empty()))
    out.push_back({"data/normalization/target_method", {}, std::vector<std::string>{to_string(run.cfg.data.normalize_target)}});
  if (!info.feature_names.empty()) out.push_back({"data/feature_names", {info.feature_names.size()}, info.feature_names});
  if (run.classification) out.push_back({"data/class_names", {run.class_names.size()}, run.class_names});
  out.push_back({"config", {}, std::vector<std::string>{run.file.config_yaml}});
  if (run.architectures.empty()) out.push_back({"model", {}, std::vector<std::string>{model_json(run)}});
  return out;
}

namespace {

// The ensemble's members among the finite ones (`finite`, local) and their weights: those of
// the selection, renormalized over the finite ones; every finite member alike without one.
std::vector<int> selected_members(const StoredSwarm& run, const SelectionRecord& sel, const std::vector<int>& finite,
                                  std::vector<double>& weights) {
  if (!sel.present()) return finite;
  selection_weights(sel, run.first_member, run.S);  // checks the members
  std::vector<int> members;
  double total = 0;
  for (std::size_t i = 0; i < sel.member.size(); ++i) {
    const int s = sel.member[i] - run.first_member;
    if (std::find(finite.begin(), finite.end(), s) == finite.end()) continue;
    members.push_back(s);
    weights.push_back(sel.weight[i]);
    total += sel.weight[i];
  }
  if (members.empty())
    throw UsageError("every member of the ensemble selection of '" + run.path + "' has non-finite parameters; choose "
                     "again with --select");
  for (double& w : weights) w /= total;
  return members;
}

}  // namespace

ExportedModel build_export(const std::string& run_path, ExportFormat format, const MemberChoice& choice,
                           const std::optional<SelectSpec>& select, int threads) {
  if (select && choice.member)
    throw UsageError("--select chooses the members of the ensemble; --member " + std::to_string(*choice.member) +
                     " exports one member alone: use one or the other");
  const StoredSwarm run = load_swarm_model(run_path);
  std::vector<int> members = choose_members(run, choice);
  ExportedModel m;
  m.ensemble = !choice.member;
  std::vector<double> weights;
  if (m.ensemble) {
    std::optional<SelectionSplit> sel;
    if (select && select->method != SelectMethod::All) sel = predict_selection_split(run, Combine::MeanProb, threads);
    m.selection = command_selection(run, select, sel ? &*sel : nullptr, Combine::MeanProb);
    members = selected_members(run, m.selection, members, weights);
  }
  for (int s : members) m.members.push_back(run.first_member + s);
  try {
    if (format == ExportFormat::Npz) m.bytes = npz_bytes(npz_arrays(run, members, !m.ensemble, weights));
    else m.bytes = m.ensemble ? onnx_ensemble_model(run, members, weights) : onnx_member_model(run, members.front());
  } catch (const std::length_error& e) {
    throw UsageError(std::string(e.what()) + "; export fewer members (--member K) or use --format npz");
  }
  return m;
}

void write_export(const std::string& path, ExportFormat format, const ExportedModel& model, bool replace) {
  io::write_file_atomically(path, format == ExportFormat::Onnx ? "ONNX model" : "NumPy archive", model.bytes,
                            replace ? io::Replace::Yes : io::Replace::No);
}

}  // namespace tn
