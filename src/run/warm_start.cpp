// Warm starts: reading, checking and copying a source run's trained parameters.
#include "run/warm_start.h"

#include <algorithm>
#include <filesystem>

#include "data/arrays.h"
#include "io/run_file.h"
#include "run/stored_swarm.h"
#include "run/swarm_file.h"
#include "train/architectures.h"

namespace tn {
namespace {

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::vector<std::uint64_t> u(dims.begin(), dims.end());
  return shape_text(u);
}

std::string quoted(const std::vector<std::string>& names) {
  std::string t;
  for (const std::string& n : names) t += (t.empty() ? "'" : ", '") + n + "'";
  return t;
}

// Every tensor of `shape`, in order, with its name and dimensions, and nothing else.
void check_tensors(const RunFile& f, const ModelShape& shape, const std::string& where) {
  const std::string fix = "; a warm start needs the same layers (types and units) and inputs as the source run";
  if (!f.architectures.empty())
    throw ConfigError(where + ": '" + f.meta.name + "' has members of " + std::to_string(f.architectures.size()) +
                      " architectures; a warm start takes a run whose members share one");
  if (static_cast<int>(f.params.size()) != shape.num_layers())
    throw ConfigError(where + ": '" + f.meta.name + "' has " + std::to_string(f.params.size()) +
                      " layers, this model " + std::to_string(shape.num_layers()) + fix);
  std::vector<std::size_t> next(f.params.size(), 0);
  for (int t = 0; t < shape.tensors(); ++t) {
    const int li = shape.layer_of(t);
    const std::string name = "layer_" + std::to_string(li) + "/" + shape.tensor_name(t);
    const auto& tensors = f.params[li].tensors;
    const std::vector<std::int64_t> want = shape.tensor_dims(t);
    if (next[li] >= tensors.size() || tensors[next[li]].first != shape.tensor_name(t)) {
      std::vector<std::string> has;
      for (const auto& [n, a] : tensors) has.push_back(n);
      throw ConfigError(where + ": tensor " + name + " " + dims_text(want) + " of this model is not in the source run "
                        "(its /params/layer_" + std::to_string(li) + " holds " + quoted(has) + ")" + fix);
    }
    const Array& a = tensors[next[li]++].second;
    const std::vector<std::uint64_t> per(a.shape.begin() + std::min<std::size_t>(1, a.shape.size()), a.shape.end());
    if (per != std::vector<std::uint64_t>(want.begin(), want.end()))
      throw ConfigError(where + ": tensor " + name + " is " + shape_text(per) + " per member in the source run (/params/" +
                        name + " " + shape_text(a.shape) + "), but " + dims_text(want) + " in this model" + fix);
  }
  for (std::size_t li = 0; li < f.params.size(); ++li)
    if (next[li] != f.params[li].tensors.size())
      throw ConfigError(where + ": the source run's /params/layer_" + std::to_string(li) + " has tensors this model's layer " +
                        std::to_string(li) + " does not" + fix);
}

// Names, where both runs have them, must agree: the inputs in the same order, the same classes.
void check_names(const std::vector<std::string>& source, const std::vector<std::string>& here, const char* what,
                 const std::string& where) {
  if (source.empty() || here.empty() || source == here) return;
  throw ConfigError(where + ": the source run's " + what + " are " + quoted(source) + ", this run's " + quoted(here) +
                    "; a member's weights mean those " + what + " in that order, so a warm start needs the same");
}

}  // namespace

namespace {

// Members of several architectures, here or in the source: each member's source parameters,
// checked against the member's own model tensor by tensor.
void load_member_params(WarmStart& w, const Config& cfg, const ModelShape& shape, const PreparedData& data,
                        const RunFile& f, const std::string& source) {
  const InitFromConfig& init = cfg.model.init_from;
  const StoredSwarm src = load_swarm_model(init.path);
  std::vector<ModelShape> mine;  // per local member of this run
  if (per_member_architecture(cfg)) {
    mine.resize(static_cast<std::size_t>(cfg.swarm.size));
    for (const ArchitectureGroup& g : architecture_groups(cfg)) {
      const ModelShape s = make_model_shape(architecture_config(cfg, g), data);
      for (int k : g.members) mine[static_cast<std::size_t>(k)] = s;
    }
  } else {
    mine.assign(static_cast<std::size_t>(cfg.swarm.size), shape);
  }
  w.run_first = cfg.swarm.first_member;
  for (int k = 0; k < cfg.swarm.size; ++k) {
    const int j = init.source_member(cfg.swarm.first_member + k) - src.first_member;  // checked by the caller
    if (j < static_cast<int>(f.diverged_epoch.size()) && f.diverged_epoch[static_cast<std::size_t>(j)] > 0)
      throw ConfigError(source + ": member " + std::to_string(cfg.swarm.first_member + k) + " would start from member " +
                        std::to_string(src.first_member + j) + ", which diverged; choose another source member");
    const ModelShape* theirs = &src.shape;
    const std::vector<float>* params = &src.params;
    int row = j, rows = src.S;
    for (const StoredArchitecture& a : src.architectures) {
      const auto at = std::find(a.members.begin(), a.members.end(), j);
      if (at == a.members.end()) continue;
      theirs = &a.shape, params = &a.params, row = static_cast<int>(at - a.members.begin()), rows = static_cast<int>(a.members.size());
    }
    const ModelShape& own = mine[static_cast<std::size_t>(k)];
    bool same = own.tensors() == theirs->tensors();
    for (int t = 0; same && t < own.tensors(); ++t)
      same = own.tensor_dims(t) == theirs->tensor_dims(t) && own.tensor_name(t) == theirs->tensor_name(t);
    if (!same)
      throw ConfigError(source + ": member " + std::to_string(cfg.swarm.first_member + k) + " (" +
                        architecture_text(member_model(cfg, cfg.swarm.first_member + k)) + ") would start from member " +
                        std::to_string(src.first_member + j) + " of another architecture; a warm start needs the same "
                        "layers and inputs, so choose source members of the same architecture (members: [...])");
    const ParamLayout layout(*theirs, rows);
    std::vector<float> p;
    for (int t = 0; t < theirs->tensors(); ++t)
      p.insert(p.end(), params->begin() + layout.at(t, row), params->begin() + layout.at(t, row) + layout.size[static_cast<std::size_t>(t)]);
    w.member_params.push_back(std::move(p));
  }
}

}  // namespace

WarmStart load_warm_start(const Config& cfg, const ModelShape& shape, const PreparedData& data) {
  const InitFromConfig& init = cfg.model.init_from;
  const std::string where = (cfg.source_file.empty() ? std::string() : cfg.source_file + ": ") + "model.init_from";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(init.path, ec))
    throw ConfigError(where + ".path: run file not found: '" + init.path + "' (relative paths are looked up in the "
                      "working directory, then beside the config file); give the run file to start from");
  const RunFile f = read_run_file(init.path);
  const std::string source = where + " ('" + init.path + "')";
  const bool per_member = per_member_architecture(cfg) || !f.architectures.empty();
  if (!per_member) check_tensors(f, shape, source);
  check_names(f.data.feature_names, data.feature_names, "input features", source);
  check_names(f.data.class_names, data.class_names, "classes", source);
  WarmStart w{init.path, f.meta.first_member, f.meta.swarm_size, ParamLayout(shape, f.meta.swarm_size), {}, {}, 0};
  if (!per_member) w.params = params_from_layers(f.params, shape, w.S, init.path);
  const int last = cfg.swarm.first_member + cfg.swarm.size;
  for (int k = cfg.swarm.first_member; k < last; ++k) {
    const int m = init.source_member(k);
    if (m < w.first_member || m >= w.first_member + w.S)
      throw ConfigError(where + (init.all ? ".members (all)" : ".members[" + std::to_string(k) + "]") + ": member " +
                        std::to_string(k) + " would start from member " + std::to_string(m) + " of '" + init.path +
                        "', which holds members " + std::to_string(w.first_member) + ".." +
                        std::to_string(w.first_member + w.S - 1) +
                        (init.all ? "; with members: all the source needs every member of this swarm; list the "
                                    "source members instead, e.g. members: [0, 0, 1]"
                                  : "; use members of the source run"));
  }
  if (per_member) load_member_params(w, cfg, shape, data, f, source);
  return w;
}

void apply_warm_start(const WarmStart& w, const std::vector<int>& members, const ParamLayout& layout,
                      std::vector<float>& params) {
  for (int s = 0; s < layout.S; ++s) {
    const std::vector<float>& p = w.member_params.at(static_cast<std::size_t>(members[static_cast<std::size_t>(s)] - w.run_first));
    std::size_t at = 0;
    for (std::size_t t = 0; t < layout.size.size(); ++t) {
      std::copy_n(p.begin() + static_cast<std::ptrdiff_t>(at), layout.size[t], params.begin() + layout.at(static_cast<int>(t), s));
      at += static_cast<std::size_t>(layout.size[t]);
    }
  }
}

void apply_warm_start(const WarmStart& w, const InitFromConfig& init, int first_member, const ParamLayout& layout,
                      std::vector<float>& params) {
  if (!w.member_params.empty()) {  // per member (a source of several architectures)
    std::vector<int> members;
    for (int s = 0; s < layout.S; ++s) members.push_back(first_member + s);
    return apply_warm_start(w, members, layout, params);
  }
  for (std::size_t t = 0; t < layout.size.size(); ++t) {
    const int tensor = static_cast<int>(t);
    for (int s = 0; s < layout.S; ++s) {
      const int from = init.source_member(first_member + s) - w.first_member;
      std::copy_n(w.params.begin() + w.layout.at(tensor, from), layout.size[t], params.begin() + layout.at(tensor, s));
    }
  }
}

}  // namespace tn
