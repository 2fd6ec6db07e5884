// Sweep measurements: timed training at each swarm size and mode.
#include "run/sweep_run.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "data/member_sets.h"
#include "data/prepare.h"
#include "model/build.h"
#include "train/architectures.h"
#include "run/shard.h"
#include "run/world/world.h"
#include "train/trainer.h"
#include "turbanet_version.h"

namespace tn {
namespace {

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
Config config_for(const SweepRequest& opt, int S) {
  std::vector<Override> ov;
  for (const auto& s : opt.set) ov.push_back(parse_override(s));
  if (opt.epochs) ov.push_back({"train.epochs", std::to_string(*opt.epochs)});
  ov.push_back({"swarm.size", std::to_string(S)});
  ov.push_back({"swarm.first_member", "0"});
  return load_config(opt.config_path, ov);
}

}  // namespace

std::vector<NamedFile> sweep_inputs(const SweepRequest& req) { return config_inputs(config_for(req, req.sizes.front())); }

namespace {

class Sweep {
 public:
  Sweep(const SweepRequest& opt, Backend& be) : opt_(opt), be_(be) {}

  SweepPoint run(const Config& cfg, const PreparedData& data, const std::string& mode) {
    SweepPoint p;
    p.mode = mode;
    p.S = cfg.swarm.size;
    const MemberSets sets = make_member_sets(cfg, data);
    const int batch = std::min<int>(cfg.train.batch_size, static_cast<int>(sets.max_size()));
    // Each architecture's members with their model (one group when members share one).
    std::vector<ArchitectureGroup> groups;
    if (per_member_architecture(cfg)) {
      groups = architecture_groups(cfg);
    } else {
      groups.push_back({"", cfg.model, {}});
      for (int s = 0; s < p.S; ++s) groups.back().members.push_back(s);
    }
    for (const ArchitectureGroup& g : groups) {
      Config one = cfg;
      one.model = g.model;
      std::vector<std::uint32_t> samples;
      std::vector<OptimizerConfig> opt;
      for (int s : g.members) {
        samples.push_back(sets.size(s));
        opt.push_back(member_optimizer(cfg, cfg.swarm.first_member + s));
      }
      const TrainingWork w = training_work(make_model_shape(one, data), opt, samples, batch, cfg.train.epochs, data.val.n);
      p.work.flops += w.flops;
      p.work.member_samples += w.member_samples;
    }
    reset_peak_rss();
    // Under mpirun, rank r trains its block of the members (as train does, run/shard.h); a
    // point's time is the slowest rank's, every repeat started together. Ranks beyond the
    // swarm size train nothing.
    const World& w = world();
    const int active = std::min(w.size, p.S);
    Config mine = cfg;
    MemberSets my_sets = sets;
    if (w.size > 1 && w.rank < active) restrict_to_shard(mine, my_sets, Shard{w.rank, active});
    const int first = mine.swarm.first_member - cfg.swarm.first_member, count = w.rank < active ? mine.swarm.size : 0;
    const bool sequential = mode == "sequential";
    const auto once = [&](bool warm_up) {
      barrier();
      double seconds = 0;
      if (!sequential && count > 0) {
        const TrainOutput t = train_swarm(mine, data, my_sets, be_, nullptr);
        p.kernel = t.kernel;
        seconds = t.train_seconds;
      }
      for (int k = first; sequential && k < first + (warm_up ? std::min(count, 1) : count); ++k) {
        Config one = cfg;
        one.swarm = {1, k, {}};
        const TrainOutput t = train_swarm(one, data, slice_member_sets(sets, k, k + 1), be_, nullptr);
        p.kernel = t.kernel;
        seconds += t.train_seconds;
      }
      return max_over_ranks(seconds);
    };
    once(true);
    for (int r = 0; r < opt_.repeats; ++r) p.seconds.push_back(once(false));
    p.median = median_of(p.seconds);
    p.min = *std::min_element(p.seconds.begin(), p.seconds.end());
    p.max = *std::max_element(p.seconds.begin(), p.seconds.end());
    p.peak_rss_mb = max_over_ranks(peak_rss_mb());  // the largest process
    return p;
  }

 private:
  const SweepRequest& opt_;
  Backend& be_;
};

SweepRow make_row(const Config& cfg, const SweepPoint& p, int repeats, const PeakRate& peak, const Backend& be) {
  SweepRow r;
  r.config = cfg.name;
  r.mode = p.mode;
  r.swarm = p.S;
  r.epochs = cfg.train.epochs;
  r.repeats = repeats;
  r.seconds_median = p.median;
  r.seconds_min = p.min;
  r.seconds_max = p.max;
  r.seconds_per_member = p.median / p.S;
  r.member_samples_per_s = p.work.member_samples / p.median;
  r.gflop = p.work.flops * 1e-9;
  r.gflops = p.work.flops / p.median * 1e-9;
  r.peak_fraction = peak.gflops > 0 ? r.gflops / peak.gflops : NAN;
  r.peak_gflops = peak.gflops;
  r.peak_rss_mb = p.peak_rss_mb;
  r.device = be.name();
  r.threads = be.workers();
  r.kernel = p.kernel;
  r.processes = world().size;
  return r;
}

}  // namespace

std::string SweepColumn::cell(const SweepRow& r) const { return text ? text(r) : fmt::format("{:.6g}", number(r)); }

const std::vector<SweepColumn>& sweep_columns() {
  using R = const SweepRow&;
  static const std::vector<SweepColumn> c = {
      {"config", [](R r) { return r.config; }},
      {"mode", [](R r) { return r.mode; }},
      {"swarm", nullptr, [](R r) { return double(r.swarm); }},
      {"epochs", nullptr, [](R r) { return double(r.epochs); }},
      {"repeats", nullptr, [](R r) { return double(r.repeats); }},
      {"seconds_median", nullptr, [](R r) { return r.seconds_median; }},
      {"seconds_min", nullptr, [](R r) { return r.seconds_min; }},
      {"seconds_max", nullptr, [](R r) { return r.seconds_max; }},
      {"seconds_per_member", nullptr, [](R r) { return r.seconds_per_member; }},
      {"member_samples_per_s", nullptr, [](R r) { return r.member_samples_per_s; }},
      {"gflop", nullptr, [](R r) { return r.gflop; }},
      {"gflops", nullptr, [](R r) { return r.gflops; }},
      {"peak_fraction", nullptr, [](R r) { return r.peak_fraction; }},
      {"peak_gflops", nullptr, [](R r) { return r.peak_gflops; }},
      {"peak_rss_mb", nullptr, [](R r) { return r.peak_rss_mb; }},
      {"device", [](R r) { return r.device; }},
      {"threads", nullptr, [](R r) { return double(r.threads); }},
      {"kernel", [](R r) { return r.kernel; }},
      {"processes", nullptr, [](R r) { return double(r.processes); }}};
  return c;
}

SweepResult run_sweep_measurements(const SweepRequest& req) {
  const std::vector<int>& sizes = req.sizes;
  // Data and backend once, from the config at the largest size (which validates it).
  const Config probe = config_for(req, *std::max_element(sizes.begin(), sizes.end()));
  std::string note;
  const std::unique_ptr<Backend> be = make_backend(
      {probe.device, req.threads, probe.device_index, probe.device_precision == DevicePrecision::Tf32, world().local_rank},
      &note);
  if (!note.empty()) spdlog::info("{}", note);
  check_generated_data_memory(probe);
  const PreparedData data = prepare_data(load_dataset(probe.data, is_classification(probe.loss.type)), probe.data);
  make_model_shape(probe, data);  // validates
  // Every point is planned as training plans it (on the CPU: the run must fit in memory)
  // before any is measured.
  std::vector<Config> configs;
  for (int S : sizes) {
    configs.push_back(config_for(req, S));
    const Config& cfg = configs.back();
    const MemberSets sets = make_member_sets(cfg, data);
    for (const std::string& mode : req.modes) {
      if (mode != "sequential") {
        plan_training(cfg, data, sets, *be);
        continue;
      }
      Config one = cfg;
      one.swarm = {1, 0, {}};
      plan_training(one, data, slice_member_sets(sets, 0, 1), *be);
    }
  }
  spdlog::info("turbanet {} sweep | config {} | device {} | threads {}{} | sizes {}", TURBANET_VERSION,
               req.config_path, be->name(), be->workers(),
               world().size > 1 ? fmt::format(" per process, {} processes", world().size) : "", fmt::join(sizes, ","));
  SweepResult res;
  res.device = be->name();
  barrier();  // the job's peak: every rank's sgemms at once, summed
  res.peak = measure_peak(*be, req.peak_n);
  res.peak.gflops = sum_over_ranks(res.peak.gflops);
  res.peak.products = static_cast<int>(sum_over_ranks(res.peak.products));
  spdlog::info("peak: {:.1f} GFLOP/s ({} concurrent {}^3 sgemm)", res.peak.gflops, res.peak.products, res.peak.n);
  Sweep sw(req, *be);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const int S = sizes[i];
    const Config& cfg = configs[i];
    for (const std::string& mode : req.modes) {
      const SweepPoint p = sw.run(cfg, data, mode);
      res.rows.push_back(make_row(cfg, p, req.repeats, res.peak, *be));
      spdlog::info("{} S={}: median {:.4f} s [{:.4f}, {:.4f}], {:.2f} GFLOP/s", mode, S, p.median, p.min, p.max,
                   res.rows.back().gflops);
    }
  }
  return res;
}

}  // namespace tn
