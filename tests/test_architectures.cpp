// Per-member architectures: the config keys (model.hidden, model.layers.<i>.units, .activation,
// .type) with their errors and YAML round trip; member k of a mixed swarm is bitwise member k
// trained alone with its architecture written as plain numbers (1 and 2 threads, bootstrap
// sets, a grid with the learning rate, an LSTM/GRU swarm, dropout); the run file stores one group
// per architecture that eval and predict read back to the training's predictions; interrupted
// and checkpointed runs resume bitwise. Export is checked with onnxruntime in test_export.cpp.
#include <doctest/doctest.h>

#include <atomic>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "cli/commands/commands.h"
#include "config_test_util.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "run/stored_predict.h"
#include "train/architectures.h"
#include "train/search.h"
#include "train/trainer.h"
#include "train_test_util.h"
#include "run/train_run.h"

using namespace tn;
using tn::test::error_of;
namespace fs = std::filesystem;

namespace {

const std::string kMixed =
    "name: mixed\nseed: 5\nswarm: {size: 12}\n"
    "model:\n  hidden: {values: [[6], [10, 4], []]}\n  layers:\n"
    "    - {units: 8, activation: {values: [tanh, relu]}}\n    - {units: 2}\n"
    "loss: cross_entropy\noptimizer: {type: adam, lr: {values: [0.02, 0.005]}}\n"
    "data:\n  source: {type: spirals, n: 120}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n"
    "  per_member: bootstrap\ntrain: {epochs: 6, batch_size: 16}\ngrid: [model.hidden, optimizer.lr]\n";

const std::string kWidths =
    "name: widths\nseed: 5\nswarm: {size: 6}\n"
    "model:\n  layers:\n    - {units: {values: [3, 7, 12]}, activation: tanh}\n    - {units: 5, activation: relu}\n"
    "    - {units: 2}\nloss: cross_entropy\noptimizer: {type: sgd, lr: 0.1, momentum: 0.9}\n"
    "data:\n  source: {type: spirals, n: 100}\n  split: {train: 0.7, val: 0.0, test: 0.3}\n"
    "  per_member: {subsample: {fraction: 0.7}}\ntrain: {epochs: 5, batch_size: 8}\n";

struct Run {
  Config cfg;
  PreparedData data;
  TrainOutput out;
};

Run train(const std::string& yaml, int threads) {
  Run r{parse_config(yaml, "test"), {}, {}};
  r.data = prepare_data(load_dataset(r.cfg.data, is_classification(r.cfg.loss.type)), r.cfg.data);
  CpuBackend be(threads);
  r.out = train_swarm(r.cfg, r.data, make_member_sets(r.cfg, r.data), be, nullptr);
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Member s (local) of a [S, per] array.
std::vector<float> row(const std::vector<float>& v, int S, int s) {
  const std::size_t per = v.size() / static_cast<std::size_t>(S);
  return {v.begin() + static_cast<std::ptrdiff_t>(s * per), v.begin() + static_cast<std::ptrdiff_t>((s + 1) * per)};
}

// Member k of the swarm trained alone: swarm {size: 1, first_member: k}, its model written
// out (member_model) and its per-member values as plain numbers.
Run alone(const Config& whole, int k) {
  Config one = whole;
  one.swarm.size = 1;
  one.swarm.first_member = k;
  one.model = member_model(whole, k);
  one.grid.clear();
  one.member_values.clear();
  one.optimizer = member_optimizer(whole, k);
  std::string yaml = to_yaml(one);
  Run r{parse_config(yaml, "alone"), {}, {}};
  REQUIRE_FALSE(per_member_architecture(r.cfg));
  r.data = prepare_data(load_dataset(r.cfg.data, is_classification(r.cfg.loss.type)), r.cfg.data);
  CpuBackend be(1);
  r.out = train_swarm(r.cfg, r.data, make_member_sets(r.cfg, r.data), be, nullptr);
  return r;
}

// Member k's parameters in the mixed swarm's result, tensor by tensor.
std::vector<float> mixed_params(const TrainOutput& t, int k, bool init = false) {
  for (const ArchitectureOutput& a : t.architectures)
    for (std::size_t i = 0; i < a.members.size(); ++i)
      if (a.members[i] == k) {
        std::vector<float> r;
        for (std::size_t j = 0; j < a.layout.size.size(); ++j) {
          const float* base = (init ? a.init_params : a.params).data() + a.layout.at(static_cast<int>(j), static_cast<int>(i));
          r.insert(r.end(), base, base + a.layout.size[j]);
        }
        return r;
      }
  return {};
}

}  // namespace

TEST_CASE("architectures config: model.hidden, per-layer units, activation and type, and the YAML round trip") {
  const Config c = parse_config(kMixed, "test");
  REQUIRE(per_member_architecture(c));
  // member k: hidden (k / 2) % 3 (grid, first key slowest), activation k % 2 (not in the grid).
  CHECK(architecture_text(member_model(c, 0)) == "dense 6 tanh, dense 2");
  CHECK(architecture_text(member_model(c, 1)) == "dense 6 relu, dense 2");
  CHECK(architecture_text(member_model(c, 2)) == "dense 10 tanh, dense 4 tanh, dense 2");
  CHECK(architecture_text(member_model(c, 5)) == "dense 2");
  CHECK(member_optimizer(c, 3).lr == 0.005);
  const std::vector<ArchitectureGroup> groups = architecture_groups(c);
  REQUIRE(groups.size() == 5);  // no hidden layer: the activation does not matter
  CHECK(groups[4].members == std::vector<int>{4, 5, 10, 11});
  CHECK(groups[0].members == std::vector<int>{0, 6});
  const Config back = parse_config(to_yaml(c), "again");
  CHECK(config_differences(c, back).empty());
  for (int k = 0; k < 12; ++k) CHECK(architecture_text(member_model(back, k)) == architecture_text(member_model(c, k)));
  const Config w = parse_config(kWidths, "test");
  CHECK(architecture_text(member_model(w, 2)) == "dense 12 tanh, dense 5 relu, dense 2");
  CHECK(config_differences(w, parse_config(to_yaml(w), "again")).empty());
  const Config rec = tn::test::parse(
      "model:\n  layers:\n    - {type: {values: [lstm, gru]}, units: {values: [4, 6]}}\n    - {units: 1}\n"
      "loss: mse\nswarm: {size: 4}\ndata:\n  source: {type: random_walk, series: 1, length: 60}\n"
      "  per_member: shared\n  sequence: {window: 5, target: close}\n");
  CHECK(architecture_text(member_model(rec, 1)) == "gru 6, dense 1");
  CHECK(config_differences(rec, parse_config(to_yaml(rec), "again")).empty());
}

TEST_CASE("architectures config: errors say what, where and how to fix it") {
  const std::string base = "data:\n  source: spirals\nswarm: {size: 4}\n";
  CHECK_HAS(error_of("model:\n  layers:\n    - {units: 8}\n    - {units: {values: [2, 3]}}\n" + base),
            "output layer's units cannot vary per member");
  CHECK_HAS(error_of("model:\n  hidden: {values: [[4]]}\n  layers:\n    - {units: 2}\n" + base),
            "give model.layers one");
  CHECK_HAS(error_of("model:\n  hidden: {values: [[4], 8]}\n  layers:\n    - {units: 8}\n    - {units: 2}\n" + base),
            "a list of unit counts");
  CHECK_HAS(error_of("model:\n  hidden: {values: [[4], [0]]}\n  layers:\n    - {units: 8}\n    - {units: 2}\n" + base),
            "model.hidden");
  CHECK_HAS(error_of("model:\n  hidden: {values: [[4]]}\n  layers:\n    - {units: {values: [3, 5]}}\n    - {units: 2}\n" + base),
            "cannot vary per member too");
  CHECK_HAS(error_of("model:\n  layers:\n    - {units: 8, activation: {values: [relu, tahn]}}\n    - {units: 2}\n" + base),
            "tanh");
  CHECK_HAS(error_of("model:\n  layers:\n    - {units: {values: [2.5]}}\n    - {units: 2}\n" + base), "units");
  CHECK_HAS(error_of("model:\n  layers:\n    - {units: {values: [4, 8]}}\n    - {units: 2}\n" + base +
                     "train: {epochs: 6}\nsearch: {type: pbt, every_epochs: 2, resample_probability: 0, perturb: {optimizer.lr: [0.8, 1.25]}}\n"),
            "use search: {type: halving");
  CHECK_HAS(error_of("model:\n  layers:\n    - {units: {values: [4, 8, 16]}}\n    - {units: 2}\n" + base),
            "do not divide the swarm");
  CHECK_HAS(error_of("model:\n  hidden: {values: [[4]]}\n  layers:\n    - {units: 8}\n    - {units: 8}\n    - {units: 2}\n" + base),
            "give only one (the template)");
  CHECK_HAS(error_of("model:\n  layers:\n    - {units: {values: [4, 8]}}\n    - {units: 2}\n" + base +
                     "optimizer: {lr: {values: [0.1, 0.01]}}\ngrid: [model.hiden, optimizer.lr]\n"),
            "did you mean 'model.hidden'");
  // One value for every member is an ordinary swarm, its model written out.
  const Config one = tn::test::parse("model:\n  hidden: {values: [[16, 16]]}\n  layers:\n    - {units: 8, activation: relu}\n"
                                     "    - {units: 2}\n" + base);
  CHECK_FALSE(per_member_architecture(one));
  CHECK(architecture_text(one.model) == "dense 16 relu, dense 16 relu, dense 2");
}

TEST_CASE("architectures: member k of a mixed swarm is bitwise member k trained alone, on 1 and 2 threads") {
  // With dropout on the hidden layers too: its masks follow the member's global index.
  const std::string dropout = std::string(kMixed).replace(kMixed.find("relu]}}"), 7, "relu]}, dropout: 0.3}");
  for (const std::string* yaml : {&kMixed, &kWidths, &dropout}) {
    const Run one = train(*yaml, 1), two = train(*yaml, 2);
    const int S = one.cfg.swarm.size;
    REQUIRE(one.out.architectures.size() == (yaml == &kWidths ? 3u : 5u));
    CHECK(same_bits(one.out.train_loss, two.out.train_loss));
    CHECK(same_bits(one.out.pred_members, two.out.pred_members));
    for (int k = 0; k < S; ++k) {
      CAPTURE(k);
      CHECK(same_bits(mixed_params(one.out, k), mixed_params(two.out, k)));
      const Run a = alone(one.cfg, k);
      CHECK(same_bits(mixed_params(one.out, k, true), a.out.init_params));
      CHECK(same_bits(mixed_params(one.out, k), a.out.params));
      CHECK(same_bits(row(one.out.train_loss, S, k), a.out.train_loss));
      CHECK(same_bits(row(one.out.val_loss, S, k), a.out.val_loss));
      CHECK(same_bits(row(one.out.pred_members, S, k), a.out.pred_members));
    }
  }
}

TEST_CASE("architectures: recurrent layers of both types and widths in one swarm equal each alone") {
  const std::string yaml =
      "name: rec\nseed: 3\nswarm: {size: 4}\nmodel:\n  layers:\n"
      "    - {type: {values: [lstm, gru]}, units: {values: [3, 3, 5, 5]}}\n    - {units: 1}\n"
      "loss: mse\noptimizer: {type: adam, lr: 0.01}\n"
      "data:\n  source: {type: random_walk, series: 1, length: 120}\n  per_member: bootstrap\n"
      "  split: {train: 0.6, val: 0.2, test: 0.2}\n  normalize: standard\n"
      "  sequence: {window: 6, target: close}\ntrain: {epochs: 3, batch_size: 16}\n";
  const Run r = train(yaml, 2);
  REQUIRE(r.out.architectures.size() == 4);
  for (int k = 0; k < 4; ++k) {
    CAPTURE(k);
    const Run a = alone(r.cfg, k);
    CHECK(same_bits(mixed_params(r.out, k), a.out.params));
    CHECK(same_bits(row(r.out.pred_members, 4, k), a.out.pred_members));
  }
}

TEST_CASE("architectures: the run file has one group per architecture, and eval and predict read it back") {
  using namespace evaltest;
  const fs::path run = train_run("architectures", kMixed);
  const RunFile f = read_run_file(run.string());
  REQUIRE(f.architectures.size() == 5);
  CHECK(f.params.empty());
  CHECK(f.architectures[0].name == "dense 6 tanh, dense 2");
  CHECK(f.architectures[0].members == std::vector<int>{0, 6});
  CHECK(f.architectures[0].params[0]["W"].shape == std::vector<std::uint64_t>{2, 2, 6});
  CHECK(f.members.architecture == std::vector<int>{0, 1, 2, 3, 4, 4, 0, 1, 2, 3, 4, 4});
  bool hidden = false;
  for (const auto& [key, values] : f.members.hparam_text)
    if (key == "model.hidden") hidden = values[2] == "[10, 4]";
  CHECK(hidden);
  // Every member's predictions from the stored parameters are the training's, bitwise.
  const StoredSwarm s = load_swarm_with_own_data(run.string());
  REQUIRE(s.architectures.size() == 5);
  const Inputs in = own_split(s, std::string("test"));
  const SwarmPredictions p = run_swarm(s, in, 2);
  CHECK(same_bits(p.outputs, f.find_predictions("test")->members.data));
  // eval groups by each architecture key and by the whole architecture.
  tn::EvalOptions o;
  o.run_path = run.string();
  o.json = true;
  o.combine = "mean_logit";
  const std::string out = capture(STDOUT_FILENO, [&] { CHECK(tn::run_eval(o) == tn::kExitOk); });
  CHECK_HAS(out, "\"model.hidden\"");
  CHECK_HAS(out, "\"architecture\"");
  CHECK_HAS(out, "dense 10 relu, dense 4 relu, dense 2");
  // Each architecture's own ensemble under mean_logit: the argmax of its members' summed
  // log-probabilities (a softmax's logits up to a constant per member).
  const nlohmann::json j = nlohmann::json::parse(out);
  const Predictions& pr = *f.find_predictions("test");
  const std::size_t N = pr.members.shape[1], O = pr.members.shape[2];
  int checked = 0;
  for (const nlohmann::json& g : j["hparams"]["by_value"]["architecture"]) {
    std::vector<int> members;
    for (const ArchitectureParams& a : f.architectures)
      if (a.name == g["value"].get<std::string>()) members = a.members;
    REQUIRE_FALSE(members.empty());
    int correct = 0;
    for (std::size_t i = 0; i < N; ++i) {
      std::vector<double> p(O, 0.0);
      for (int k : members)
        for (std::size_t o = 0; o < O; ++o) p[o] += std::log(pr.members.data[(static_cast<std::size_t>(k) * N + i) * O + o]);
      correct += static_cast<float>(std::max_element(p.begin(), p.end()) - p.begin()) == pr.targets.data[i];
    }
    CHECK(g["ensemble"]["accuracy"].get<double>() == doctest::Approx(static_cast<double>(correct) / N));
    ++checked;
  }
  CHECK(checked == 5);
  // The config as new data: its grid over model keys does not stand in the way.
  tn::EvalOptions d = eval_opts(run);
  d.data = write_file("architectures-data.yaml", kMixed).string();
  CHECK(tn::run_eval(d) == tn::kExitOk);
}

namespace {

// Trains `yaml` into `out` with TrainingRun; stop_at_poll > 0 stops it at that poll of the
// stop callback (polled between epochs and steps by every group), `resume` continues a file.
TrainResult train_file(const std::string& yaml, const fs::path& out, int threads, int stop_at_poll = 0,
                       const std::string& resume = "") {
  const Config cfg = parse_config(yaml, "test", {{"output.path", "'" + out.string() + "'"}});
  TrainingRun run(cfg, threads, true, std::chrono::steady_clock::now(), resume);
  std::atomic<int> polls{0};
  TrainCallbacks cb;
  if (stop_at_poll > 0) cb.stop = [&] { return ++polls >= stop_at_poll; };
  return run.run(cb);
}

bool same_arrays(const Array& a, const Array& b) { return a.shape == b.shape && same_bits(a.data, b.data); }

void check_same_run(const RunFile& a, const RunFile& b) {
  REQUIRE(a.architectures.size() == b.architectures.size());
  for (std::size_t i = 0; i < a.architectures.size(); ++i) {
    CAPTURE(i);
    CHECK(a.architectures[i].members == b.architectures[i].members);
    for (std::size_t l = 0; l < a.architectures[i].params.size(); ++l)
      for (const std::string t : {"W", "b"})
        CHECK(same_arrays(a.architectures[i].params[l][t], b.architectures[i].params[l][t]));
  }
  CHECK(same_arrays(a.train_loss, b.train_loss));
  CHECK(same_arrays(a.val_loss, b.val_loss));
  CHECK(same_arrays(a.find_predictions("test")->members, b.find_predictions("test")->members));
  CHECK(a.stopped_epoch == b.stopped_epoch);
}

}  // namespace

// kMixed with another `train:` line.
std::string mixed_with(const std::string& train) {
  const std::string line = "train: {epochs: 6, batch_size: 16}\n";
  return std::string(kMixed).replace(kMixed.find(line), line.size(), train + "\n");
}

TEST_CASE("architectures: an interrupted mixed run resumes bitwise, each architecture from its own epoch and step") {
  using namespace evaltest;
  const std::string yaml =
      mixed_with("train: {epochs: 6, batch_size: 16, early_stopping: {metric: val_loss, patience: 2}}");
  const fs::path whole = scratch("arch-whole.h5"), cut = scratch("arch-cut.h5"), resumed = scratch("arch-resumed.h5");
  REQUIRE_FALSE(train_file(yaml, whole, 2).out.interrupted);
  const RunFile ref = read_run_file(whole.string());
  for (const int poll : {1, 7, 40}) {
    CAPTURE(poll);
    for (const int threads : {1, 2}) {
      CAPTURE(threads);
      const TrainResult r = train_file(yaml, cut, threads, poll);
      REQUIRE(r.out.interrupted);
      const RunFile f = read_run_file(cut.string());
      REQUIRE(f.state.architectures.size() == f.architectures.size());
      CHECK(f.meta.interrupted);
      const TrainResult again = train_file(yaml, resumed, 3 - threads, 0, cut.string());
      CHECK_FALSE(again.out.interrupted);
      check_same_run(read_run_file(resumed.string()), ref);
    }
  }
}

TEST_CASE("architectures: periodic checkpoints hold every architecture's state, and resume from them") {
  using namespace evaltest;
  const fs::path ck = scratch("arch-every.ckpt.h5"), whole = scratch("arch-every.h5"), again = scratch("arch-every-2.h5");
  const std::string yaml = mixed_with("train: {epochs: 6, batch_size: 16, checkpoint: {every_epochs: 4, path: '" +
                                      ck.string() + "'}}");
  fs::remove(ck);
  const TrainResult r = train_file(yaml, whole, 2);
  CHECK(r.checkpoint == ck.string());
  const RunFile f = read_run_file(ck.string());
  REQUIRE(f.state.architectures.size() == 5);
  for (const TrainState& st : f.state.architectures) CHECK(st.epoch == 6);
  train_file(yaml, again, 1, 0, ck.string());
  check_same_run(read_run_file(again.string()), read_run_file(whole.string()));
}

TEST_CASE("architectures: halving cuts the whole swarm across architectures, its survivors bitwise the run without search") {
  using namespace evaltest;
  const std::string plain = mixed_with("train: {epochs: 6, batch_size: 16}");
  const std::string yaml = plain + "search: {type: halving, rungs: [2, 4], keep: 0.34, metric: val_loss}\n";
  const Run ref = train(plain, 1), cut = train(yaml, 2);
  const int S = ref.cfg.swarm.size, E = ref.out.epochs;
  REQUIRE(cut.out.search_epochs == std::vector<int>{2, 4});
  // The cut, recomputed from the run without search (the same histories up to each rung).
  std::vector<char> candidate(static_cast<std::size_t>(S), 1);
  std::vector<int> rung(static_cast<std::size_t>(S), 0);
  for (int r = 0; r < 2; ++r) {
    const int e = cut.out.search_epochs[static_cast<std::size_t>(r)];
    std::vector<double> v(static_cast<std::size_t>(S));
    for (int k = 0; k < S; ++k) v[k] = ref.out.val_loss[static_cast<std::size_t>(k) * E + e - 1];
    for (int k : halving_cut(v, candidate, false, 0.34)) {
      candidate[k] = 0;
      rung[k] = r + 1;
    }
  }
  CHECK(cut.out.search_rung == rung);
  CHECK(std::count(rung.begin(), rung.end(), 0) == 2);  // 12 -> ceil(0.34 * 12) = 5 -> ceil(0.34 * 5) = 2
  for (int k = 0; k < S; ++k) {
    CAPTURE(k);
    if (rung[k] == 0) {
      CHECK(same_bits(mixed_params(cut.out, k), mixed_params(ref.out, k)));
      CHECK(same_bits(row(cut.out.pred_members, S, k), row(ref.out.pred_members, S, k)));
    } else {
      CHECK(cut.out.stopped_epoch[k] == cut.out.search_epochs[static_cast<std::size_t>(rung[k] - 1)]);
      CHECK(std::isnan(cut.out.train_loss[static_cast<std::size_t>(k) * E + E - 1]));
    }
  }
  // With periodic checkpoints, the finished run file holds no training state (a segment's stop
  // at a rung is not an interruption), and the result is the same.
  const fs::path ck = scratch("arch-halving-every.h5");
  train_file(std::string(yaml).replace(yaml.find("batch_size: 16}"), 15,
                                       "batch_size: 16, checkpoint: {every_epochs: 3, path: '" +
                                           scratch("arch-halving-every.ckpt.h5").string() + "'}}"),
             ck, 2);
  const RunFile every = read_run_file(ck.string());
  CHECK_FALSE(every.state.present());
  CHECK(every.search.rung == rung);
  // Interrupted anywhere, it resumes bitwise, cuts included.
  const fs::path whole = scratch("arch-halving.h5"), part = scratch("arch-halving-cut.h5"), again = scratch("arch-halving-2.h5");
  train_file(yaml, whole, 2);
  const RunFile ref_file = read_run_file(whole.string());
  CHECK(ref_file.search.rung == rung);
  for (const int poll : {3, 12, 30}) {
    CAPTURE(poll);
    REQUIRE(train_file(yaml, part, 2, poll).out.interrupted);
    train_file(yaml, again, 1, 0, part.string());
    const RunFile f = read_run_file(again.string());
    check_same_run(f, ref_file);
    CHECK(f.search.rung == rung);
    CHECK(f.search.epochs == std::vector<int>{2, 4});
  }
}

TEST_CASE("architectures: warm starts from and into mixed swarms take each member's source parameters, bitwise") {
  using namespace evaltest;
  const fs::path src = train_run("arch-warm-source", kMixed);
  // Member k's tensors (layer order) of a run file's `which` parameters.
  const auto member_of = [](const RunFile& f, int k, bool init) {
    std::vector<float> p;
    const auto rows = [&](const std::vector<LayerParams>& layers, std::size_t i, std::size_t n) {
      for (const LayerParams& l : layers)
        for (const auto& [name, arr] : l.tensors) {
          const std::size_t per = arr.data.size() / n;
          p.insert(p.end(), arr.data.begin() + static_cast<std::ptrdiff_t>(i * per),
                   arr.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
        }
    };
    if (f.architectures.empty()) rows(init ? f.init_params : f.params, static_cast<std::size_t>(k), f.meta.swarm_size);
    for (const ArchitectureParams& a : f.architectures)
      for (std::size_t i = 0; i < a.members.size(); ++i)
        if (a.members[i] == k) rows(init ? a.init_params : a.params, i, a.members.size());
    return p;
  };
  const RunFile from = read_run_file(src.string());
  // Mixed into mixed, member k from member k.
  const std::string into = std::string(kMixed).replace(kMixed.find("  layers:\n"), 10,
                                                         "  init_from: {path: '" + src.string() + "', members: all}\n  layers:\n");
  const fs::path warm = scratch("arch-warm.h5");
  train_file(std::string(into).replace(into.find("[0.02, 0.005]"), 13, "[0.001, 0.002]"), warm, 2);
  const RunFile mixed = read_run_file(warm.string());
  for (int k = 0; k < 12; ++k) CHECK(same_bits(member_of(mixed, k, true), member_of(from, k, false)));
  // Mixed into one architecture: members of that architecture only.
  const std::string plain =
      "name: p\nseed: 2\nswarm: {size: 4}\nmodel:\n  init_from: {path: '" + src.string() + "', members: [0, 6, 6, 0]}\n"
      "  layers: [{units: 6, activation: tanh}, {units: 2}]\nloss: cross_entropy\noptimizer: {type: adam, lr: 0.01}\n"
      "data:\n  source: {type: spirals, n: 120}\n  split: {train: 0.6, val: 0.2, test: 0.2}\ntrain: {epochs: 2, batch_size: 16}\n";
  const fs::path one_path = scratch("arch-warm-one.h5");
  train_file(plain, one_path, 1);
  const RunFile one = read_run_file(one_path.string());
  for (int k = 0; k < 4; ++k) CHECK(same_bits(member_of(one, k, true), member_of(from, k == 1 || k == 2 ? 6 : 0, false)));
  // A member of another shape is refused, naming both.
  const fs::path bad = write_file("arch-warm-bad.yaml", std::string(plain).replace(plain.find("[0, 6, 6, 0]"), 12, "[0, 2, 6, 0]"));
  tn::TrainOptions o;
  o.config_path = bad.string();
  o.out = scratch("arch-warm-bad.h5").string();
  o.force = true;
  auto [rc, err] = exit_and_stderr([&] { return tn::run_train(o); });
  CHECK(rc == tn::kExitUsage);
  CHECK_HAS(err, "of another architecture");
}
