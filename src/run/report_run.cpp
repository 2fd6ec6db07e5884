// `turbanet report`: the page of a run file (run/report_run.h) and its first section, the
// run itself (configuration, data, kernel, timings).
#include "run/report_run.h"

#include <cmath>
#include <filesystem>

#include "eval/by_hparam.h"
#include "io/run_file.h"
#include "io/run_file_error.h"
#include "io/sweep_file.h"
#include "io/text_file.h"
#include "report/markup.h"
#include "run/report_sections.h"

namespace tn {
namespace {

// The headline metric of an evaluation: accuracy for classification, rmse (then mae) for
// regression, else the first.
int headline_metric(const EvalRecord& e) {
  for (const char* name : {"accuracy", "rmse", "mae", "mse"})
    for (std::size_t i = 0; i < e.metrics.size(); ++i)
      if (e.metrics[i] == name) return static_cast<int>(i);
  return e.metrics.empty() ? -1 : 0;
}

std::string seconds_text(double s) {
  if (!(s > 0)) return "not recorded";
  if (s < 120) return report::fixed(s, 2) + " s";
  return report::fixed(s / 60, 1) + " min (" + report::fixed(s, 0) + " s)";
}

std::string names_text(const std::vector<std::string>& names, std::size_t shown = 12) {
  std::string t;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) t += (i ? ", " : "") + names[i];
  if (names.size() > shown) t += ", … (" + std::to_string(names.size()) + " in all)";
  return t;
}

}  // namespace

double ReportView::member_metric(int s) const {
  if (!eval || metric < 0 || s < 0) return NAN;
  const std::size_t M = eval->metrics.size(), i = static_cast<std::size_t>(s) * M + static_cast<std::size_t>(metric);
  return i < eval->members.size() ? eval->members[i] : NAN;
}

ReportView report_view(const RunFile& f, const std::string& path) {
  ReportView v;
  v.file = &f;
  v.path = path;
  v.S = f.meta.swarm_size;
  v.E = f.train_loss.shape.size() == 2 ? static_cast<int>(f.train_loss.shape[1]) : 0;
  for (const EvalRecord& e : f.evals)
    if (e.split == "test") v.eval = &e;
  if (!v.eval && !f.evals.empty()) v.eval = &f.evals.front();
  v.classification = !f.data.class_names.empty() || !f.train_accuracy.data.empty() ||
                     (v.eval && v.eval->task == "classification");
  if (!v.eval) return v;
  v.metric = headline_metric(*v.eval);
  if (v.metric < 0) return v;
  v.metric_name = v.eval->metrics[static_cast<std::size_t>(v.metric)];
  v.higher_better = higher_is_better(v.metric_name);
  for (int s = 0; s < v.S; ++s) {
    const double m = v.member_metric(s);
    if (!std::isfinite(m)) continue;
    if (v.best < 0 || (v.higher_better ? m > v.member_metric(v.best) : m < v.member_metric(v.best))) v.best = s;
  }
  return v;
}

void add_run_section(const ReportView& v, Sections& out) {
  const RunFile& f = *v.file;
  const RunMeta& m = f.meta;
  std::string body;
  if (m.interrupted)
    body += report::missing_note("Training was interrupted (SIGINT or SIGTERM) after " + std::to_string(m.epochs) +
                                 " epochs: the curves end there, and the run continues with turbanet train CONFIG "
                                 "--resume " + v.path + ".");
  else if (f.state.present() || !f.state.data_fingerprint.empty())
    body += report::missing_note("This is a checkpoint of " + std::to_string(m.epochs) +
                                 " epochs (it holds /train_state): it has no predictions or evaluations until the "
                                 "run finishes (turbanet train CONFIG --resume " + v.path + ").");
  if (m.shard_count > 0)
    body += report::missing_note("This file is shard " + std::to_string(m.shard_index) + " of " +
                                 std::to_string(m.shard_count) + " (members " + std::to_string(m.first_member) + ".." +
                                 std::to_string(m.first_member + m.swarm_size - 1) + " of " +
                                 std::to_string(m.shard_swarm_size) + "); turbanet merge joins the shards into one run.");
  std::vector<std::pair<std::string, std::string>> run = {
      {"name", m.name},
      {"run file", v.path},
      {"created", m.created},
      {"turbanet", m.version},
      {"members", std::to_string(m.swarm_size) +
                      (m.first_member ? " (global " + std::to_string(m.first_member) + ".." +
                                            std::to_string(m.first_member + m.swarm_size - 1) + ")"
                                      : "")},
      {"epochs trained", std::to_string(m.epochs)},
      {"optimizer steps per member", std::to_string(m.steps)},
      {"device", m.device},
      {"kernel", m.kernel},
      {"threads", std::to_string(m.threads)},
      {"training time", seconds_text(m.train_seconds)},
      {"whole command", seconds_text(m.wall_seconds)}};
  if (m.train_seconds > 0 && m.epochs > 0)
    run.push_back({"member-epochs per second",
                   report::value_text(static_cast<double>(m.swarm_size) * m.epochs / m.train_seconds)});
  body += report::facts(run);

  std::vector<std::pair<std::string, std::string>> data;
  for (const DataSplit& s : f.splits) data.push_back({s.name + " split", std::to_string(s.rows.size()) + " samples"});
  if (!f.data.feature_names.empty())
    data.push_back({f.data.seq_len ? "step features" : "features", names_text(f.data.feature_names)});
  if (f.data.seq_len) data.push_back({"window", std::to_string(f.data.seq_len) + " steps, transform " + f.data.transform});
  if (!f.data.class_names.empty()) data.push_back({"classes", names_text(f.data.class_names)});
  if (!f.data.target.empty()) data.push_back({"target", f.data.target});
  if (!f.members.per_member.empty()) data.push_back({"members' data", f.members.per_member});
  if (!f.members.group_by.empty()) data.push_back({"one member per group of", f.members.group_by});
  data.push_back({"normalization", f.normalization.method.empty() ? "none" : f.normalization.method});
  if (!f.members.init_from_path.empty()) data.push_back({"warm start from", f.members.init_from_path});
  body += "<h3>Data</h3>\n" + report::facts(data);
  body += report::missing_note("The command line is not stored in run files: turbanet train with the configuration "
                               "below (saved as a YAML file) trains this run again.");
  body += report::folded("Configuration (resolved YAML)", f.config_yaml);
  out.push_back({"run", "Run", body});
}

std::string report_html(const RunFile& f, const std::string& path, std::vector<std::string>* section_ids) {
  const ReportView v = report_view(f, path);
  Sections s;
  add_run_section(v, s);
  add_curve_section(v, s);
  add_metric_section(v, s);
  add_hparam_sections(v, s);
  add_output_sections(v, s);
  add_search_section(v, s);
  if (section_ids)
    for (const report::Section& x : s) section_ids->push_back(x.id);
  const RunMeta& m = f.meta;
  return report::html_page("turbanet report: " + m.name,
                           std::to_string(m.swarm_size) + " members, " + std::to_string(m.epochs) + " epochs, " +
                               m.device + ", " + m.created + " (" + path + ")",
                           s);
}

std::string default_report_path(const std::string& run_path) {
  std::filesystem::path p(run_path);
  return p.has_extension() ? p.replace_extension(".html").string() : run_path + ".html";
}

ReportSummary write_report(const std::string& run_path, const std::string& out, bool replace) {
  ReportSummary r;
  std::string html;
  if (std::filesystem::path(run_path).extension() == ".csv") {
    html = sweep_report_html(run_path, &r.sections);
  } else {
    try {
      html = report_html(read_run_records(run_path), run_path, &r.sections);
    } catch (const RunFileError&) {
      if (!is_sweep_file(run_path)) throw;  // a run file's own error; a sweep file is read as one
      html = sweep_report_html(run_path, &r.sections);
    }
  }
  writing_output([&] { write_text_atomically(out, html, replace); });
  r.bytes = html.size();
  return r;
}

}  // namespace tn
