// How many members train at once, and the host memory training takes: the device memory
// plan or the CPU's estimate against the memory available, checked before any work.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "train/host_memory_estimate.h"

#include "math/saturate.h"
#include "train/loop.h"
#include "train/memory_plan.h"

namespace tn {
namespace {
using namespace train_detail;

// Bytes the prepared data hold: every split's inputs, targets, rows, groups and times.
std::int64_t prepared_data_bytes(const PreparedData& data) {
  std::int64_t b = 0;
  for (const SplitData* sp : {&data.train, &data.val, &data.test}) {
    b = sat_add(b, sat_mul(static_cast<std::int64_t>(sp->X.size() + sp->y.size()), 4));
    b = sat_add(b, sat_mul(static_cast<std::int64_t>(sp->rows.size() + sp->group.size()), 4));
    b = sat_add(b, sat_mul(static_cast<std::int64_t>(sp->time.size()), static_cast<std::int64_t>(sizeof(std::string))));
  }
  return b;
}

}  // namespace

HostMemoryEstimate estimate_host_memory(const Config& cfg, const PreparedData& data, const MemberSets& sets,
                                        const Backend& be, bool with_run_file) {
  constexpr std::int64_t f32 = 4, f64 = 8;
  const ModelShape shape = make_model_shape(cfg, data);
  const std::int64_t S = cfg.swarm.size, E = cfg.train.epochs, O = shape.outputs();
  const std::int64_t P = shape.params_per_member();
  const int n = static_cast<int>(sets.max_size());
  const int batch = epoch_batch(cfg, sets);
  const std::int64_t steps = epoch_steps(cfg, sets);
  const bool classification = is_classification(cfg.loss.type), own = !sets.names.empty();
  const SplitData& pred = data.test.n > 0 ? data.test : data.train;
  const std::int64_t N = pred.n;
  const std::int64_t tables = (classification ? 2 : 1) * (data.val.n > 0 ? 2 : 1);  // [S, E] histories
  const std::int64_t K = classification ? std::max<std::int64_t>(2, O) : 0;
  const std::int64_t metrics = 16 + K * K;  // per member: metric values and confusion matrix
  const std::int64_t sets_bytes = sat_mul(static_cast<std::int64_t>(sets.rows.size() + sets.offset.size()), 4);
  // Per sample of the predicted split, the evaluation's results: the ensemble's prediction
  // [N, width], its class, entropy, mutual information and disagreement, and the labels.
  const std::int64_t width = classification ? K : O;
  const std::int64_t sample_results = sat_mul(N, 4 * width + 20);

  HostMemoryEstimate e;
  e.members = S;
  e.loaded_bytes = sat_add(prepared_data_bytes(data), sets_bytes);
  const std::vector<std::string> units = {"the layers' units"}, epochs = {"train.epochs"}, none = {};
  const std::vector<std::string> less_data = {"the data"}, smaller_pred = {"the split predicted at the end (data.split.test)"};
  const HostMemoryPart program{"program and libraries", kDeviceReserveBytes, 0, -1, none};
  const HostMemoryPart loaded{"data", e.loaded_bytes, 0, -1, less_data};
  const std::string hist_shape = "[" + std::to_string(S) + ", " + std::to_string(E) + "]";
  const HostMemoryPart history{"loss histories " + std::to_string(tables) + " x " + hist_shape, 0, sat_mul(E, tables, f32),
                               -1, epochs};
  // Per member predictions [S, N, O] of the split predicted at the end; group_by: each sample
  // only by its own member.
  const std::string pred_shape = "[" + std::to_string(S) + ", " + std::to_string(N) + ", " + std::to_string(O) + "]";
  const std::int64_t pred_member = own ? 0 : sat_mul(N, O, f32), pred_fixed = own ? sat_mul(N, O + 1, f32) : 0;
  const auto predictions = [&](int copies) {
    return HostMemoryPart{"predictions " + std::to_string(copies) + " x " + pred_shape, sat_mul(pred_fixed, copies),
                          sat_mul(pred_member, copies), -1, smaller_pred};
  };
  const auto params = [&](int arrays, const std::string& which) {
    return HostMemoryPart{"parameters" + which + " " + std::to_string(arrays) + " x [" + std::to_string(S) + ", " +
                              std::to_string(P) + "]", 0, sat_mul(P, arrays, f32), -1, units};
  };
  // Per member settings in the training loop: optimizer, schedule, steps, init scale, divergence.
  const std::int64_t settings =
      static_cast<std::int64_t>(sizeof(OptimizerConfig) + sizeof(LrSchedule) + sizeof(long) + 2 * sizeof(float));
  // Early stopping with restore_best keeps each member's best epoch's parameters.
  const int best = cfg.train.early_stopping.enabled() && cfg.train.early_stopping.restore_best ? 1 : 0;

  // Training: the initial and trained parameters, the parameters, gradients and two optimizer
  // states of the loop, each worker's buffers for a block, a chunk of epochs' sample orders and
  // per-member sums (twice: device and host copies), and the predictions at the end.
  {
    // Blocks as the loop makes them: by the backend's cache rule, or a step kernel's lanes
    // (at most 16 members, small models only).
    const int workers = std::max(1, be.workers());
    const std::int64_t activations = model_buffer_bytes_per_member(shape, batch, data.targets);
    const std::int64_t block = std::min<std::int64_t>(S, std::max(be.block_members(cfg.swarm.size, activations), 16));
    const std::int64_t bcap = batch;
    std::int64_t worker = sat_mul(block, sat_add(activations, 5 * f64));
    worker = sat_add(worker, sat_mul(steps, block, 2 * static_cast<std::int64_t>(sizeof(OptStep) + sizeof(int))));
    worker = sat_add(worker, sat_mul(block, bcap, O, f32));
    if (!sets.equal_sizes()) worker = sat_add(worker, sat_mul(block, steps, bcap, 2 * 4));
    if (cfg.train.shuffle) worker = sat_add(worker, sat_mul(n, 4));
    worker = sat_add(worker, 4 << 20);  // the step kernel's and the GEMMs' scratch
    HostMemoryPhase t{"training", {program, loaded}};
    t.parts.push_back(params(6 + best, ", gradients and optimizer state" + std::string(best ? ", best epochs'" : "")));
    t.parts.push_back(history);
    // A chunk of epochs' per-member sums and sample orders, each on the device and the host.
    // Fewer members may mean more epochs per chunk, so the bounds for any swarm are the caps.
    const std::int64_t slots = epochs_per_call(n, cfg.swarm.size, cfg.train.shuffle);
    t.parts.push_back({"per-epoch sums", 2 * kChunkBufferBytes, 2 * kHistKinds * f64, sat_mul(slots, S, 2 * kHistKinds * f64),
                       none});
    if (cfg.train.shuffle)
      t.parts.push_back({"epoch orders", sat_mul(epochs_per_call(n, 1, true), n, 2 * 4), 0, sat_mul(slots, n, 2 * 4),
                         less_data});
    t.parts.push_back({"buffers of " + std::to_string(workers) + " workers", sat_mul(workers, worker), 0, -1,
                       {"train.batch_size", "the layers' units", "--threads"}});
    t.parts.push_back({"member settings", 0, settings, -1, none});
    t.parts.push_back(predictions(1));
    e.phases.push_back(t);
  }
  if (cfg.train.checkpoint.every_epochs > 0) {
    // A checkpoint: the loop's arrays, the state copied to the host (parameters, optimizer
    // state, best epochs') and the checkpoint file's copies of those and of the initial
    // parameters; the histories, their copy and the file's.
    HostMemoryPhase c{"writing a checkpoint", {program, loaded}};
    c.parts.push_back(params(6 + best + 3 + best + 4 + best, ", optimizer state and their checkpoint copies"));
    c.parts.push_back({"loss histories and their checkpoint copies " + std::to_string(3 * tables) + " x " + hist_shape, 0,
                       sat_mul(history.per_member, 3), -1, epochs});
    e.phases.push_back(c);
  }
  if (!with_run_file) return e;
  // The final evaluation: the trained swarm's outputs, their copy evaluated, each member's
  // class probabilities, and every member's metrics.
  {
    HostMemoryPhase v{"evaluating", {program, loaded}};
    v.parts.push_back(params(2, ""));
    v.parts.push_back(history);
    v.parts.push_back(predictions(2));
    if (classification && !own) v.parts.push_back({"class probabilities", 0, sat_mul(N, std::max(O, K), f32), -1, smaller_pred});
    v.parts.push_back({"evaluation of each member", 0, sat_mul(metrics, 2 * f64), -1, none});
    v.parts.push_back({"ensemble results per sample", sample_results, 0, -1, smaller_pred});
    e.phases.push_back(v);
  }
  // The run file: the training's output and evaluation, and the file's own copies of the
  // parameters, histories and predictions, one of them compressed at a time.
  {
    HostMemoryPhase w{"writing the run file", {program, loaded}};
    w.parts.push_back(params(4, " and their run-file copies"));
    w.parts.push_back({"loss histories and their run-file copies " + std::to_string(2 * tables) + " x " + hist_shape, 0,
                       sat_mul(history.per_member, 2), -1, epochs});
    w.parts.push_back(predictions(5));
    w.parts.push_back({"evaluation of each member", 0, sat_mul(metrics, 3 * f64), -1, none});
    w.parts.push_back({"member sets and hyperparameters", sets_bytes,
                       sat_add(8, sat_mul(static_cast<std::int64_t>(cfg.member_values.size()), 2 * f64)), -1, none});
    w.parts.push_back({"the dataset being compressed", 0, std::max({sat_mul(P, f32), pred_member, history.per_member}), -1,
                       none});
    // The evaluation's per-sample results, the /eval and /predictions records made of them and
    // the run file's copies of those (ensemble prediction and statistics, uncertainty,
    // targets), and every split's source rows.
    const std::int64_t rows = static_cast<std::int64_t>(data.train.rows.size() + data.val.rows.size() + data.test.rows.size());
    w.parts.push_back({"ensemble results per sample and their run-file copies",
                       sat_add(sat_mul(N, 8 * width + 24 + 16 * O + 8 * data.targets), sat_mul(rows, 4)) + sample_results,
                       0, -1, smaller_pred});
    e.phases.push_back(w);
  }
  return e;
}

void check_generated_data_memory(const Config& cfg) {
  const SourceConfig& src = cfg.data.source;
  const SequenceConfig& q = cfg.data.sequence;
  std::int64_t bytes = 0;
  std::string key, what, reduce;
  if (src.type == "spirals" || src.type == "moons" || src.type == "sine") {
    // The generated table (features and target) and its prepared splits (the same values and
    // each sample's row), both alive while the splits are made.
    const std::int64_t values = src.type == "sine" ? 2 : 3;
    bytes = sat_mul(src.n, sat_add(values * 4 * 2, 4));
    key = "data.source.n";
    what = std::to_string(src.n) + " samples";
    reduce = "data.source.n";
  } else if (src.type == "random_walk") {
    // Per row: the close price, series and date of the table, and its normalized copy; per
    // sequence window: its steps' features, the target, row, series and date.
    const std::int64_t rows = sat_mul(src.walk.series, src.walk.length);
    bytes = sat_mul(rows, 4 + 4 + static_cast<std::int64_t>(sizeof(std::string)) + 8);
    what = std::to_string(src.walk.series) + " series x " + std::to_string(src.walk.length) + " steps";
    reduce = "data.source.series or data.source.length";  // completed below for sequence windows
    if (q.enabled()) {
      const std::int64_t span = static_cast<std::int64_t>(q.window) + q.horizon;
      const std::int64_t per_series = src.walk.length >= span ? (src.walk.length - span) / q.stride + 1 : 0;
      const std::int64_t windows = sat_mul(src.walk.series, per_series);
      const std::int64_t F = static_cast<std::int64_t>(q.features.size());
      bytes = sat_add(bytes, sat_mul(windows, sat_add(sat_mul(q.window, F, 4), 12 + static_cast<std::int64_t>(sizeof(std::string)))));
      what += " in " + std::to_string(windows) + " windows of " + std::to_string(q.window) + " steps";
      reduce = "data.source.series, data.source.length or data.sequence.window, or raise data.sequence.stride";
    }
    key = "data.source";
  } else {
    return;  // files: read first, then checked with the whole run (plan_training)
  }
  const std::uint64_t available = available_memory();
  const std::int64_t need = sat_add(bytes, kDeviceReserveBytes);
  if (available == 0 || static_cast<std::uint64_t>(need) <= available) return;
  throw ConfigError(key + ": the generated data (" + what + ") need an estimated " + format_bytes(need) + " (" +
                    std::to_string(need) + " bytes) of memory, but " +
                    format_bytes(static_cast<std::int64_t>(std::min<std::uint64_t>(available, kSaturated))) +
                    " is available (MemAvailable); reduce " + reduce);
}

ChunkPlan train_detail::plan_swarm(const Config& cfg, const PreparedData& data, const MemberSets& sets,
                                   const Backend& be, bool with_run_file) {
  const int S = cfg.swarm.size;
  const std::uint64_t budget = be.memory_budget();
  if (budget == 0) {
    // Host memory: the whole run at once, when it fits.
    if (be.host_memory()) {
      const HostMemoryEstimate est = estimate_host_memory(cfg, data, sets, be, with_run_file);
      const std::uint64_t available = available_memory();
      spdlog::debug("memory: an estimated {} while {} ({} bytes), {} available", format_bytes(est.peak()),
                    est.peak_phase().name, est.peak(),
                    format_bytes(static_cast<std::int64_t>(std::min<std::uint64_t>(available, kSaturated))));
      check_host_memory(est, available);
    }
    return ChunkPlan{S, 1, 0, ""};
  }
  const ModelShape shape = make_model_shape(cfg, data);
  const int n = static_cast<int>(sets.max_size()), batch = epoch_batch(cfg, sets);
  const long steps = epoch_steps(cfg, sets);
  // Device-resident data: the training and validation splits, the split predicted at the
  // end, and the shuffled epoch orders (at most 64 MiB, as the trainer allocates them).
  const SplitData& pred = data.test.n > 0 ? data.test : data.train;
  std::int64_t data_bytes = 0;
  for (const SplitData* sp : {&data.train, &data.val, &pred})
    data_bytes += static_cast<std::int64_t>(sp->X.size() + sp->y.size()) * static_cast<std::int64_t>(sizeof(float));
  if (cfg.train.shuffle) data_bytes += std::min<std::int64_t>(64 << 20, 256ll * n * 4) + 4ll * n;
  return plan_chunks(estimate_memory(shape, batch, data.targets, data_bytes, steps), S, budget);
}

}  // namespace tn
