// Reading new series for a stored sequence run (see new_series.h).
#include "run/new_series.h"

#include <algorithm>
#include <filesystem>

#include "run/errors.h"
#include "run/swarm_file.h"

namespace tn {
namespace {

// A YAML double-quoted scalar.
std::string yaml_quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

}  // namespace

NewSeries read_new_series(const StoredSwarm& run, const std::string& file, const std::vector<std::string>& id_columns) {
  std::string ext = std::filesystem::path(file).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".yaml" || ext == ".yml")
    throw UsageError("'" + file + "': a sequence run reads new history from a CSV file in the training data's "
                     "long format (series key, time and value columns, one row per series and time point); "
                     "write a generator's data as CSV with: turbanet data generate CONFIG --out FILE.csv");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw DataError("file not found: '" + file + "' (the new history to read: a CSV in the long format of the "
                    "training data, one row per series and time point)");
  NewSeries s;
  // The run's own data section (sequence, group_by, normalization settings) with `file` as a
  // csv source; absolute, so that it is not looked up where the run was trained.
  const std::string path = std::filesystem::absolute(file).string();
  s.data = run_file_config(run.file, run.path, {{"data.source", "{type: csv, path: " + yaml_quoted(path) + "}"}}).data;
  s.table = load_dataset(s.data, false, id_columns);
  s.table.origin = file;
  const int G = s.table.group_names.empty() ? 1 : static_cast<int>(s.table.group_names.size());
  if (!one_member_per_group(run)) {
    s.stats_of.assign(G, 0);
    return s;
  }
  const std::vector<std::string>& names = run.file.members.group_names;
  std::vector<std::string> unknown;
  for (const std::string& g : s.table.group_names) {
    const auto it = std::find(names.begin(), names.end(), g);
    if (it == names.end()) {
      unknown.push_back("'" + g + "'");
      continue;
    }
    const int local = static_cast<int>(it - names.begin());
    s.stats_of.push_back(local);
    s.member.push_back(run.first_member + local);
  }
  if (!unknown.empty()) {
    std::string list;
    for (std::size_t i = 0; i < unknown.size() && i < 10; ++i) list += (i ? ", " : "") + unknown[i];
    if (unknown.size() > 10) list += ", ... (" + std::to_string(unknown.size()) + " in all)";
    throw DataError(file + ": column '" + s.data.group_by + "' has series the run has no member for: " + list +
                    "; run '" + run.path + "' has one member per series trained on " + std::to_string(names.size()) +
                    " series (/members/group_names). Remove those rows, or train a run that includes them");
  }
  return s;
}

SeriesNormalization stored_normalization(const StoredSwarm& run) {
  const Normalization& n = run.file.normalization;
  return {n.mean.data, n.std.data, n.target_mean.data, n.target_std.data};
}

}  // namespace tn
