// `turbanet train`: config → data → backend → training → run file.
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "backend/backend.h"
#include "cli/commands/commands.h"
#include "cli/commands/eval_record.h"
#include "cli/commands/eval_report.h"
#include "cli/progress.h"
#include "data/prepare.h"
#include "data/sequence.h"
#include "io/run_file.h"
#include "train/trainer.h"
#include "turbanet_version.h"

namespace tn {
namespace {

Config resolve_config(const TrainOptions& opt) {
  std::vector<Override> ov;
  for (const auto& s : opt.set) ov.push_back(parse_override(s));
  // Dedicated flags are overrides too, so they are validated and recorded like any key.
  if (opt.swarm) ov.push_back({"swarm.size", std::to_string(*opt.swarm)});
  if (opt.seed) ov.push_back({"seed", std::to_string(*opt.seed)});
  if (opt.out) ov.push_back({"output.path", "'" + *opt.out + "'"});
  return load_config(opt.config_path, ov);
}

// Fails early (before training) when the run file could not be written: a directory that
// cannot be created or written to, or a directory where the file should be.
void check_output_path(const std::string& path, bool force) {
  namespace fs = std::filesystem;
  const fs::path out(path);
  std::error_code ec;
  if (fs::is_directory(out, ec))
    throw ConfigError("output.path: '" + path + "' is a directory; give a file name such as " + path + "/run.h5");
  if (fs::exists(out, ec) && !force)
    throw ConfigError("output.path: " + path + " already exists; pass --force to replace it, or --out PATH to write elsewhere");
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(dir, ec);
  if (ec) throw ConfigError("output.path: cannot create directory '" + dir.string() + "': " + ec.message());
  const fs::path probe = dir / (".turbanet-probe-" + std::to_string(::getpid()));
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) throw ConfigError("output.path: cannot write to directory '" + dir.string() + "': " + std::strerror(errno));
  std::fclose(f);
  fs::remove(probe, ec);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

Array make_array(std::vector<std::uint64_t> shape, std::vector<float> data) {
  return Array{std::move(shape), std::move(data)};
}

// Slices layout-ordered swarm parameters into /params/layer_<i>/<tensor>, each [S, dims...].
std::vector<LayerParams> split_layers(const TrainOutput& t, const std::vector<float>& p) {
  std::vector<LayerParams> layers(t.shape.num_layers());
  const std::uint64_t S = t.layout.S;
  for (int k = 0; k < t.shape.tensors(); ++k) {
    std::vector<std::uint64_t> dims = {S};
    for (std::int64_t d : t.shape.tensor_dims(k)) dims.push_back(static_cast<std::uint64_t>(d));
    const auto begin = p.begin() + t.layout.offset[k];
    layers[t.shape.layer_of(k)].tensors.emplace_back(
        t.shape.tensor_name(k), make_array(std::move(dims), std::vector<float>(begin, begin + S * t.layout.size[k])));
  }
  return layers;
}

// What `train` evaluates at the end: the test split, or the training split without one.
struct FinalEval {
  SwarmPredictions preds;
  const SplitData* split = nullptr;
  Evaluation eval;
  EvalRecord record;
  Predictions predictions;  // what /predictions/<split> stores
};

// group_by: each member on its own group's samples, with the persistence baseline and the
// original units for sequence data.
FinalEval evaluate_final_own(const Config& cfg, const PreparedData& data, const TrainOutput& t) {
  FinalEval f;
  f.split = t.pred_split == "test" ? &data.test : &data.train;
  OwnPredictions p;
  p.S = cfg.swarm.size;
  p.N = t.pred_n;
  p.O = t.shape.outputs();
  p.member = t.pred_member;
  for (int& m : p.member) m -= cfg.swarm.first_member;
  p.outputs = t.pred_own;
  const OwnTargets targets{f.split->y, persistence_forecast(data, *f.split), data.target_mean, data.target_std};
  const OwnEvaluation e = evaluate_own(p, cfg.loss.type, targets);
  f.record = make_own_eval_record(e, f.split->name, f.split->name + " split of " + data.origin,
                                  cfg.swarm.first_member, t.pred_n);
  f.predictions = make_own_predictions(t.pred_split, p, targets, cfg.swarm.first_member, is_classification(cfg.loss.type));
  if (f.split->name != "test")
    spdlog::info("no test split: evaluated on the training split, which the members were trained on (optimistic)");
  spdlog::info("{}", own_eval_summary(f.record));
  spdlog::info("evaluation of each member on its own group's samples:\n{}",
               own_eval_table(f.record, cfg.output.path, data.group_names));
  return f;
}

FinalEval evaluate_final(const Config& cfg, const PreparedData& data, const TrainOutput& t) {
  if (!t.pred_member.empty()) return evaluate_final_own(cfg, data, t);
  FinalEval f;
  f.split = t.pred_split == "test" ? &data.test : &data.train;
  f.preds = {cfg.swarm.size, t.pred_n, t.shape.outputs(), t.pred_members, {}};
  f.eval = evaluate(f.preds, cfg.loss.type, f.split->y, Combine::MeanProb);
  f.record = make_eval_record(f.eval, f.split->name, f.split->name + " split of " + data.origin,
                              Combine::MeanProb, cfg.swarm.first_member, t.pred_n);
  if (f.split->name != "test")
    spdlog::info("no test split: evaluated on the training split, which the members were trained on (optimistic)");
  spdlog::info("{}", eval_summary(f.eval, f.record));
  f.predictions = make_predictions(t.pred_split, f.preds, f.split->y, is_classification(cfg.loss.type));
  return f;
}

MemberData member_data(const Config& cfg, const MemberSets& sets) {
  MemberData m;
  m.per_member = to_string(cfg.data.per_member);
  m.fraction = cfg.data.member_fraction;
  for (int s = 0; s < cfg.swarm.size; ++s) m.sample_count.push_back(static_cast<int>(sets.size(s)));
  m.set_offset.assign(sets.offset.begin(), sets.offset.end());
  m.set_rows.assign(sets.rows.begin(), sets.rows.end());
  m.group_names = sets.names;
  if (cfg.data.per_member == PerMember::GroupBy) m.group_by = cfg.data.group_by;
  for (const MemberValues& v : cfg.member_values) {
    std::vector<double> per(cfg.swarm.size);
    for (int s = 0; s < cfg.swarm.size; ++s) per[s] = v.at(cfg.swarm.first_member + s);
    m.hparams.emplace_back(v.key, per);
  }
  return m;
}

// Each non-empty split's source rows, and its data when small enough to carry along.
std::vector<DataSplit> data_splits(const PreparedData& data) {
  constexpr std::size_t kMaxValues = 1 << 20;
  std::vector<DataSplit> out;
  for (const SplitData* s : {&data.train, &data.val, &data.test}) {
    if (s->n == 0) continue;
    DataSplit d{s->name, s->rows, {}, {}, {}};
    if (s->X.size() <= kMaxValues) {
      const std::uint64_t n = s->n;
      d.X = data.seq_len > 0 ? make_array({n, static_cast<std::uint64_t>(data.seq_len),
                                           static_cast<std::uint64_t>(data.step_features)}, s->X)
                             : make_array({n, static_cast<std::uint64_t>(data.features)}, s->X);
      d.time = s->time;
      d.y = data.num_classes > 0 ? make_array({n}, s->y) : make_array({n, static_cast<std::uint64_t>(data.targets)}, s->y);
    }
    out.push_back(std::move(d));
  }
  return out;
}

RunFile build_run_file(const Config& cfg, const PreparedData& data, const MemberSets& sets,
                       const TrainOutput& t, const Backend& be, double wall, const FinalEval& final_eval) {
  RunFile r;
  const std::uint64_t S = cfg.swarm.size, E = t.epochs;
  r.config_yaml = to_yaml(cfg);
  r.meta = {TURBANET_VERSION, cfg.name, be.name(), t.kernel, be.workers(), cfg.swarm.size,
            cfg.swarm.first_member, t.epochs, t.steps_per_epoch * t.epochs, wall, t.train_seconds,
            utc_now()};
  r.params = split_layers(t, t.params);
  r.init_params = split_layers(t, t.init_params);
  auto hist = [&](const std::vector<float>& h) { return h.empty() ? Array{} : make_array({S, E}, h); };
  r.train_loss = hist(t.train_loss);
  r.val_loss = hist(t.val_loss);
  r.train_accuracy = hist(t.train_acc);
  r.val_accuracy = hist(t.val_acc);
  r.diverged_epoch = t.diverged_epoch;
  r.members = member_data(cfg, sets);
  r.splits = data_splits(data);
  if (!data.mean.empty()) {  // per feature, or per step feature for sequence data
    const std::uint64_t F = data.seq_len > 0 ? data.step_features : data.features, G = data.mean.size() / F;
    const std::vector<std::uint64_t> shape = G > 1 ? std::vector<std::uint64_t>{G, F} : std::vector<std::uint64_t>{F};
    r.normalization.method = to_string(cfg.data.normalize);
    r.normalization.mean = make_array(shape, data.mean);
    r.normalization.std = make_array(shape, data.std);
  }
  if (!data.target_mean.empty()) {
    r.normalization.target_mean = make_array({data.target_mean.size()}, data.target_mean);
    r.normalization.target_std = make_array({data.target_std.size()}, data.target_std);
  }
  const std::string target = cfg.data.sequence.enabled() ? cfg.data.sequence.target
                             : cfg.data.source.type == "csv" ? cfg.data.source.target : "";
  r.data = {data.feature_names, data.class_names, target, data.seq_len, data.step_features};
  r.put(final_eval.predictions);
  r.put(final_eval.record);
  return r;
}

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void log_summary(const Config& cfg, const TrainOutput& t) {
  const int S = cfg.swarm.size, E = t.epochs;
  double loss = 0, acc = 0;
  int finite = 0;
  for (int s = 0; s < S; ++s) {
    const float l = t.train_loss[static_cast<std::size_t>(s) * E + E - 1];
    if (!std::isfinite(l)) continue;
    ++finite;
    loss += l;
    if (!t.train_acc.empty()) acc += t.train_acc[static_cast<std::size_t>(s) * E + E - 1];
  }
  const double steps = static_cast<double>(t.steps_per_epoch) * E;
  spdlog::info("trained {} members x {} steps in {:.3f} s ({:.3g} member-steps/s); final train loss "
               "mean {:.5f}{}", S, static_cast<long>(steps), t.train_seconds, S * steps / t.train_seconds,
               finite ? loss / finite : NAN,
               t.train_acc.empty() || !finite ? "" : fmt::format(", accuracy mean {:.4f}", acc / finite));
}

}  // namespace

int run_train(const TrainOptions& opt) {
  setup_logging(opt.verbosity);
  const auto wall_start = std::chrono::steady_clock::now();
  Config cfg;
  PreparedData data;
  MemberSets sets;
  ChunkPlan plan;
  std::unique_ptr<Backend> be;
  try {
    cfg = resolve_config(opt);
    check_output_path(cfg.output.path, opt.force);
    std::string note;
    be = make_backend({cfg.device, opt.threads, cfg.device_index, cfg.device_precision == DevicePrecision::Tf32}, &note);
    if (!note.empty()) spdlog::info("{}", note);
    const bool classification = is_classification(cfg.loss.type);
    data = prepare_data(load_dataset(cfg.data, classification), cfg.data);
    make_model_shape(cfg, data);  // validates
    sets = make_member_sets(cfg, data);
    plan = plan_training(cfg, data, sets, *be);
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return kExitUsage;
  } catch (const DataError& e) {
    spdlog::error("{}", e.what());
    return kExitUsage;
  } catch (const BackendError& e) {
    spdlog::error("{}", e.what());
    return kExitUsage;
  }
  spdlog::info("turbanet {} | config {} | device {} | threads {}", TURBANET_VERSION, opt.config_path,
               be->name(), be->workers());
  spdlog::info("resolved configuration:\n{}", to_yaml(cfg));
  spdlog::info("data {}: {} train / {} val / {} test samples, {} features{}", data.origin, data.train.n,
               data.val.n, data.test.n, data.features,
               data.num_classes ? fmt::format(", {} classes", data.num_classes) : "");
  if (data.seq_len > 0)
    spdlog::info("sequence windows: {} steps x {} features, horizon {}, stride {}, {} series", data.seq_len,
                 data.step_features, cfg.data.sequence.horizon, cfg.data.sequence.stride,
                 std::max<std::size_t>(1, data.group_names.size()));

  if (!plan.note.empty()) spdlog::info("{}", plan.note);
  Progress progress(cfg.train.epochs, cfg.train.log_every, opt.verbosity == Verbosity::Quiet);
  TrainOutput t = train_swarm_in_chunks(cfg, data, sets, *be, [&](const EpochStats& st) { progress(st); }, plan.chunk);
  progress.finish();
  log_summary(cfg, t);
  spdlog::debug("kernel: {}", t.kernel);
  const auto eval_start = std::chrono::steady_clock::now();
  const FinalEval final_eval = evaluate_final(cfg, data, t);
  const auto write_start = std::chrono::steady_clock::now();
  const double wall = seconds_between(wall_start, write_start);
  try {
    write_run_file(cfg.output.path, build_run_file(cfg, data, sets, t, *be, wall, final_eval));
  } catch (const RunFileError& e) {
    spdlog::error("{}", e.what());
    return kExitIo;
  }
  const auto end = std::chrono::steady_clock::now();
  spdlog::debug("phases: setup and training {:.3f} s (training loop {:.3f} s), evaluation {:.3f} s, "
                "run file {:.3f} s", seconds_between(wall_start, eval_start), t.train_seconds,
                seconds_between(eval_start, write_start), seconds_between(write_start, end));
  spdlog::info("wrote {}", cfg.output.path);
  std::vector<int> diverged;
  for (int s = 0; s < cfg.swarm.size; ++s)
    if (t.diverged_epoch[s] > 0) diverged.push_back(cfg.swarm.first_member + s);
  if (!diverged.empty()) {
    spdlog::error("{} of {} members diverged (members {}); their results are NaN in the run file. "
                  "Lower optimizer.lr or set optimizer.grad_clip", diverged.size(), cfg.swarm.size,
                  fmt::join(diverged, ", "));
    return kExitDiverged;
  }
  return kExitOk;
}

}  // namespace tn
