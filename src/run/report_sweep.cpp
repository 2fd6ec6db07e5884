// `turbanet report SWEEP.csv`: the page of a `turbanet sweep --out FILE.csv` table (docs/sweep.md):
// training time, time per member and GFLOP/s against swarm size, one line per config and mode.
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

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

struct SweepPoint {
  double swarm = 0, median = NAN, lo = NAN, hi = NAN, per_member = NAN, gflops = NAN, peak = NAN;
};

// Reads the table; throws UsageError naming the file, the line and the column when it is not a sweep table.
std::map<std::string, std::vector<SweepPoint>> read_sweep(const std::string& path, std::vector<std::pair<std::string, std::string>>& facts) {
  std::ifstream in(path);
  if (!in) throw UsageError("sweep table '" + path + "' cannot be read: it does not exist or is not readable");
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = csv_fields(line);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need : {"config", "mode", "swarm", "seconds_median"})
    if (!col.count(need))
      throw UsageError(path + ":1: no column '" + need + "': a report draws a run file (.h5) or the CSV table of "
                       "turbanet sweep --out FILE.csv");
  std::map<std::string, std::vector<SweepPoint>> lines;
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const std::vector<std::string> f = csv_fields(line);
    const auto num = [&](const char* name) -> double {
      if (!col.count(name) || col[name] >= f.size() || f[col[name]].empty()) return NAN;
      try {
        return std::stod(f[col[name]]);
      } catch (const std::exception&) {
        throw UsageError(path + ":" + std::to_string(n) + ": column '" + name + "' holds '" + f[col[name]] +
                         "', not a number; is this the table turbanet sweep wrote?");
      }
    };
    if (f.size() < header.size())
      throw UsageError(path + ":" + std::to_string(n) + ": " + std::to_string(f.size()) + " fields, the header has " +
                       std::to_string(header.size()));
    lines[f[col["config"]] + " (" + f[col["mode"]] + ")"].push_back(
        {num("swarm"), num("seconds_median"), num("seconds_min"), num("seconds_max"), num("seconds_per_member"),
         num("gflops"), num("peak_gflops")});
    if (n == 2)  // the machine, as the first row names it
      for (const char* k : {"device", "threads", "kernel", "processes"})
        if (col.count(k)) facts.push_back({k, f[col[k]]});
  }
  if (lines.empty()) throw UsageError(path + ": the sweep table has no rows");
  return lines;
}

}  // namespace

std::string sweep_report_html(const std::string& path, std::vector<std::string>* section_ids) {
  std::vector<std::pair<std::string, std::string>> facts;
  const auto lines = read_sweep(path, facts);
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
  double peak = NAN;
  for (const auto& [name, points] : lines) {
    const std::string colour = colours[i++ % 6];
    report::Line t{{}, {}, colour, 2, 1, name, false}, m{{}, {}, colour, 2, 1, name, false}, g{{}, {}, colour, 2, 1, name, false};
    report::Band b{{}, {}, {}, colour, ""};
    for (const SweepPoint& p : points) {
      t.x.push_back(p.swarm), t.y.push_back(p.median);
      b.x.push_back(p.swarm), b.lo.push_back(std::isfinite(p.lo) ? p.lo : p.median), b.hi.push_back(std::isfinite(p.hi) ? p.hi : p.median);
      m.x.push_back(p.swarm), m.y.push_back(std::isfinite(p.per_member) ? p.per_member : p.median / p.swarm);
      g.x.push_back(p.swarm), g.y.push_back(p.gflops);
      time.points.push_back({p.swarm, p.median, colour, false, name + ": " + report::value_text(p.swarm) + " members, " + report::value_text(p.median) + " s"});
      if (std::isfinite(p.peak)) peak = p.peak;
    }
    time.bands.push_back(std::move(b));
    time.lines.push_back(std::move(t));
    member.lines.push_back(std::move(m));
    rate.lines.push_back(std::move(g));
  }
  if (std::isfinite(peak)) rate.rules.push_back({false, peak, "#555", "measured peak", true});
  std::string body = report::figures({report::render(time), report::render(member), report::render(rate)});
  Sections s;
  facts.insert(facts.begin(), {"sweep table", path});
  s.push_back({"run", "Sweep", report::facts(facts)});
  s.push_back({"sweep", "Time against swarm size", body});
  if (section_ids)
    for (const report::Section& x : s) section_ids->push_back(x.id);
  return report::html_page("turbanet report: sweep", path, s);
}

}  // namespace tn
