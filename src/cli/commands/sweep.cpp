// `turbanet sweep`: options → the sweep measurements (run/sweep_run.h) → a table on stdout and
// the rows as CSV or HDF5.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "io/run_file_error.h"
#include "io/run_file.h"
#include "io/sweep_file.h"
#include "io/text_file.h"
#include "run/errors.h"
#include "run/sweep_run.h"
#include "turbanet_version.h"
#include "util/csv_text.h"
#include "util/error_report.h"

namespace tn {

std::vector<int> parse_swarm_sizes(const std::string& spec) {
  const auto bad = [&](const std::string& why) {
    return UsageError("--swarm '" + spec + "': " + why +
                      "; expected A..B (powers of two from A: 1..128), A..B:K (steps of K: 8..128:8) or a list (1,3,17)");
  };
  const auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + s + "' is not a positive whole number");
    const int v = std::stoi(s);
    if (v < 1) throw bad("swarm sizes start at 1");
    return v;
  };
  std::vector<int> sizes;
  if (const auto dots = spec.find(".."); dots != std::string::npos) {
    const std::string rest = spec.substr(dots + 2);
    const auto colon = rest.find(':');
    const int a = number(spec.substr(0, dots)), b = number(rest.substr(0, colon));
    if (b < a) throw bad("the range ends below its start");
    if (colon == std::string::npos) {
      for (long long v = a; v <= b; v *= 2) sizes.push_back(static_cast<int>(v));
    } else {
      const int k = number(rest.substr(colon + 1));
      for (long long v = a; v <= b; v += k) sizes.push_back(static_cast<int>(v));
    }
    if (sizes.back() != b) sizes.push_back(b);
  } else {
    std::stringstream in(spec);
    for (std::string item; std::getline(in, item, ',');) sizes.push_back(number(item));
    if (sizes.empty()) throw bad("no sizes");
  }
  return sizes;
}

namespace {

void write_csv(const std::string& path, const std::vector<SweepRow>& rows, bool replace) {
  std::vector<std::string> cells;
  for (const SweepColumn& c : sweep_columns()) cells.push_back(c.name);
  std::string text;
  append_csv_line(text, cells);
  for (const SweepRow& r : rows) {
    cells.clear();
    for (const SweepColumn& c : sweep_columns()) cells.push_back(c.cell(r));
    append_csv_line(text, cells);
  }
  write_text_atomically(path, text, replace);
}

// The rows as the sweep file's columns, text or numbers as each column is.
void write_h5(const std::string& path, const SweepResult& res, bool replace) {
  SweepTable t{TURBANET_VERSION, res.peak.gflops, res.peak.n, {}, {}, {}};
  for (const SweepColumn& c : sweep_columns()) {
    t.columns.push_back(c.name);
    std::vector<std::string> text;
    std::vector<double> num;
    for (const SweepRow& r : res.rows) {
      if (c.text) text.push_back(c.text(r));
      else num.push_back(c.number(r));
    }
    t.text.push_back(std::move(text));
    t.num.push_back(std::move(num));
  }
  write_sweep_file(path, t, replace);
}

std::string table(const std::vector<SweepRow>& rows, const PeakRate& peak, const std::string& device) {
  std::string t = fmt::format("peak: {:.1f} GFLOP/s ({} concurrent {}^3 sgemm on {})\n", peak.gflops, peak.products,
                              peak.n, device);
  t += fmt::format("{:<11}{:>7}{:>12}{:>12}{:>12}{:>12}{:>15}{:>10}{:>8}{:>9}\n", "mode", "swarm", "median s",
                   "min s", "max s", "s/member", "member-smp/s", "GFLOP/s", "%peak", "RSS MiB");
  for (const SweepRow& r : rows)
    t += fmt::format("{:<11}{:>7}{:>12.4f}{:>12.4f}{:>12.4f}{:>12.5f}{:>15.4g}{:>10.2f}{:>8.1f}{:>9.0f}\n", r.mode,
                     r.swarm, r.seconds_median, r.seconds_min, r.seconds_max, r.seconds_per_member,
                     r.member_samples_per_s, r.gflops, 100.0 * r.peak_fraction, r.peak_rss_mb);
  // What ran each point (the step kernel and its SIMD target), once per distinct kernel.
  std::vector<std::pair<std::string, std::string>> kernels;  // kernel, "mode swarm" points
  for (const SweepRow& r : rows) {
    const std::string point = fmt::format("{} {}", r.mode, r.swarm);
    auto it = std::find_if(kernels.begin(), kernels.end(), [&](const auto& k) { return k.first == r.kernel; });
    if (it == kernels.end()) kernels.emplace_back(r.kernel, point);
    else it->second += ", " + point;
  }
  for (const auto& [kernel, points] : kernels) t += fmt::format("kernel: {} ({})\n", kernel, points);
  if (const int P = rows.front().processes; P > 1)
    t += fmt::format("processes: {} (mpirun), each training its block of every point's members; the kernel is rank "
                     "0's, the times the slowest rank's, the RSS the largest process's\n", P);
  // Vectorization gain where both modes ran.
  for (const SweepRow& a : rows)
    for (const SweepRow& b : rows)
      if (a.mode == "swarm" && b.mode == "sequential" && a.swarm == b.swarm)
        t += fmt::format("swarm {}: {:.1f}x faster than the same members one after another\n", a.swarm,
                         b.seconds_median / a.seconds_median);
  return t;
}

enum class OutKind { None, Csv, H5 };

OutKind out_kind(const SweepOptions& opt) {
  if (!opt.out) return OutKind::None;
  const std::string ext = std::filesystem::path(*opt.out).extension().string();
  if (ext == ".csv") return OutKind::Csv;
  if (ext == ".h5" || ext == ".hdf5") return OutKind::H5;
  throw UsageError("--out: '" + *opt.out + "' must end in .csv or .h5");
}

int sweep(const SweepOptions& opt) {
  if (opt.mode != "swarm" && opt.mode != "sequential" && opt.mode != "both")
    throw UsageError("--mode: unknown mode '" + opt.mode + "'; allowed: swarm, sequential, both");
  if (opt.repeats < 1) throw UsageError("--repeats must be at least 1");
  const OutKind kind = out_kind(opt);
  SweepRequest req{opt.config_path, parse_swarm_sizes(opt.swarm), {}, opt.repeats, opt.epochs, opt.set,
                   opt.threads, opt.peak_n};
  req.modes = opt.mode == "both" ? std::vector<std::string>{"swarm", "sequential"} : std::vector<std::string>{opt.mode};
  if (opt.out) check_out_file(*opt.out, opt.force, sweep_inputs(req));
  const SweepResult res = run_sweep_measurements(req);
  if (world().rank > 0) return kExitOk;  // rank 0 prints and writes the job's table
  if (!print_stdout(table(res.rows, res.peak, res.device))) return kExitIo;
  writing_output([&] {
    if (kind == OutKind::Csv) write_csv(*opt.out, res.rows, opt.force);
    if (kind == OutKind::H5) write_h5(*opt.out, res, opt.force);
  });
  if (kind != OutKind::None) spdlog::info("wrote {}", *opt.out);
  return kExitOk;
}

}  // namespace

// Under mpirun every rank runs the sweep, each training its block of every point's members
// (run/sweep_run.h); a rank that fails ends the job, since the others wait for it between points.
int run_sweep(const SweepOptions& opt) {
  setup_logging(opt.verbosity);
  const World& w = world();
  if (w.size > 1) log_as_rank(w);
  int code = kExitIo;
  try {
    code = with_user_errors([&] { return sweep(opt); });
  } catch (const std::exception& e) {  // internal
    if (w.size == 1) throw;  // cli/main.cpp reports it
    code = report_failure(e);
  }
  if (w.size > 1 && code != kExitOk) abort_world(code);
  return code;
}

}  // namespace tn
