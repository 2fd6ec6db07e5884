// `turbanet sweep`: training time against swarm size, for the swarm trained at once and the
// same members trained one after another with the same code, with achieved GFLOP/s against
// the backend's measured peak. Times are the training loop only (TrainOutput::train_seconds).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/peak.h"
#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "io/text_file.h"
#include "run/stored_swarm.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "io/h5.h"
#include "io/h5_file.h"
#include "io/run_file.h"
#include "model/flops.h"
#include "train/trainer.h"
#include "turbanet_version.h"

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

struct Point {
  std::string mode;
  int S = 0;
  std::vector<double> seconds;  // per repeat
  double median = 0, min = 0, max = 0;
  TrainingWork work;
  double peak_rss_mb = -1;  // -1: not measurable here
  std::string kernel;
};

// Peak resident memory since the last reset, in MiB (Linux: VmHWM, reset by clear_refs 5).
void reset_peak_rss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}
double peak_rss_mb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The config at swarm size S: --set and --epochs are overrides like any other, so they are
// validated (and per-member values resolved) for each size.
Config config_for(const SweepOptions& opt, int S) {
  std::vector<Override> ov;
  for (const auto& s : opt.set) ov.push_back(parse_override(s));
  if (opt.epochs) ov.push_back({"train.epochs", std::to_string(*opt.epochs)});
  ov.push_back({"swarm.size", std::to_string(S)});
  ov.push_back({"swarm.first_member", "0"});
  return load_config(opt.config_path, ov);
}

class Sweep {
 public:
  Sweep(const SweepOptions& opt, Backend& be) : opt_(opt), be_(be) {}

  Point run(const Config& cfg, const PreparedData& data, const std::string& mode) {
    Point p;
    p.mode = mode;
    p.S = cfg.swarm.size;
    const MemberSets sets = make_member_sets(cfg, data);
    const ModelShape shape = make_model_shape(cfg, data);
    std::vector<std::uint32_t> samples;
    std::vector<OptimizerConfig> opt;
    for (int s = 0; s < p.S; ++s) {
      samples.push_back(sets.size(s));
      opt.push_back(member_optimizer(cfg, s));
    }
    const int batch = std::min<int>(cfg.train.batch_size, static_cast<int>(sets.max_size()));
    p.work = training_work(shape, opt, samples, batch, cfg.train.epochs, data.val.n);
    reset_peak_rss();
    const bool sequential = mode == "sequential";
    const auto once = [&](bool warm_up) {
      if (!sequential) {
        const TrainOutput t = train_swarm(cfg, data, sets, be_, nullptr);
        p.kernel = t.kernel;
        return t.train_seconds;
      }
      double total = 0;
      for (int k = 0; k < (warm_up ? 1 : p.S); ++k) {
        Config one = cfg;
        one.swarm = {1, k};
        const TrainOutput t = train_swarm(one, data, slice_member_sets(sets, k, k + 1), be_, nullptr);
        p.kernel = t.kernel;
        total += t.train_seconds;
      }
      return total;
    };
    once(true);
    for (int r = 0; r < opt_.repeats; ++r) p.seconds.push_back(once(false));
    p.median = median_of(p.seconds);
    p.min = *std::min_element(p.seconds.begin(), p.seconds.end());
    p.max = *std::max_element(p.seconds.begin(), p.seconds.end());
    p.peak_rss_mb = peak_rss_mb();
    return p;
  }

 private:
  const SweepOptions& opt_;
  Backend& be_;
};

const std::vector<std::string>& columns() {
  static const std::vector<std::string> c = {
      "config", "mode", "swarm", "epochs", "repeats", "seconds_median", "seconds_min", "seconds_max",
      "seconds_per_member", "member_samples_per_s", "gflop", "gflops", "peak_fraction", "peak_gflops",
      "peak_rss_mb", "device", "threads", "kernel"};
  return c;
}

struct Row {
  std::vector<std::string> text;  // per column, as written to CSV
  std::vector<double> num;        // per column, NaN for text columns
};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q(1, '"');
  for (char c : s) {
    if (c == '"') q.push_back('"');
    q.push_back(c);
  }
  q.push_back('"');
  return q;
}

Row make_row(const Config& cfg, const Point& p, int repeats, const PeakRate& peak, const Backend& be) {
  const double gflops = p.work.flops / p.median * 1e-9;
  const std::vector<double> num = {
      NAN, NAN, static_cast<double>(p.S), static_cast<double>(cfg.train.epochs), static_cast<double>(repeats),
      p.median, p.min, p.max, p.median / p.S, p.work.member_samples / p.median, p.work.flops * 1e-9, gflops,
      peak.gflops > 0 ? gflops / peak.gflops : NAN, peak.gflops, p.peak_rss_mb, NAN,
      static_cast<double>(be.workers()), NAN};
  Row r;
  r.num = num;
  for (std::size_t i = 0; i < num.size(); ++i) r.text.push_back(fmt::format("{:.6g}", num[i]));
  r.text[0] = cfg.name;
  r.text[1] = p.mode;
  r.text[15] = be.name();
  r.text[17] = p.kernel;
  return r;
}

void write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::string text;
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) text.push_back(',');
      text.append(csv_field(cells[i]));
    }
    text.push_back('\n');
  };
  line(columns());
  for (const Row& r : rows) line(r.text);
  write_text_atomically(path, text);
}

void write_h5(const std::string& path, const std::vector<Row>& rows, const PeakRate& peak) {
  io::write_h5_atomically(path, "sweep file", [&](hid_t file) {
    h5::Handle g = h5::create_group(file, "/sweep");
    h5::set_string_attr(g.get(), "/sweep", "version", TURBANET_VERSION);
    h5::set_double_attr(g.get(), "/sweep", "peak_gflops", peak.gflops);
    h5::set_int_attr(g.get(), "/sweep", "peak_gemm_n", peak.n, H5T_STD_I32LE);
    g.close("group /sweep");
    for (std::size_t c = 0; c < columns().size(); ++c) {
      const bool text = std::isnan(rows.front().num[c]);
      if (text) {
        std::vector<std::string> v;
        for (const Row& r : rows) v.push_back(r.text[c]);
        h5::write_strings(file, "/sweep/" + columns()[c], v);
      } else {
        std::vector<double> v;
        for (const Row& r : rows) v.push_back(r.num[c]);
        h5::write_doubles(file, "/sweep/" + columns()[c], v);
      }
    }
  });
}

std::string table(const std::vector<Row>& rows, const PeakRate& peak, const std::string& device) {
  std::string t = fmt::format("peak: {:.1f} GFLOP/s ({} concurrent {}^3 sgemm on {})\n", peak.gflops, peak.products,
                              peak.n, device);
  t += fmt::format("{:<11}{:>7}{:>12}{:>12}{:>12}{:>12}{:>15}{:>10}{:>8}{:>9}\n", "mode", "swarm", "median s",
                   "min s", "max s", "s/member", "member-smp/s", "GFLOP/s", "%peak", "RSS MiB");
  for (const Row& r : rows) {
    const auto& n = r.num;
    t += fmt::format("{:<11}{:>7}{:>12.4f}{:>12.4f}{:>12.4f}{:>12.5f}{:>15.4g}{:>10.2f}{:>8.1f}{:>9.0f}\n", r.text[1],
                     static_cast<int>(n[2]), n[5], n[6], n[7], n[8], n[9], n[11], 100.0 * n[12], n[14]);
  }
  // Vectorization gain where both modes ran.
  for (const Row& a : rows)
    for (const Row& b : rows)
      if (a.text[1] == "swarm" && b.text[1] == "sequential" && a.num[2] == b.num[2])
        t += fmt::format("swarm {}: {:.1f}x faster than the same members one after another\n",
                         static_cast<int>(a.num[2]), b.num[5] / a.num[5]);
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
  const std::vector<int> sizes = parse_swarm_sizes(opt.swarm);
  // Data and backend once, from the config at the largest size (which validates it).
  const Config probe = config_for(opt, *std::max_element(sizes.begin(), sizes.end()));
  std::string note;
  const std::unique_ptr<Backend> be = make_backend({probe.device, opt.threads, probe.device_index, probe.device_precision == DevicePrecision::Tf32}, &note);
  if (!note.empty()) spdlog::info("{}", note);
  const PreparedData data = prepare_data(load_dataset(probe.data, is_classification(probe.loss.type)), probe.data);
  make_model_shape(probe, data);  // validates
  spdlog::info("turbanet {} sweep | config {} | device {} | threads {} | sizes {}", TURBANET_VERSION,
               opt.config_path, be->name(), be->workers(), fmt::join(sizes, ","));
  const PeakRate peak = measure_peak(*be, opt.peak_n);
  spdlog::info("peak: {:.1f} GFLOP/s ({} concurrent {}^3 sgemm)", peak.gflops, peak.products, peak.n);
  Sweep sw(opt, *be);
  std::vector<Row> rows;
  const std::vector<std::string> modes =
      opt.mode == "both" ? std::vector<std::string>{"swarm", "sequential"} : std::vector<std::string>{opt.mode};
  for (int S : sizes) {
    const Config cfg = config_for(opt, S);
    for (const std::string& mode : modes) {
      const Point p = sw.run(cfg, data, mode);
      rows.push_back(make_row(cfg, p, opt.repeats, peak, *be));
      spdlog::info("{} S={}: median {:.4f} s [{:.4f}, {:.4f}], {:.2f} GFLOP/s", mode, S, p.median, p.min, p.max,
                   rows.back().num[11]);
    }
  }
  std::fputs(table(rows, peak, be->name()).c_str(), stdout);
  std::fflush(stdout);
  try {
    if (kind == OutKind::Csv) write_csv(*opt.out, rows);
    if (kind == OutKind::H5) write_h5(*opt.out, rows, peak);
  } catch (const RunFileError& e) {
    spdlog::error("{}", e.what());
    return kExitIo;
  }
  if (kind != OutKind::None) spdlog::info("wrote {}", *opt.out);
  return kExitOk;
}

}  // namespace

int run_sweep(const SweepOptions& opt) {
  setup_logging(opt.verbosity);
  return with_user_errors([&] { return sweep(opt); });
}

}  // namespace tn
