// `turbanet report SWEEP.csv|SWEEP.h5`: the page of a `turbanet sweep --out` table (docs/sweep.md):
// training time, time per member and GFLOP/s against swarm size, one line per config and mode.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "io/sweep_file.h"
#include "report/chart.h"
#include "report/markup.h"
#include "run/errors.h"
#include "run/report_run.h"
#include "run/report_sections.h"

namespace tn {
namespace {

// The fields of one CSV line as turbanet writes them (RFC 4180 quoting, util/csv_text.h).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') f.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) f.emplace_back();
    else if (c != '\r') f.back() += c;
  }
  return f;
}

// The CSV table as the HDF5 one reads: a column is numeric when every cell is a number (or empty: NaN).
SweepTable read_sweep_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("sweep table '" + path + "' cannot be read: it does not exist or is not readable");
  std::string line;
  std::getline(in, line);
  SweepTable t;
  t.columns = csv_fields(line);
  std::vector<std::vector<std::string>> cells(t.columns.size());
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> f = csv_fields(line);
    if (f.size() != t.columns.size())
      throw UsageError(path + ":" + std::to_string(n) + ": " + std::to_string(f.size()) + " fields, the header has " +
                       std::to_string(t.columns.size()) + "; is this the table turbanet sweep --out FILE.csv wrote?");
    for (std::size_t c = 0; c < f.size(); ++c) cells[c].push_back(f[c]);
  }
  for (std::vector<std::string>& col : cells) {
    std::vector<double> num;
    for (const std::string& s : col) {
      std::size_t used = 0;
      double v = NAN;
      try {
        if (!s.empty()) v = std::stod(s, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (!s.empty() && used != s.size()) break;
      num.push_back(v);
    }
    const bool numeric = num.size() == col.size();
    t.num.push_back(numeric ? num : std::vector<double>{});
    t.text.push_back(numeric ? std::vector<std::string>{} : col);
  }
  return t;
}

struct SweepPoint {
  double swarm = 0, median = NAN, lo = NAN, hi = NAN, per_member = NAN, gflops = NAN;
};

// Rows grouped into lines "config (mode)"; throws UsageError naming what the table lacks.
std::map<std::string, std::vector<SweepPoint>> sweep_lines(const SweepTable& t, const std::string& path) {
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < t.columns.size(); ++i) col[t.columns[i]] = i;
  for (const char* need : {"config", "mode", "swarm", "seconds_median"})
    if (!col.count(need))
      throw UsageError(path + ":1: no column '" + need + "': a report draws a run file or the table of turbanet sweep "
                       "--out FILE.csv|FILE.h5");
  const auto text = [&](const char* name, std::size_t r) {
    const std::size_t c = col.at(name);
    return r < t.text[c].size() ? t.text[c][r] : r < t.num[c].size() ? report::value_text(t.num[c][r]) : "";
  };
  const auto num = [&](const char* name, std::size_t r) -> double {
    if (!col.count(name)) return NAN;
    const std::size_t c = col.at(name);
    if (!t.text[c].empty()) throw UsageError(path + ": column '" + name + "' holds text ('" + t.text[c][r] + "'), not numbers");
    return r < t.num[c].size() ? t.num[c][r] : NAN;
  };
  const std::size_t rows = std::max(t.text[col["config"]].size(), t.num[col["config"]].size());
  if (rows == 0) throw UsageError(path + ": the sweep table has no rows");
  std::map<std::string, std::vector<SweepPoint>> lines;
  for (std::size_t r = 0; r < rows; ++r)
    lines[text("config", r) + " (" + text("mode", r) + ")"].push_back(
        {num("swarm", r), num("seconds_median", r), num("seconds_min", r), num("seconds_max", r),
         num("seconds_per_member", r), num("gflops", r)});
  return lines;
}

}  // namespace

std::string sweep_report_html(const std::string& path, std::vector<std::string>* section_ids) {
  const bool csv = std::filesystem::path(path).extension() == ".csv";
  const SweepTable t = csv ? read_sweep_csv(path) : read_sweep_file(path);
  const auto lines = sweep_lines(t, path);
  static const char* const colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
  report::Chart time, member, rate;
  time.title = "Training time against swarm size";
  member.title = "Time per member against swarm size";
  rate.title = "Achieved GFLOP/s against swarm size";
  for (report::Chart* c : {&time, &member, &rate}) c->x.label = "members", c->x.log = c->y.log = true;
  time.y.label = "seconds (median; band: min to max)";
  member.y.label = "seconds per member";
  rate.y.label = "GFLOP/s";
  rate.y.log = false;
  std::size_t i = 0;
  for (const auto& [name, points] : lines) {
    const std::string colour = colours[i++ % 6];
    report::Line tl{{}, {}, colour, 2, 1, name, false}, m{{}, {}, colour, 2, 1, "", false}, g{{}, {}, colour, 2, 1, "", false};
    report::Band b{{}, {}, {}, colour, ""};
    for (const SweepPoint& p : points) {
      tl.x.push_back(p.swarm), tl.y.push_back(p.median);
      b.x.push_back(p.swarm), b.lo.push_back(std::isfinite(p.lo) ? p.lo : p.median), b.hi.push_back(std::isfinite(p.hi) ? p.hi : p.median);
      m.x.push_back(p.swarm), m.y.push_back(std::isfinite(p.per_member) ? p.per_member : p.median / p.swarm);
      g.x.push_back(p.swarm), g.y.push_back(p.gflops);
      time.points.push_back({p.swarm, p.median, colour, false,
                             name + ": " + report::value_text(p.swarm) + " members, " + report::value_text(p.median) + " s"});
    }
    member.keys.push_back({name, colour});
    rate.keys.push_back({name, colour});
    time.bands.push_back(std::move(b));
    time.lines.push_back(std::move(tl));
    member.lines.push_back(std::move(m));
    rate.lines.push_back(std::move(g));
  }
  // The peak rate: the HDF5 file's attribute, or the CSV's column.
  double peak = t.peak_gflops > 0 ? t.peak_gflops : NAN;
  std::vector<std::pair<std::string, std::string>> facts = {{"sweep table", path}};
  if (!t.version.empty()) facts.push_back({"turbanet", t.version});
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    const std::string& k = t.columns[c];
    if (k == "peak_gflops" && !t.num[c].empty()) peak = t.num[c].front();
    if (k == "device" || k == "threads" || k == "kernel" || k == "processes")
      facts.push_back({k, !t.text[c].empty() ? t.text[c].front() : t.num[c].empty() ? "" : report::value_text(t.num[c].front())});
  }
  if (std::isfinite(peak)) {
    rate.rules.push_back({false, peak, "#555", "measured peak", true});
    facts.push_back({"measured peak", report::value_text(peak) + " GFLOP/s"});
  }
  Sections s;
  s.push_back({"run", "Sweep", report::facts(facts)});
  s.push_back({"sweep", "Time against swarm size", report::figures({report::render(time), report::render(member), report::render(rate)})});
  if (section_ids)
    for (const report::Section& x : s) section_ids->push_back(x.id);
  return report::html_page("turbanet report: sweep", path, s);
}

}  // namespace tn
