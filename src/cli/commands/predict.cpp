// `turbanet predict`: options → the prediction service (run/predict_run.h) → ensemble and
// member predictions with per-sample uncertainty, as CSV (stdout or FILE.csv) or HDF5 (FILE.h5).
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "io/run_file_error.h"
#include "eval/metrics.h"
#include "io/text_file.h"
#include "run/predict_run.h"
#include "util/csv_text.h"

namespace tn {
namespace {

enum class OutKind { Stdout, Csv, H5 };

OutKind out_kind(const PredictOptions& opt) {
  if (!opt.out) return OutKind::Stdout;
  const std::string ext = std::filesystem::path(*opt.out).extension().string();
  if (ext == ".csv") return OutKind::Csv;
  if (ext == ".h5" || ext == ".hdf5") return OutKind::H5;
  throw UsageError("--out: '" + *opt.out + "' must end in .csv or .h5");
}

std::string csv_number(float v) { return std::isfinite(v) ? fmt::format("{:.9g}", v) : std::string(); }

// Appends ",value" to a CSV line.
void cell(std::string& line, const std::string& value) {
  line += ',';
  line += value;
}

// Cells of the --id columns for sample i.
void id_cells(std::string& line, const std::vector<std::vector<std::string>>& ids, int i) {
  for (const std::vector<std::string>& column : ids) cell(line, csv_field(column[i]));
}

// Sequence runs, one line per series: [series column], [last_<time column>], --id columns,
// horizon, then group_by runs: member, forecast, forecast_normalized; others: forecast, std,
// member_<k> (original units).
std::string forecast_csv(const PredictOutcome& r) {
  const Forecast& f = *r.forecast;
  std::vector<std::string> head;
  if (!f.series_column.empty()) head.push_back(csv_field(f.series_column));
  if (!f.time_column.empty()) head.push_back(csv_field("last_" + f.time_column));
  for (const std::string& c : f.id_columns) head.push_back(csv_field(c));
  head.push_back("horizon");
  if (f.per_group) {
    for (const char* c : {"member", "forecast", "forecast_normalized"}) head.push_back(c);
  } else {
    head.push_back("forecast");
    head.push_back("std");
    for (int m : r.member) head.push_back("member_" + std::to_string(m));
  }
  std::string text;
  for (const std::string& h : head) cell(text, h);
  text = text.substr(1) + '\n';
  for (int i = 0; i < f.N; ++i) {
    std::string line;
    if (!f.series_column.empty()) cell(line, csv_field(f.series[i]));
    if (!f.time_column.empty()) cell(line, csv_field(f.last_time[i]));
    id_cells(line, f.ids, i);
    cell(line, std::to_string(f.horizon));
    if (f.per_group) {
      cell(line, std::to_string(f.member[i]));
      cell(line, csv_number(f.value[i]));
      cell(line, csv_number(f.normalized[i]));
    } else {
      cell(line, csv_number(f.value[i]));
      cell(line, csv_number(f.std[i]));
      for (std::size_t s = 0; s < r.member.size(); ++s) cell(line, csv_number(f.members[s * f.N + i]));
    }
    text += line.substr(1) + '\n';
  }
  return text;
}

// classification: row, [--id columns], prediction, p_<class>..., entropy, mutual_information,
// disagreement, member_<k> (its class); regression: row, [--id columns], prediction[_j], std[_j],
// member_<k>[_j].
std::string to_csv(const PredictOutcome& r) {
  if (r.forecast) return forecast_csv(r);
  const int S = r.p.S, N = r.p.N, O = r.p.O, W = r.c.width;
  // Built with append: GCC 12 misreads `"x" + std::to_string(..)` as overlapping copies (-Wrestrict).
  const auto suffix = [&](int j) { return O == 1 ? std::string() : std::string("_").append(std::to_string(j)); };
  const auto member = [&](int s) { return std::string("member_").append(std::to_string(r.member[static_cast<std::size_t>(s)])); };
  std::string text = "row";
  for (const std::string& c : r.id_columns) cell(text, csv_field(c));
  if (r.run.classification) {
    cell(text, "prediction");
    for (const std::string& name : r.run.class_names) cell(text, csv_field("p_" + name));
    cell(text, "entropy,mutual_information,disagreement");
    for (int s = 0; s < S; ++s) cell(text, member(s));
  } else {
    for (int j = 0; j < O; ++j) cell(text, "prediction" + suffix(j));
    for (int j = 0; j < O; ++j) cell(text, "std" + suffix(j));
    for (int s = 0; s < S; ++s)
      for (int j = 0; j < O; ++j) cell(text, member(s).append(suffix(j)));
  }
  text += '\n';
  std::vector<int> member_class;  // [S, N], -1 for members left out
  if (r.run.classification) {
    member_class.assign(static_cast<std::size_t>(S) * N, -1);
    for (int s : r.c.used) {
      const std::vector<float> q = class_probabilities(r.p, r.run.cfg.loss.type, s);
      for (int i = 0; i < N; ++i)
        member_class[static_cast<std::size_t>(s) * N + i] = argmax(&q[static_cast<std::size_t>(i) * W], W);
    }
  }
  const auto at = [](int i, int width, int j) { return static_cast<std::size_t>(i) * width + j; };
  for (int i = 0; i < N; ++i) {
    text += std::to_string(i);
    id_cells(text, r.ids, i);
    if (r.run.classification) {
      cell(text, r.c.used.empty() ? std::string() : csv_field(r.run.class_names[r.c.label[i]]));
      for (int k = 0; k < W; ++k) cell(text, csv_number(r.c.prediction[at(i, W, k)]));
      cell(text, csv_number(r.c.entropy[i]));
      cell(text, csv_number(r.c.mutual_information[i]));
      cell(text, csv_number(r.c.disagreement[i]));
      for (int s = 0; s < S; ++s) {
        const int k = member_class[at(s, N, i)];
        cell(text, k < 0 ? std::string() : csv_field(r.run.class_names[k]));
      }
    } else {
      for (int j = 0; j < O; ++j) cell(text, csv_number(r.c.prediction[at(i, O, j)]));
      for (int j = 0; j < O; ++j) cell(text, csv_number(r.stats.std[at(i, O, j)]));
      for (int s = 0; s < S; ++s)
        for (int j = 0; j < O; ++j) cell(text, csv_number(r.p.outputs[at(s, N, i) * O + j]));
    }
    text += '\n';
  }
  return text;
}

int predict(const PredictOptions& opt) {
  const OutKind kind = out_kind(opt);
  for (const std::string& id : opt.ids)
    if (id.empty() || id.find('/') != std::string::npos || id == "." || id == "..")
      throw UsageError("--id '" + id + "': name a column of the input; a name with '/' cannot be stored in the HDF5 "
                       "output (/id/<column>), so rename the column");
  if (opt.out) {
    std::vector<NamedFile> inputs = new_data_files("--input", opt.input);
    inputs.push_back({"RUN", opt.run_path});
    check_out_file(*opt.out, opt.force, inputs);
  }
  const std::optional<SelectSpec> select = parse_select_options(opt.select, opt.select_by);
  const PredictOutcome o = predict_stored(opt.run_path, opt.input, parse_combine(opt.combine), opt.threads, opt.ids, select);
  if (kind == OutKind::Stdout) return print_stdout(to_csv(o)) ? kExitOk : kExitIo;
  writing_output([&] {
    if (kind == OutKind::H5) write_prediction_file(*opt.out, prediction_file(o, opt.run_path, opt.input), opt.force);
    else write_text_atomically(*opt.out, to_csv(o), opt.force);
  });
  if (opt.out) spdlog::info("wrote {}", *opt.out);
  return kExitOk;
}

}  // namespace

int run_predict(const PredictOptions& opt) {
  setup_logging(opt.verbosity);
  return with_user_errors([&] { return predict(opt); });
}

}  // namespace tn
