// The one mapping between a trained swarm and its run file, both ways: training results to
// the RunFile that io/run_file.cpp writes, and a read RunFile back to the model and its
// parameters in ParamLayout order.
#include "run/swarm_file.h"

#include <chrono>
#include <ctime>
#include <algorithm>
#include <filesystem>

#include "data/arrays.h"
#include "eval/combine.h"
#include "run/eval_record.h"
#include "turbanet_version.h"
#include "util/command_line.h"

namespace tn {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

namespace {

Array make_array(std::vector<std::uint64_t> shape, std::vector<float> data) {
  return Array{std::move(shape), std::move(data)};
}

MemberData member_data(const Config& cfg, const MemberSets& sets) {
  MemberData m;
  m.per_member = to_string(cfg.data.per_member);
  m.fraction = cfg.data.member_fraction;
  for (int s = 0; s < cfg.swarm.size; ++s) m.sample_count.push_back(static_cast<int>(sets.size(s)));
  m.set_offset.assign(sets.offset.begin(), sets.offset.end());
  m.set_rows.assign(sets.rows.begin(), sets.rows.end());
  m.group_names = sets.names;
  if (cfg.data.per_member == PerMember::GroupBy) m.group_by = cfg.data.group_by;
  if (const InitFromConfig& w = cfg.model.init_from; w.enabled()) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(w.path, ec);
    m.init_from_path = ec ? w.path : abs.lexically_normal().string();
    for (int s = 0; s < cfg.swarm.size; ++s) m.init_from.push_back(w.source_member(cfg.swarm.first_member + s));
  }
  for (const MemberValues& v : cfg.member_values) {
    if (!v.labels.empty()) {
      std::vector<std::string> per(cfg.swarm.size);
      for (int s = 0; s < cfg.swarm.size; ++s) per[s] = v.text(cfg.swarm.first_member + s);
      m.hparam_text.emplace_back(v.key, per);
      continue;
    }
    std::vector<double> per(cfg.swarm.size);
    for (int s = 0; s < cfg.swarm.size; ++s) per[s] = v.at(cfg.swarm.first_member + s);
    m.hparams.emplace_back(v.key, per);
  }
  return m;
}

// Each non-empty split's source rows, and its data when small enough to carry along.
std::vector<DataSplit> data_splits(const PreparedData& data) {
  constexpr std::size_t kMaxValues = 1 << 20;
  std::vector<DataSplit> out;
  for (const SplitData* s : {&data.train, &data.val, &data.test}) {
    if (s->n == 0) continue;
    DataSplit d{s->name, s->rows, {}, {}, {}};
    if (s->X.size() <= kMaxValues) {
      const std::uint64_t n = s->n;
      d.X = data.seq_len > 0 ? make_array({n, static_cast<std::uint64_t>(data.seq_len),
                                           static_cast<std::uint64_t>(data.step_features)}, s->X)
                             : make_array({n, static_cast<std::uint64_t>(data.features)}, s->X);
      d.time = s->time;
      d.y = data.num_classes > 0 ? make_array({n}, s->y) : make_array({n, static_cast<std::uint64_t>(data.targets)}, s->y);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

std::vector<LayerParams> params_to_layers(const ModelShape& shape, const ParamLayout& layout, const std::vector<float>& p) {
  std::vector<LayerParams> layers(shape.num_layers());
  const std::uint64_t S = layout.S;
  for (int k = 0; k < shape.tensors(); ++k) {
    std::vector<std::uint64_t> dims = {S};
    for (std::int64_t d : shape.tensor_dims(k)) dims.push_back(static_cast<std::uint64_t>(d));
    const auto begin = p.begin() + layout.offset[k];
    layers[shape.layer_of(k)].tensors.emplace_back(
        shape.tensor_name(k), make_array(std::move(dims), std::vector<float>(begin, begin + S * layout.size[k])));
  }
  return layers;
}


std::vector<float> params_from_layers(const std::vector<LayerParams>& layers, const ModelShape& shape, int members,
                                      const std::string& path, const std::string& root) {
  const std::uint64_t S = static_cast<std::uint64_t>(members);
  std::vector<float> params;
  if (static_cast<int>(layers.size()) != shape.num_layers())
    throw RunFileError("run file '" + path + "' has " + std::to_string(layers.size()) +
                       " layers under " + root + ", but its /config describes " + std::to_string(shape.num_layers()));
  std::vector<std::size_t> next(layers.size(), 0);  // per layer: its next tensor in parameter order
  for (int k = 0; k < shape.tensors(); ++k) {
    const int li = shape.layer_of(k);
    const std::string name = root + "/layer_" + std::to_string(li) + "/" + shape.tensor_name(k);
    std::vector<std::uint64_t> want = {S};
    for (std::int64_t d : shape.tensor_dims(k)) want.push_back(static_cast<std::uint64_t>(d));
    const auto& tensors = layers[li].tensors;
    if (next[li] >= tensors.size() || tensors[next[li]].first != shape.tensor_name(k))
      throw RunFileError("run file '" + path + "' has no " + name + ", which its /config describes");
    const Array& a = tensors[next[li]++].second;
    if (a.shape != want)
      throw RunFileError("run file '" + path + "': " + name + " has shape " + shape_text(a.shape) +
                         ", but its /config describes " + shape_text(want));
    params.insert(params.end(), a.data.begin(), a.data.end());  // ParamLayout order: [S, size] per tensor
  }
  for (std::size_t li = 0; li < layers.size(); ++li)
    if (next[li] != layers[li].tensors.size())
      throw RunFileError("run file '" + path + "': " + root + "/layer_" + std::to_string(li) +
                         " holds tensors its /config does not describe");
  return params;
}

EncodingRecord encoding_record(const FeatureEncoding& e) {
  EncodingRecord r;
  if (e.empty()) return r;
  r.missing = to_string(e.missing);
  for (const ColumnEncoding& c : e.columns) {
    r.columns.push_back(c.column);
    r.kinds.emplace_back(to_string(c.kind));
    r.categories.insert(r.categories.end(), c.categories.begin(), c.categories.end());
    r.category_counts.push_back(static_cast<int>(c.categories.size()));
    r.fill.push_back(c.fill);
  }
  return r;
}

FeatureEncoding stored_encoding(const EncodingRecord& r, const std::string& path) {
  FeatureEncoding e;
  if (r.empty()) return e;
  const auto unknown = [&](const std::string& where, const std::string& v) {
    return RunFileError("run file '" + path + "': " + where + ": unknown value '" + v + "'");
  };
  bool known = false;
  for (Missing m : {Missing::Error, Missing::DropRows, Missing::Mean, Missing::Median})
    if (r.missing == to_string(m)) e.missing = m, known = true;
  if (!known) throw unknown("/data/encoding@missing", r.missing);
  std::size_t at = 0;
  for (std::size_t i = 0; i < r.columns.size(); ++i) {
    ColumnEncoding c;
    c.column = r.columns[i];
    known = false;
    for (Encoding k : {Encoding::Numeric, Encoding::OneHot, Encoding::Ordinal})
      if (r.kinds[i] == to_string(k)) c.kind = k, known = true;
    if (!known) throw unknown("/data/encoding/kinds", r.kinds[i]);
    const auto n = static_cast<std::size_t>(r.category_counts[i]);
    c.categories.assign(r.categories.begin() + static_cast<std::ptrdiff_t>(at),
                        r.categories.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
    c.fill = r.fill[i];
    e.columns.push_back(std::move(c));
  }
  return e;
}

Config run_file_config(const RunFile& file, const std::string& path, const std::vector<Override>& overrides) {
  std::vector<std::string> dirs;
  if (!file.data.base_dir.empty()) dirs.push_back(file.data.base_dir);
  dirs.push_back("");
  dirs.push_back(std::filesystem::path(path).parent_path().string());
  return parse_stored_config(file.config_yaml, path + ":/config", overrides, dirs);
}

namespace {

// The model of `members` members with parameters `layers` (under `root`), from the config's
// model `model` and the first layer's input width.
FileModel layers_model(const std::vector<LayerParams>& layers, const std::string& root, const RunFile& file,
                       const Config& cfg, const ModelConfig& model, int S, const std::string& path) {
  if (layers.empty() || layers.front().tensors.empty())
    throw RunFileError("run file '" + path + "' has no " + root + "/layer_0");
  const Array& W0 = layers.front().tensors.front().second;
  if (W0.shape.size() != 3 || W0.shape[0] != static_cast<std::uint64_t>(S))
    throw RunFileError("run file '" + path + "': " + root + "/layer_0/" + layers.front().tensors.front().first + " has shape " + shape_text(W0.shape) +
                       ", expected [" + std::to_string(S) + ", inputs, units] (swarm_size " +
                       std::to_string(S) + ")");
  const LossType loss = cfg.loss.type;
  const int units = model.layers.back().units;
  FileModel m;
  m.classification = is_classification(loss);
  m.K = num_classes(loss, units);
  // A recurrent first layer's Wx is [S, step features, gates·H]; a dense one's W [S, inputs, units].
  const int seq = file.data.seq_len, in0 = static_cast<int>(W0.shape[1]);
  const bool recurrent = model.layers.front().type != "dense";
  m.shape = make_model_shape(model, cfg.loss, recurrent ? seq * in0 : in0, m.K, units, seq,
                             recurrent ? in0 : file.data.step_features);
  m.params = params_from_layers(layers, m.shape, S, path, root);
  return m;
}

}  // namespace

FileModel model_from_run_file(const RunFile& file, const Config& cfg, const std::string& path) {
  if (file.architectures.empty())
    return layers_model(file.params, "/params", file, cfg, cfg.model, file.meta.swarm_size, path);
  // Members of several architectures: each group's model is its members' (member_model).
  FileModel all;
  const int first = file.meta.first_member, S = file.meta.swarm_size;
  std::vector<char> seen(static_cast<std::size_t>(S), 0);
  for (std::size_t a = 0; a < file.architectures.size(); ++a) {
    const ArchitectureParams& arch = file.architectures[a];
    const std::string root = "/architectures/arch_" + std::to_string(a);
    FileArchitecture fa;
    fa.name = arch.name;
    for (int k : arch.members) {
      if (k < first || k >= first + S || seen[static_cast<std::size_t>(k - first)]++)
        throw RunFileError("run file '" + path + "': " + root + "/members lists member " + std::to_string(k) +
                           ", which is not a member of this file or is listed twice");
      fa.members.push_back(k - first);
    }
    if (fa.members.empty()) throw RunFileError("run file '" + path + "': " + root + "/members is empty");
    const ModelConfig model = member_model(cfg, arch.members.front());
    if (architecture_text(model) != arch.name)
      throw RunFileError("run file '" + path + "': " + root + " holds '" + arch.name + "', but /config gives member " +
                         std::to_string(arch.members.front()) + " the architecture '" + architecture_text(model) + "'");
    FileModel m = layers_model(arch.params, root + "/params", file, cfg, model, static_cast<int>(fa.members.size()), path);
    fa.shape = m.shape;
    fa.params = std::move(m.params);
    if (a == 0) {
      all.shape = m.shape;
      all.classification = m.classification;
      all.K = m.K;
    }
    all.architectures.push_back(std::move(fa));
  }
  if (std::count(seen.begin(), seen.end(), 0))
    throw RunFileError("run file '" + path + "': /architectures leaves out some of its " + std::to_string(S) + " members");
  return all;
}

RunFile make_run_file(const Config& cfg, const PreparedData& data, const MemberSets& sets, const TrainOutput& t,
                      const Backend& be, double wall, const Predictions& predictions, const EvalRecord& record) {
  RunFile r = make_trained_file(cfg, data, sets, t, be, wall);
  Predictions kept = predictions;
  if (keep_predictions(cfg.output.predictions, kept)) r.put(std::move(kept));
  r.put(record);
  return r;
}

RunFile make_trained_file(const Config& cfg, const PreparedData& data, const MemberSets& sets, const TrainOutput& t,
                          const Backend& be, double wall) {
  RunFile r;
  const std::uint64_t S = cfg.swarm.size, E = t.epochs;
  r.config_yaml = to_yaml(cfg);
  r.meta = {TURBANET_VERSION, cfg.name, be.name(), t.kernel, be.workers(), cfg.swarm.size,
            cfg.swarm.first_member, t.epochs, t.steps_per_epoch * t.epochs, wall, t.train_seconds,
            utc_now(), t.interrupted, 0, 0, 0, 0, command_line()};
  if (t.architectures.empty()) {
    r.params = params_to_layers(t.shape, t.layout, t.params);
    r.init_params = params_to_layers(t.shape, t.layout, t.init_params);
  }
  std::vector<int> architecture(t.architectures.empty() ? 0 : S);
  for (std::size_t a = 0; a < t.architectures.size(); ++a) {
    const ArchitectureOutput& arch = t.architectures[a];
    ArchitectureParams p{arch.name, {}, params_to_layers(arch.shape, arch.layout, arch.params),
                         params_to_layers(arch.shape, arch.layout, arch.init_params)};
    for (int s : arch.members) {
      p.members.push_back(cfg.swarm.first_member + s);
      architecture[static_cast<std::size_t>(s)] = static_cast<int>(a);
    }
    r.architectures.push_back(std::move(p));
  }
  auto hist = [&](const std::vector<float>& h) { return h.empty() ? Array{} : make_array({S, E}, h); };
  r.train_loss = hist(t.train_loss);
  r.val_loss = hist(t.val_loss);
  r.train_accuracy = hist(t.train_acc);
  r.val_accuracy = hist(t.val_acc);
  r.diverged_epoch = t.diverged_epoch;
  r.stopped_epoch = t.stopped_epoch;
  r.best_epoch = t.best_epoch;
  if (cfg.search.enabled()) {
    SearchRecord& sr = r.search;
    sr.type = to_string(cfg.search.type);
    sr.metric = cfg.search.metric;
    sr.epochs = t.search_epochs;
    sr.rung = t.search_rung;
    sr.source = t.search_source;
    for (const SearchConfig::Perturb& p : cfg.search.perturb) sr.keys.push_back(p.key);
    sr.values = t.search_values;
  }
  r.members = member_data(cfg, sets);
  r.members.architecture = architecture;
  r.splits = data_splits(data);
  if (!data.mean.empty()) {  // per feature, or per step feature for sequence data
    const std::uint64_t F = data.seq_len > 0 ? data.step_features : data.features, G = data.mean.size() / F;
    const std::vector<std::uint64_t> shape = G > 1 ? std::vector<std::uint64_t>{G, F} : std::vector<std::uint64_t>{F};
    r.normalization.method = to_string(cfg.data.normalize);
    r.normalization.mean = make_array(shape, data.mean);
    r.normalization.std = make_array(shape, data.std);
  }
  if (!data.target_mean.empty()) {
    // Non-sequence data: [T], or [G, T] per member group (normalize_per_member); sequences: [G].
    const std::uint64_t T = data.seq_len > 0 ? 1 : static_cast<std::uint64_t>(data.targets),
                        G = data.target_mean.size() / T;
    const std::vector<std::uint64_t> shape = data.seq_len == 0 && G > 1 ? std::vector<std::uint64_t>{G, T}
                                                                         : std::vector<std::uint64_t>{data.target_mean.size()};
    r.normalization.target_mean = make_array(shape, data.target_mean);
    r.normalization.target_std = make_array(shape, data.target_std);
  }
  if (!sets.target_mean.empty()) {  // per-member statistics [S, T], row s local member s's
    const std::vector<std::uint64_t> shape{static_cast<std::uint64_t>(cfg.swarm.size), static_cast<std::uint64_t>(sets.targets)};
    r.normalization.member_target_mean = make_array(shape, sets.target_mean);
    r.normalization.member_target_std = make_array(shape, sets.target_std);
  }
  const std::string target = cfg.data.sequence.enabled() ? cfg.data.sequence.target
                             : cfg.data.source.type == "csv" ? cfg.data.source.target : "";
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);  // what relative paths in /config are relative to
  r.data = {data.feature_names, data.class_names, target, data.seq_len, data.step_features, ec ? "" : cwd.string(),
            to_string(cfg.data.sequence.transform), to_string(cfg.data.sequence.scale)};
  r.encoding = encoding_record(data.encoding);
  return r;
}

}  // namespace tn
