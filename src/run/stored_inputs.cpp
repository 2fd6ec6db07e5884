// Preparing the inputs a stored swarm runs on: its own splits rebuilt, or new data read and
// preprocessed with the statistics the run stored (see stored_inputs.h).
#include "run/stored_inputs.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "data/arrays.h"
#include "data/prepare.h"
#include "run/errors.h"
#include "run/new_series.h"
#include "run/swarm_file.h"

namespace tn {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "'" : ", '") + n + "'";
  return text;
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

// eval --data on a sequence run: every window of every series of `file` with its target
// (windows_to_evaluate), `group` the global member of each window's series (group_by runs).
Inputs series_inputs(const StoredSwarm& run, const std::string& file) {
  const NewSeries s = read_new_series(run, file, {});
  SeriesWindows w = windows_to_evaluate(s.table, s.data.sequence, stored_normalization(run), s.stats_of);
  Inputs in;
  in.split = "data";
  in.source = file;
  in.n = w.n;
  in.X = std::move(w.X);
  in.y = std::move(w.y);
  in.units = std::move(w.units);
  in.naive = std::move(w.naive);
  if (!s.member.empty())
    for (int g : w.series) in.group.push_back(s.member[g]);
  in.batch = run.cfg.train.batch_size;
  return in;
}

}  // namespace

Inputs own_split(const StoredSwarm& run, const std::optional<std::string>& split) {
  PreparedData d = prepare_data(load_dataset(run.cfg.data, run.classification), run.cfg.data);
  check_same_data(run, d);
  targets_to_original(d);  // targets in original units, like every output of run_swarm and run_per_group
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
    return series_inputs(run, file);
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

}  // namespace tn
