// Warm starts (model.init_from): members start from another run's trained parameters, mapped
// member by member; the optimizer starts fresh; models that differ are refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "config/config.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "python_test_util.h"

using namespace tn;
using namespace evaltest;

namespace {

// A 2-16-2 tanh swarm on spirals; `extra` is appended (e.g. model.init_from).
std::string base_yaml(int members, int epochs, const std::string& optimizer, const std::string& model_extra = "",
                      int units = 16) {
  return "name: warm\nseed: 5\nswarm: {size: " + std::to_string(members) +
         "}\nmodel:\n  layers:\n    - {type: dense, units: " + std::to_string(units) +
         ", activation: tanh}\n    - {type: dense, units: 2}\n" + model_extra +
         "loss: cross_entropy\noptimizer: " + optimizer +
         "\ndata:\n  source: {type: spirals, n: 64, noise: 0.05}\n  split: {train: 0.75, test: 0.25}\n"
         "  per_member: shared\ntrain: {epochs: " + std::to_string(epochs) + ", batch_size: 1000, shuffle: false}\n";
}

std::string init_from(const fs::path& source, const std::string& members) {
  return "  init_from: {path: '" + source.string() + "', members: " + members + "}\n";
}

// Member s of every tensor of `layers` as one flat vector.
std::vector<float> member_params(const std::vector<LayerParams>& layers, int s) {
  std::vector<float> out;
  for (const LayerParams& l : layers)
    for (const auto& [name, a] : l.tensors) {
      const std::size_t per = a.data.size() / a.shape[0];
      out.insert(out.end(), a.data.begin() + s * per, a.data.begin() + (s + 1) * per);
    }
  return out;
}

int train_exit(const std::string& name, const std::string& yaml, std::string* err = nullptr) {
  TrainOptions o;
  o.config_path = write_file(name + ".yaml", yaml).string();
  o.out = scratch(name + ".h5").string();
  o.force = true;
  o.verbosity = Verbosity::Quiet;
  const auto [rc, text] = exit_and_stderr([&] { return run_train(o); });
  if (err) *err = text;
  return rc;
}

}  // namespace

TEST_CASE("warm start: member k starts from source member members[k], recorded in the run file") {
  const fs::path source = train_run("warm-source", base_yaml(4, 3, "{type: adam, lr: 0.01}"));
  const RunFile src = read_run_file(source.string());
  SUBCASE("a list, with repeats") {
    const fs::path run = train_run("warm-list", base_yaml(3, 2, "{type: adam, lr: 0.01}", init_from(source, "[2, 0, 2]")));
    const RunFile r = read_run_file(run.string());
    const int want[] = {2, 0, 2};
    for (int s = 0; s < 3; ++s) CHECK(member_params(r.init_params, s) == member_params(src.params, want[s]));
    CHECK(r.members.init_from == std::vector<int>{2, 0, 2});
    CHECK(r.members.init_from_path == fs::absolute(source).lexically_normal().string());
    CHECK(member_params(r.params, 0) != member_params(src.params, 2));  // and then it trained
    const Config stored = parse_config(r.config_yaml, "stored");
    CHECK(stored.model.init_from.members == std::vector<int>{2, 0, 2});
    CHECK(!stored.model.init_from.all);
    // h5py reads the records as documented.
    const std::string py = tn::test::python_with_h5py();
    if (py.empty()) {
      MESSAGE("no Python with h5py: the h5py check is skipped");
    } else {
      const std::string out = tn::test::run_command(
          py + " -c \"import h5py; f = h5py.File('" + run.string() + "', 'r'); "
               "print(f['members/init_from'][()].tolist(), f['members'].attrs['init_from'] == '" +
          r.members.init_from_path + "', len(f['data'].attrs['base_dir']) > 0)\" 2>&1");
      CHECK_MESSAGE(out == "[2, 0, 2] True True\n", out);
    }
  }
  SUBCASE("all, for members [first_member, first_member + size) of the swarm") {
    std::string yaml = base_yaml(2, 2, "{type: adam, lr: 0.01}", init_from(source, "all"));
    yaml.replace(yaml.find("swarm: {size: 2}"), 16, "swarm: {size: 2, first_member: 1}");
    const RunFile r = read_run_file(train_run("warm-all", yaml).string());
    CHECK(member_params(r.init_params, 0) == member_params(src.params, 1));
    CHECK(member_params(r.init_params, 1) == member_params(src.params, 2));
    CHECK(r.members.init_from == std::vector<int>{1, 2});
  }
  SUBCASE("a list indexed by global member: entries before first_member are not used") {
    std::string yaml = base_yaml(2, 2, "{type: adam, lr: 0.01}", init_from(source, "[3, 3, 0]"));
    yaml.replace(yaml.find("swarm: {size: 2}"), 16, "swarm: {size: 2, first_member: 1}");
    const RunFile r = read_run_file(train_run("warm-first", yaml).string());
    CHECK(member_params(r.init_params, 0) == member_params(src.params, 3));
    CHECK(member_params(r.init_params, 1) == member_params(src.params, 0));
  }
}

TEST_CASE("warm start with plain SGD (no optimizer state): E1 epochs, then E2 from them, equals E1 + E2 epochs bitwise") {
  // Full batch, no shuffling, shared data, constant learning rate: an epoch's step depends on
  // the parameters only, so a warm start from the run after 3 epochs continues it exactly.
  const std::string sgd = "{type: sgd, lr: 0.3}";
  const fs::path first = train_run("sgd-3", base_yaml(3, 3, sgd));
  const fs::path warm = train_run("sgd-3+2", base_yaml(3, 2, sgd, init_from(first, "all")));
  const fs::path whole = train_run("sgd-5", base_yaml(3, 5, sgd));
  const RunFile w = read_run_file(warm.string()), ref = read_run_file(whole.string());
  for (int s = 0; s < 3; ++s) CHECK(member_params(w.params, s) == member_params(ref.params, s));
  for (int s = 0; s < 3; ++s)
    for (int e = 0; e < 2; ++e) CHECK(w.train_loss.data[s * 2 + e] == ref.train_loss.data[s * 5 + 3 + e]);
  CHECK(member_params(w.params, 0) != member_params(read_run_file(first.string()).params, 0));
}

TEST_CASE("warm start with Adam: the optimizer state starts fresh, so the first step moves every weight by about lr") {
  // Adam's first step from zero moments is lr·g/(|g| + eps) per weight: a move of lr wherever
  // |g| >> eps, never more. A continued state (a resume) would move weights by other amounts.
  const double lr = 0.01;
  const fs::path source = train_run("adam-source", base_yaml(2, 20, "{type: adam, lr: 0.01}"));
  const fs::path warm = train_run("adam-warm", base_yaml(2, 1, "{type: adam, lr: 0.01}", init_from(source, "all")));
  const RunFile s = read_run_file(source.string()), w = read_run_file(warm.string());
  for (int m = 0; m < 2; ++m) {
    const std::vector<float> before = member_params(s.params, m), after = member_params(w.params, m);
    REQUIRE(before.size() == after.size());
    std::vector<double> ratio;
    double worst = 0;
    for (std::size_t i = 0; i < before.size(); ++i) {
      const double d = std::abs(static_cast<double>(after[i]) - before[i]) / lr;
      worst = std::max(worst, d);
      ratio.push_back(d);
    }
    std::sort(ratio.begin(), ratio.end());
    MESSAGE("member " << m << ": median |step|/lr " << ratio[ratio.size() / 2] << ", max " << worst);
    CHECK(worst <= 1.0 + 1e-4);
    CHECK(ratio[ratio.size() / 2] == doctest::Approx(1.0).epsilon(1e-3));
  }
}

TEST_CASE("warm start: another model, a member count that does not fit or a missing source exits 2 naming it") {
  const fs::path source = train_run("warm-bad-source", base_yaml(2, 1, "{type: adam, lr: 0.01}"));
  std::string yaml, want;
  SUBCASE("other units: the tensor and both shapes") {
    yaml = base_yaml(2, 1, "{type: adam, lr: 0.01}", init_from(source, "all"), 32);
    want = "tensor layer_0/W is (2, 16) per member in the source run (/params/layer_0/W (2, 2, 16)), but (2, 32) in this model";
  }
  SUBCASE("another layer type") {
    yaml = base_yaml(2, 1, "{type: adam, lr: 0.01}", init_from(source, "all"));
    yaml.replace(yaml.find("{type: dense, units: 16, activation: tanh}"), 42, "{type: dense, units: 16, activation: tanh}\n    - {type: dense, units: 4}");
    want = "has 2 layers, this model 3";
  }
  SUBCASE("a list of the wrong length, at its line") {
    yaml = base_yaml(3, 1, "{type: adam, lr: 0.01}", init_from(source, "[0, 1]"));
    want = "warm-bad.yaml:8:";
    CHECK(train_exit("warm-bad", yaml, &want) == kExitUsage);
    CHECK_MESSAGE(want.find("warm-bad.yaml:8:") != std::string::npos, want);
    want = "model.init_from.members: lists 2 source members, but the swarm has 3 members (0..2)";
  }
  SUBCASE("a source member the source run does not hold") {
    yaml = base_yaml(2, 1, "{type: adam, lr: 0.01}", init_from(source, "[0, 5]"));
    want = "model.init_from.members[1]: member 1 would start from member 5 of '" + source.string() + "', which holds members 0..1";
  }
  SUBCASE("all, with more members than the source") {
    yaml = base_yaml(3, 1, "{type: adam, lr: 0.01}", init_from(source, "all"));
    want = "member 2 would start from member 2";
  }
  SUBCASE("init_scale as well") {
    yaml = base_yaml(2, 1, "{type: adam, lr: 0.01}", init_from(source, "all") + "  init_scale: 0.5\n");
    want = "model.init_scale: scales random initial weights, but model.init_from starts every member";
  }
  SUBCASE("a missing source") {
    yaml = base_yaml(2, 1, "{type: adam, lr: 0.01}", init_from(scratch("nope.h5"), "all"));
    want = "model.init_from.path: run file not found";
  }
  SUBCASE("not a list") {
    yaml = base_yaml(2, 1, "{type: adam, lr: 0.01}", init_from(source, "some"));
    want = "model.init_from.members: expected 'all' or a list of source member indices";
  }
  std::string err;
  CHECK(train_exit("warm-bad", yaml, &err) == kExitUsage);
  CHECK_MESSAGE(err.find(want) != std::string::npos, err);
  CHECK(!fs::exists(scratch("warm-bad.h5")));
}
