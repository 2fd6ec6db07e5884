// Loading a trained swarm from its run file and preparing the inputs it runs on.
#include "run/stored_swarm.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "backend/backend.h"
#include "data/arrays.h"
#include "data/encode.h"
#include "data/prepare.h"
#include "run/new_series.h"
#include "run/swarm_file.h"
#include "train/swarm_forward.h"

namespace tn {
namespace {

using Shape = std::vector<std::uint64_t>;

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "'" : ", '") + n + "'";
  return text;
}

void check_sizes(const StoredSwarm& r) {
  // Sequence data: names and statistics are per step feature.
  const int seq = r.file.data.seq_len;
  const std::size_t F = static_cast<std::size_t>(seq > 0 ? r.file.data.step_features : r.shape.inputs());
  if (seq > 0 && static_cast<std::size_t>(r.shape.inputs()) != F * static_cast<std::size_t>(seq))
    throw RunFileError("run file '" + r.path + "': /data@seq_len " + std::to_string(seq) + " and @step_features " +
                       std::to_string(F) + " do not match the model's " + std::to_string(r.shape.inputs()) + " inputs");
  const auto bad = [&](const std::string& what, std::size_t n, std::size_t want) {
    if (n != 0 && n != want)
      throw RunFileError("run file '" + r.path + "': " + what + " has " + std::to_string(n) +
                         " entries but the model has " + std::to_string(want));
  };
  // Statistics per member group (group_by with normalize_per_member) are [G, F].
  const std::size_t G = std::max<std::size_t>(1, r.file.members.group_names.size());
  const std::size_t stats = r.file.normalization.mean.data.size() == G * F ? G * F : F;
  bad("/data/normalization/mean", r.file.normalization.mean.data.size(), stats);
  bad("/data/normalization/std", r.file.normalization.std.data.size(), stats);
  bad("/data/feature_names", r.file.data.feature_names.size(), F);
  bad("/data/class_names", r.file.data.class_names.size(), static_cast<std::size_t>(r.K));
}

bool nearly_equal(float a, float b) { return std::abs(a - b) <= 1e-6f * std::max(1.0f, std::abs(b)); }

// The rebuilt data must be the data the run was trained on.
void check_same_data(const StoredSwarm& run, const PreparedData& d) {
  const std::string why = "; was " + d.origin + " changed since training? Evaluate it as new data with --data";
  if (d.features != run.shape.inputs())
    throw DataError(d.origin + " now has " + std::to_string(d.features) + " features, the model takes " +
                    std::to_string(run.shape.inputs()) + why);
  const Normalization& n = run.file.normalization;
  const bool same = n.mean.data.size() == d.mean.size() &&
                    std::equal(d.mean.begin(), d.mean.end(), n.mean.data.begin(), nearly_equal) &&
                    std::equal(d.std.begin(), d.std.end(), n.std.data.begin(), nearly_equal) &&
                    n.target_mean.data.size() == d.target_mean.size() &&
                    std::equal(d.target_mean.begin(), d.target_mean.end(), n.target_mean.data.begin(), nearly_equal) &&
                    std::equal(d.target_std.begin(), d.target_std.end(), n.target_std.data.begin(), nearly_equal);
  if (!same)
    throw DataError("the normalization statistics of " + d.origin +
                    " differ from those stored in the run file (/data/normalization)" + why);
  if (!run.file.data.class_names.empty() && run.file.data.class_names != d.class_names)
    throw DataError("the classes of " + d.origin + " (" + joined(d.class_names) +
                    ") differ from the run's (" + joined(run.file.data.class_names) + ")" + why);
}

void append(Inputs& in, const SplitData& s) {
  in.n += s.n;
  in.X.insert(in.X.end(), s.X.begin(), s.X.end());
  in.y.insert(in.y.end(), s.y.begin(), s.y.end());
  in.group.insert(in.group.end(), s.group.begin(), s.group.end());
  in.units.append(s.units);
  in.naive.append(s.naive);
}

// Labels of `d` (its own class numbering) as the run's class indices, matched by name.
void map_classes(const StoredSwarm& run, Dataset& d, const std::string& file) {
  for (float& y : d.y) {
    const std::string& name = d.class_names[static_cast<std::size_t>(y)];
    const auto it = std::find(run.class_names.begin(), run.class_names.end(), name);
    if (it == run.class_names.end())
      throw DataError(file + ": class '" + name + "' is not one of the run's classes (" +
                      joined(run.class_names) + ")");
    y = static_cast<float>(it - run.class_names.begin());
  }
}

bool is_yaml(const std::string& file) {
  std::string ext = std::filesystem::path(file).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".yaml" || ext == ".yml";
}

// The training CSV's dialect from the stored config, also when the training file is gone: its
// path is replaced by one that exists (the run file; only the dialect keys are kept). Other
// sources: a source of type "".
SourceConfig stored_csv_dialect(const RunFile& file, const std::string& path, const Config& cfg) {
  SourceConfig dialect;
  dialect.type = "";
  if (cfg.data.source.type == "csv") return cfg.data.source;
  if (file.data.seq_len > 0) return dialect;
  try {
    const Config c = run_file_config(file, path, {{"data.source.path", path}, {"data.features", "null"},
                                                  {"data.missing", "error"}, {"data.drop", "null"}, {"data.per_member", "shared"},
                                                  {"data.normalize_per_member", "false"}});
    if (c.data.source.type == "csv") dialect = c.data.source;
  } catch (const ConfigError&) {  // not a CSV source: no dialect to keep
  }
  return dialect;
}

StoredSwarm load(const std::string& path, bool own_data) {
  StoredSwarm r;
  r.path = path;
  r.file = read_run_file(path);
  if (r.file.meta.shard_count > 0 && !r.file.members.group_names.empty())
    throw UsageError("run file '" + path + "' is shard " + std::to_string(r.file.meta.shard_index) + " of " +
                     std::to_string(r.file.meta.shard_count) + " of a group_by swarm: its members are a block of the "
                     "groups; join the shards first (turbanet merge OUT.h5 PART...) and use the merged file");
  std::vector<Override> ov;
  if (!own_data) {  // neither the training data nor its per-member sampling is needed
    // A stand-in source of the same kind (the model's shapes come from the run file; new series
    // are read with the stored data section, run/new_series.h).
    const bool seq = r.file.data.seq_len > 0, groups = r.file.members.per_member == "group_by";
    // Sequence runs: many series need group_by; one series does without (a run of members of
    // several architectures has no group_by).
    ov.push_back({"data.source", seq ? (groups ? "{type: random_walk}" : "{type: random_walk, series: 1}") : "{type: spirals}"});
    if (seq) ov.push_back({"data.sequence", "{window: " + std::to_string(r.file.data.seq_len) + ", target: close}"});
    ov.push_back({"data.per_member", seq && groups ? "{group_by: ticker}" : "shared"});
    ov.push_back({"data.normalize_per_member", "false"});  // group statistics are in the run file
    ov.push_back({"data.features", "null"});  // the encoding is in the run file too
    ov.push_back({"data.missing", "error"});
    ov.push_back({"data.drop", "null"});  // the features' names are in the run file
  }
  try {
    r.cfg = run_file_config(r.file, path, ov);
  } catch (const DataFileNotFound& e) {
    throw DataError(std::string(e.what()) + ". The run's own splits are rebuilt from its training data, " + e.key +
                    " '" + e.written + "' in its /config" +
                    (r.file.data.base_dir.empty() ? std::string(" (this run file is older than the record of where it was trained)")
                                                  : ", relative to '" + r.file.data.base_dir + "' where the run was trained") +
                    ". Put the file back there, run eval from the directory you trained in, or evaluate the data where it "
                    "is now: turbanet eval " + path + " --data PATH (every sample of it, as new data: a CSV with the run's columns, or a YAML config)");
  }
  r.S = r.file.meta.swarm_size;
  r.first_member = r.file.meta.first_member;
  FileModel m = model_from_run_file(r.file, r.cfg, path);
  r.shape = std::move(m.shape);
  r.params = std::move(m.params);
  r.classification = m.classification;
  r.K = m.K;
  for (FileArchitecture& a : m.architectures) r.architectures.push_back({a.name, a.members, a.shape, std::move(a.params)});
  // A diverged member keeps in the file the parameters it was frozen with, for inspection;
  // every command leaves it out of the ensemble as if they were not finite.
  const auto leave_out = [&](const ModelShape& shape, std::vector<float>& params, const std::vector<int>& members) {
    const ParamLayout layout(shape, static_cast<int>(members.size()));
    for (std::size_t i = 0; i < members.size(); ++i) {
      const int s = members[i];
      if (s < static_cast<int>(r.file.diverged_epoch.size()) && r.file.diverged_epoch[static_cast<std::size_t>(s)] > 0)
        for (int t = 0; t < shape.tensors(); ++t)
          std::fill_n(params.begin() + layout.at(t, static_cast<int>(i)), layout.size[t],
                      std::numeric_limits<float>::quiet_NaN());
    }
  };
  if (r.architectures.empty()) {
    std::vector<int> all(static_cast<std::size_t>(r.S));
    for (int s = 0; s < r.S; ++s) all[static_cast<std::size_t>(s)] = s;
    leave_out(r.shape, r.params, all);
  }
  for (StoredArchitecture& a : r.architectures) leave_out(a.shape, a.params, a.members);
  check_sizes(r);
  // The file lists per-member hyperparameters by name; reports order them as the config does.
  auto& hp = r.file.members.hparams;
  const auto& keys = member_value_keys();
  std::stable_sort(hp.begin(), hp.end(), [&](const auto& a, const auto& b) {
    return std::find(keys.begin(), keys.end(), a.first) < std::find(keys.begin(), keys.end(), b.first);
  });
  r.class_names = r.file.data.class_names;
  r.encoding = stored_encoding(r.file.encoding, path);
  if (r.class_names.empty())
    for (int k = 0; k < r.K; ++k) r.class_names.push_back(std::to_string(k));
  return r;
}

}  // namespace

StoredSwarm load_swarm(const std::string& path, bool own_data) { return load(path, own_data); }

StoredSwarm load_swarm_model(const std::string& path) { return load(path, false); }

Inputs own_split(const StoredSwarm& run, const std::optional<std::string>& split) {
  PreparedData d = prepare_data(load_dataset(run.cfg.data, run.classification), run.cfg.data);
  check_same_data(run, d);
  targets_to_original(d);  // targets in original units, like every output of run_swarm and run_own
  Inputs in;
  in.group_names = d.group_names;
  in.split = split.value_or("test");
  in.batch = std::min(run.cfg.train.batch_size, d.train.n);
  if (!split && d.test.n == 0) {
    in.split = "train";
    spdlog::info("the run has no test split: evaluating on the training split, which the members "
                 "were trained on (optimistic)");
  }
  if (in.split == "all") {
    for (const SplitData* s : {&d.train, &d.val, &d.test}) append(in, *s);
    in.source = "all samples of " + d.origin;
    return in;
  }
  const SplitData& s = in.split == "test" ? d.test : in.split == "val" ? d.val : d.train;
  if (s.n == 0)
    throw UsageError("the run has no " + in.split + " split (data.split." + in.split +
                     " is 0 in its config); choose another --split");
  append(in, s);
  in.source = in.split + " split of " + d.origin;
  const Predictions* stored = run.file.find_predictions(in.split);
  if (stored && !stored->targets.data.empty() && stored->targets.data != in.y)
    throw DataError("the rebuilt " + in.split + " split of " + d.origin + " differs from the one in /predictions/" +
                    in.split + "; was the data changed since training? Evaluate it as new data with --data");
  return in;
}

// For statistics per member group: each sample's group as the run's group index, matched by
// name (the data must have the run's group_by column). Empty otherwise.
std::vector<int> run_groups(const StoredSwarm& run, const Dataset& d, const std::string& file) {
  const std::vector<std::string>& names = run.file.members.group_names;
  if (run.file.normalization.mean.data.size() <= static_cast<std::size_t>(d.features)) return {};
  if (d.group.empty())
    throw DataError(file + ": the run normalizes each group of column '" + run.file.members.group_by +
                    "' with its own statistics, so the data needs that column");
  std::vector<int> to_run(d.group_names.size());
  for (std::size_t g = 0; g < d.group_names.size(); ++g) {
    const auto it = std::find(names.begin(), names.end(), d.group_names[g]);
    if (it == names.end())
      throw DataError(file + ": group '" + d.group_names[g] + "' of column '" + run.file.members.group_by +
                      "' was not in the training data, so it has no normalization statistics");
    to_run[g] = static_cast<int>(it - names.begin());
  }
  std::vector<int> group(d.group.size());
  for (std::size_t i = 0; i < group.size(); ++i) group[i] = to_run[d.group[i]];
  return group;
}

std::vector<Override> data_section_overrides() {
  return {{"model", "{layers: [{units: 1}]}"}, {"loss", "mse"}, {"grid", "null"}};
}

std::vector<NamedFile> new_data_files(const std::string& key, const std::string& file) {
  std::vector<NamedFile> files = {{key, file}};
  if (!is_yaml(file)) return files;
  try {
    for (const NamedFile& f : config_inputs(load_config(file, data_section_overrides())))
      if (f.path != file) files.push_back({file + ": " + f.key, f.path});
  } catch (const ConfigError&) {  // new_data reports it
  }
  return files;
}

Inputs new_data(const StoredSwarm& run, const std::string& file, bool labeled, const std::vector<std::string>& id_columns) {
  if (run.file.data.seq_len > 0) {
    if (!labeled)
      throw UsageError("run file '" + run.path + "' holds a sequence model: its forecasts are made per series "
                       "(turbanet predict " + run.path + " --input HISTORY.csv)");
    return new_series_inputs(run, file);
  }
  const int F = run.shape.inputs();
  Dataset d;
  Inputs in;
  in.split = "data";
  if (is_yaml(file)) {
    Config c = load_config(file, data_section_overrides());
    if (!run.encoding.empty() && c.data.source.type == "csv" && !c.data.sequence.enabled()) {
      // read the columns as training did
      const CsvColumns columns = csv_columns(run.encoding, run.file.data.feature_names);
      c.data.feature_settings = columns.settings;
      c.data.missing = columns.missing;
    }
    d = load_dataset(c.data, run.classification, id_columns);
    apply_encoding(run.encoding, d);
    in.source = file + " (" + d.origin + ")";
  } else {
    const DataInfo& info = run.file.data;
    if (info.feature_names.empty())
      throw UsageError("run file '" + run.path + "' has no /data/feature_names (written by an older "
                       "turbanet), so CSV columns cannot be matched; pass a YAML config instead");
    SourceConfig src;
    src.type = "csv";
    src.path = file;
    const SourceConfig trained = stored_csv_dialect(run.file, run.path, run.cfg);  // only new CSV rows need it
    if (trained.type == "csv") {
      // New rows come in the training file's dialect: its delimiter (or detection), quote,
      // comment character and, for a header-less file, its column names (docs/data.md).
      src.delimiter = trained.delimiter;
      src.quote = trained.quote;
      src.comment = trained.comment;
      src.columns = trained.columns;
      // Rows to predict carry no label: a header-less file's columns are then the training
      // columns without the target.
      if (!labeled) std::erase(src.columns, trained.target);
    }
    const FeatureEncoding& encoding = run.encoding;
    src.features = encoding.empty() ? info.feature_names : encoding.column_names();
    if (labeled) src.target = info.target.empty() ? "label" : info.target;
    const bool grouped = run.file.normalization.mean.data.size() > static_cast<std::size_t>(F);
    d = load_csv(src, run.classification, grouped ? run.file.members.group_by : "",
                 csv_columns(encoding, info.feature_names), id_columns);
    apply_encoding(encoding, d);
    in.source = file;
  }
  if (d.features != F)
    throw DataError(file + ": the data has " + std::to_string(d.features) + " features, but the model takes " +
                    std::to_string(F) + (run.file.data.feature_names.empty() ? "" : " (" + joined(run.file.data.feature_names) + ")"));
  if (labeled && run.classification) map_classes(run, d, file);
  if (labeled && !run.classification && d.targets != run.shape.outputs())
    throw DataError(file + ": the data has " + std::to_string(d.targets) + " target values per sample, the model " +
                    std::to_string(run.shape.outputs()));
  apply_normalization(d.X, F, run.file.normalization.mean.data, run.file.normalization.std.data,
                      run_groups(run, d, file));
  in.n = d.n;
  in.X = std::move(d.X);
  in.id_columns = id_columns;
  in.ids = std::move(d.ids);
  if (labeled) in.y = std::move(d.y);
  in.batch = run.cfg.train.batch_size;
  return in;
}

std::vector<std::pair<std::string, std::vector<std::string>>> architecture_hparams(const StoredSwarm& run) {
  std::vector<std::pair<std::string, std::vector<std::string>>> r = run.file.members.hparam_text;
  int keys = static_cast<int>(r.size());
  for (const auto& [key, values] : run.file.members.hparams) keys += is_architecture_key(key);
  if (run.architectures.empty() || keys < 2) return r;
  std::vector<std::string> names(static_cast<std::size_t>(run.S));
  for (const StoredArchitecture& a : run.architectures)
    for (int s : a.members) names[static_cast<std::size_t>(s)] = a.name;
  r.emplace_back("architecture", names);
  return r;
}

namespace {

// Model outputs of a non-sequence run with data.normalize_target in original units (stored
// statistics), each member's with its own (per group: its group's row) before any ensemble: the
// swarm's [S, N, O], or with `member` one output row per sample, by the member that predicted it.
void outputs_to_original(const StoredSwarm& run, std::vector<float>& v, const std::vector<int>* member = nullptr) {
  if (run.file.data.seq_len > 0) return;
  const Normalization& n = run.file.normalization;
  const Normalize m = run.cfg.data.normalize_target;
  const int O = run.shape.outputs();
  if (member) targets_to_original(v, O, m, n.target_mean.data, n.target_std.data, *member);
  else member_targets_to_original(v, run.S, run.first_member, O, m, n.target_mean.data, n.target_std.data);
}

}  // namespace

SwarmPredictions run_swarm(const StoredSwarm& run, const Inputs& in, int threads) {
  std::string note;
  const std::unique_ptr<Backend> be = make_backend({DeviceKind::Auto, threads}, &note);
  if (!note.empty()) spdlog::debug("{}", note);
  SwarmPredictions p;
  if (run.architectures.empty()) {
    p = predict_swarm(*be, run.shape, run.cfg.loss.type, run.params, run.S, in.X, in.n, in.batch);
  } else {
    std::vector<SwarmPart> parts;
    for (const StoredArchitecture& a : run.architectures) parts.push_back({&a.shape, &a.params, a.members});
    p = predict_parts(*be, run.cfg.loss.type, parts, run.S, run.shape.outputs(), in.X, in.n, in.batch);
  }
  outputs_to_original(run, p.outputs);
  return p;
}

void check_combine(const StoredSwarm& run, Combine how) {
  if (how == Combine::Vote && !run.classification)
    throw UsageError("--combine vote needs a classification run; a regression ensemble is the mean");
}

OwnPredictions run_own(const StoredSwarm& run, const Inputs& in, int threads) {
  std::string note;
  const std::unique_ptr<Backend> be = make_backend({DeviceKind::Auto, threads}, &note);
  if (!note.empty()) spdlog::debug("{}", note);
  std::vector<int> member(in.group);
  for (int& m : member) m -= run.first_member;
  OwnPredictions p = predict_own_swarm(*be, run.shape, run.cfg.loss.type, run.params, run.S, in.X, in.n, in.batch, member);
  outputs_to_original(run, p.outputs, &in.group);
  if (!in.units.identity()) p.outputs_original = in.units.original(p.outputs);
  return p;
}

}  // namespace tn
