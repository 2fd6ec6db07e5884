// Writes and reads prediction files (see io/prediction_file.h and docs/run-file.md).
#include "io/prediction_file.h"

#include "io/h5.h"
#include "io/h5_file.h"
#include "io/run_file_eval.h"

namespace tn {
namespace {

constexpr const char* kKind = "predictions file";
constexpr int kFormatVersion = 1;

void write_array(hid_t file, const std::string& name, const Array& a) {
  if (a.size() > 0) h5::write_floats(file, name, a.shape, a.data.data());
}

void read_array(hid_t file, const std::string& name, Array& a) {
  if (h5::exists(file, name)) h5::read_floats(file, name, a.shape, a.data);
}

void write_objects(hid_t file, const PredictionFile& p) {
  h5::set_string_attr(file, "/", "format", "turbanet predictions");
  h5::set_int_attr(file, "/", "format_version", kFormatVersion, H5T_STD_I32LE);
  h5::set_string_attr(file, "/", "run", p.run);
  h5::set_string_attr(file, "/", "input", p.input);
  h5::set_string_attr(file, "/", "task", p.task);
  h5::set_string_attr(file, "/", "combine", p.combine);
  h5::write_strings(file, "/feature_names", p.feature_names);
  if (!p.class_names.empty()) h5::write_strings(file, "/class_names", p.class_names);
  h5::write_ints(file, "/member", p.member);
  h5::write_ints(file, "/excluded_members", p.excluded);
  write_array(file, "/members", p.members);
  write_array(file, "/ensemble", p.ensemble);
  write_array(file, "/ensemble_std", p.ensemble_std);
  if (!p.label.empty()) h5::write_ints(file, "/label", p.label);
  write_array(file, "/entropy", p.entropy);
  write_array(file, "/mutual_information", p.mutual_information);
  write_array(file, "/disagreement", p.disagreement);
  for (std::size_t k = 0; k < p.id_columns.size(); ++k) h5::write_strings(file, "/id/" + p.id_columns[k], p.ids[k]);
  io::write_selection(file, "/selection", p.selection);
  if (p.horizon <= 0) return;
  h5::set_int_attr(file, "/", "horizon", p.horizon, H5T_STD_I32LE);
  h5::set_string_attr(file, "/", "series_column", p.series_column);
  h5::set_string_attr(file, "/", "time_column", p.time_column);
  h5::write_strings(file, "/series", p.series);
  if (!p.last_time.empty()) h5::write_strings(file, "/last_time", p.last_time);
  write_array(file, "/forecast", p.forecast);
  write_array(file, "/forecast_normalized", p.forecast_normalized);
  write_array(file, "/members_normalized", p.members_normalized);
}

PredictionFile read_objects(hid_t file, const std::string& path) {
  if (!h5::has_attr(file, "/", "format") || h5::get_string_attr(file, "/", "format") != "turbanet predictions")
    throw RunFileError("'" + path + "' is not a turbanet predictions file");
  PredictionFile p;
  p.run = h5::get_string_attr(file, "/", "run");
  p.input = h5::get_string_attr(file, "/", "input");
  p.task = h5::get_string_attr(file, "/", "task");
  p.combine = h5::get_string_attr(file, "/", "combine");
  p.feature_names = h5::read_strings(file, "/feature_names");
  if (h5::exists(file, "/class_names")) p.class_names = h5::read_strings(file, "/class_names");
  p.member = h5::read_ints(file, "/member");
  p.excluded = h5::read_ints(file, "/excluded_members");
  read_array(file, "/members", p.members);
  read_array(file, "/ensemble", p.ensemble);
  read_array(file, "/ensemble_std", p.ensemble_std);
  if (h5::exists(file, "/label")) p.label = h5::read_ints(file, "/label");
  read_array(file, "/entropy", p.entropy);
  read_array(file, "/mutual_information", p.mutual_information);
  read_array(file, "/disagreement", p.disagreement);
  if (h5::exists(file, "/id"))
    for (const std::string& name : h5::list_group(file, "/id")) {
      p.id_columns.push_back(name);
      p.ids.push_back(h5::read_strings(file, "/id/" + name));
    }
  p.selection = io::read_selection(file, "/selection");
  if (!h5::has_attr(file, "/", "horizon")) return p;
  p.horizon = static_cast<int>(h5::get_int_attr(file, "/", "horizon"));
  p.series_column = h5::get_string_attr(file, "/", "series_column");
  p.time_column = h5::get_string_attr(file, "/", "time_column");
  p.series = h5::read_strings(file, "/series");
  if (h5::exists(file, "/last_time")) p.last_time = h5::read_strings(file, "/last_time");
  read_array(file, "/forecast", p.forecast);
  read_array(file, "/forecast_normalized", p.forecast_normalized);
  read_array(file, "/members_normalized", p.members_normalized);
  return p;
}

}  // namespace

void write_prediction_file(const std::string& path, const PredictionFile& p, bool replace) {
  io::write_h5_atomically(path, kKind, [&](hid_t file) { write_objects(file, p); },
                          replace ? io::Replace::Yes : io::Replace::No);
}

PredictionFile read_prediction_file(const std::string& path) {
  return io::read_h5_checked<PredictionFile>(path, kKind, [&](hid_t file) { return read_objects(file, path); });
}

}  // namespace tn
