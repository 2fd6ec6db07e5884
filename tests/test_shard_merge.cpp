// Sharding a swarm over jobs (train --shard k/K) and joining the parts (turbanet merge): the
// merged file is bitwise the run file of one run of the whole swarm (apart from the paths in
// /config), for shared, bootstrap (also with per-member target statistics), per-member-shard and
// group_by sequence data and a per-member lr grid; the blocks are balanced and cover the swarm;
// bad parts are refused with exit 2, naming them.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "config/config.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "python_test_util.h"
#include "run/errors.h"
#include "run/shard.h"

using namespace tn;
using namespace evaltest;

namespace {

std::string swarm_yaml(const std::string& per_member, const std::string& optimizer) {
  return "name: sh\nseed: 11\ndevice: cpu\nswarm: {size: 7}\n"
         "model: {layers: [{units: 6, activation: tanh}, {units: 2}]}\nloss: cross_entropy\n"
         "optimizer: " + optimizer + "\n"
         "data:\n  source: {type: spirals, n: 120}\n  split: {train: 0.6, val: 0.2, test: 0.2, seed: 3}\n"
         "  per_member: " + per_member + "\n"
         "train: {epochs: 3, batch_size: 16}\n";
}

// Trains `yaml` whole into NAME.h5 and as K shards beside it; returns the shards' paths.
std::vector<std::string> train_shards(const std::string& name, const std::string& yaml, int K) {
  std::vector<std::string> parts;
  for (int k = 0; k < K; ++k) {
    TrainOptions o;
    o.config_path = write_file(name + ".yaml", yaml).string();
    o.out = scratch(name + "-part.h5").string();
    o.shard = std::to_string(k) + "/" + std::to_string(K);
    o.force = true;
    o.verbosity = Verbosity::Quiet;
    REQUIRE(run_train(o) == kExitOk);
    parts.push_back(scratch(name + "-part.shard-" + std::to_string(k) + "-of-" + std::to_string(K) + ".h5").string());
    REQUIRE(fs::exists(parts.back()));
  }
  return parts;
}

std::pair<int, std::string> merge(const std::string& out, const std::vector<std::string>& parts, bool force = true) {
  MergeOptions m;
  m.out = out;
  m.parts = parts;
  m.force = force;
  return exit_and_stderr([&] { return run_merge(m); });
}

}  // namespace

TEST_CASE("--shard k/K: parsing and balanced blocks that cover the swarm") {
  CHECK(parse_shard("0/1").index == 0);
  CHECK(parse_shard("3/8").count == 8);
  for (const char* bad : {"8/8", "-1/4", "1", "a/b", "1/0", "1/4x", "+1/4", ""})
    CHECK_THROWS_WITH_AS(parse_shard(bad), doctest::Contains("expected k/K"), UsageError);
  MemberSets equal;
  equal.m = 10;
  for (int K : {1, 2, 3, 7}) {
    int next = 0;
    for (int k = 0; k < K; ++k) {
      const auto [m0, m1] = shard_block(equal, 7, {k, K});
      CHECK(m0 == next);
      CHECK(m1 - m0 >= 1);
      CHECK(m1 - m0 <= (7 + K - 1) / K);
      next = m1;
    }
    CHECK(next == 7);
  }
  // Unequal work (group sizes): blocks of about equal summed work, each at least one member.
  MemberSets sets;
  sets.mode = SampleMode::Sets;
  sets.offset = {0, 100, 110, 120, 130, 140, 240};  // work 100, 10, 10, 10, 10, 100
  sets.rows.assign(240, 0);
  CHECK(shard_block(sets, 6, {0, 2}) == std::pair<int, int>{0, 3});
  CHECK(shard_block(sets, 6, {1, 2}) == std::pair<int, int>{3, 6});
  CHECK(shard_block(sets, 6, {0, 6}) == std::pair<int, int>{0, 1});
  CHECK_THROWS_WITH_AS(shard_block(sets, 6, {0, 7}), doctest::Contains("at most 6 shards"), ConfigError);
}

TEST_CASE("merged shards are bitwise the run of the whole swarm") {
  const std::string python = test::python_with_h5py();
  struct Case {
    std::string name, yaml;
    int K;
  };
  // One model per series: per-series statistics, windows, own-sample evaluation with persistence.
  const std::string series =
      "name: rw\nseed: 5\ndevice: cpu\nmodel: {layers: [{units: 8, activation: tanh}, {units: 1}]}\nloss: mse\n"
      "optimizer: {type: adam, lr: {values: [0.001, 0.01]}}\n"
      "data:\n  source: {type: random_walk, series: 6, length: 90, seed: 2}\n"
      "  sequence: {window: 6, target: close}\n  split: {train: 0.7, val: 0.15, test: 0.15}\n"
      "  per_member: {group_by: ticker}\n  normalize: standard\n  normalize_per_member: true\ntrain: {epochs: 3, batch_size: 16}\n";
  // Regression with per-member target statistics: each shard stores its members' rows.
  std::string csv = "x,t\n";
  for (int i = 0; i < 90; ++i) csv += std::to_string(i / 45.0 - 1) + "," + std::to_string(100 + 40 * std::sin(i / 9.0) + (i % 11 == 0 ? 90 : 0)) + "\n";
  const std::string targets =
      "name: tg\nseed: 11\ndevice: cpu\nswarm: {size: 5}\nmodel: {layers: [{units: 6, activation: tanh}, {units: 1}]}\n"
      "loss: mse\noptimizer: adam\ndata:\n  source: {type: csv, path: " + write_file("shard-targets.csv", csv).string() +
      ", target: t}\n  split: {train: 0.6, val: 0.2, test: 0.2, seed: 3}\n  per_member: bootstrap\n"
      "  normalize: standard\n  normalize_target: robust\ntrain: {epochs: 3, batch_size: 16}\n";
  for (const Case& c :
       {Case{"member-targets", targets, 2}, Case{"shared-lr", swarm_yaml("shared", "{type: adam, lr: {values: [0.001, 0.003, 0.01, 0.03, 0.1, 0.2, 0.3]}}"), 3},
        Case{"bootstrap", swarm_yaml("bootstrap", "{type: sgd, lr: 0.05, momentum: 0.9}"), 2},
        Case{"member-shards", swarm_yaml("shards", "adam"), 4}, Case{"group-by", series, 2},
        // Members of different architectures: each shard trains its block's architectures.
        Case{"architectures",
             "name: ar\nseed: 11\ndevice: cpu\nswarm: {size: 9}\nmodel:\n  hidden: {values: [[5], [7, 3], []]}\n"
             "  layers: [{units: 6, activation: {values: [tanh, relu, tanh]}}, {units: 2}]\nloss: cross_entropy\n"
             "optimizer: {type: adam, lr: 0.01}\ndata:\n  source: {type: spirals, n: 120}\n"
             "  split: {train: 0.6, val: 0.2, test: 0.2, seed: 3}\n  per_member: bootstrap\n"
             "train: {epochs: 3, batch_size: 16}\ngrid: [model.hidden, model.layers.0.activation]\n",
             3}}) {
    CAPTURE(c.name);
    const std::string& yaml = c.yaml;
    const fs::path whole = train_run(c.name + "-whole", yaml);
    const std::vector<std::string> parts = train_shards(c.name, yaml, c.K);
    const RunFile p1 = read_run_file(parts[1]);
    CHECK(p1.meta.shard_index == 1);
    CHECK(p1.meta.shard_count == c.K);
    CHECK(p1.meta.shard_swarm_size == read_run_file(whole.string()).meta.swarm_size);
    CHECK(p1.meta.swarm_size < p1.meta.shard_swarm_size);
    const std::string out = scratch(c.name + "-merged.h5").string();
    const auto [rc, err] = merge(out, {parts.rbegin(), parts.rend()});  // any order
    REQUIRE_MESSAGE(rc == kExitOk, err);
    const RunFile a = read_run_file(whole.string()), b = read_run_file(out);
    CHECK(b.meta.shard_count == 0);
    CHECK(b.meta.swarm_size == a.meta.swarm_size);
    // The configurations differ in their file paths only.
    for (const std::string& key : config_text_differences(a.config_yaml, b.config_yaml))
      CHECK_MESSAGE((key == "output.path" || key == "train.checkpoint.path"), key);
    // Every dataset and attribute bitwise, the process attributes (timings, kernel) aside.
    if (python.empty()) {
      MESSAGE("SKIPPED: the dataset-by-dataset comparison needs python3 with h5py");
      continue;
    }
    const std::string report = test::run_command(python + " " + TURBANET_SOURCE_DIR "/scripts/compare_runs.py '" +
                                                 whole.string() + "' '" + out + "' --ignore config 2>&1");
    CHECK_MESSAGE(report.find(", 0 differences") != std::string::npos, report);
    // h5py reads every dataset and attribute of the shards too (/meta@shard_*, and under
    // group_by /predictions/<split>/sample).
    const std::string read = tn::test::read_all_with_h5py(python, parts);
    for (const std::string& part : parts) CHECK_MESSAGE(read.find(" " + part + "\n") != std::string::npos, read);
    CHECK(read_run_file(parts[0]).find_predictions("test")->sample.empty() == (c.name != "group-by"));
  }
}

TEST_CASE("merge refuses parts that do not make one swarm, naming them") {
  const std::string yaml = swarm_yaml("shared", "adam");
  const std::vector<std::string> parts = train_shards("refuse", yaml, 3);
  const std::string out = scratch("refuse-merged.h5").string();
  auto [rc, err] = merge(out, {parts[0], parts[2]});
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("shards 1 of 3 are missing") != std::string::npos, err);
  std::tie(rc, err) = merge(out, {parts[0], parts[1], parts[1], parts[2]});
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("shard 1 is given twice") != std::string::npos, err);
  const fs::path whole = train_run("refuse-whole", yaml);
  std::tie(rc, err) = merge(out, {whole.string()});
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("is not a shard") != std::string::npos, err);
  // Another seed in one shard: a different run.
  std::string other = yaml;
  other.replace(other.find("seed: 11"), 8, "seed: 12");
  const std::vector<std::string> reseeded = train_shards("refuse-seed", other, 3);
  std::tie(rc, err) = merge(out, {parts[0], reseeded[1], parts[2]});
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("(seed differs)") != std::string::npos, err);
  // The output may not be one of the parts, even with --force; nothing is replaced without it.
  std::tie(rc, err) = merge(parts[0], parts);
  CHECK(rc == kExitUsage);
  std::tie(rc, err) = merge(out, parts);
  REQUIRE(rc == kExitOk);
  std::tie(rc, err) = merge(out, parts, /*force=*/false);
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("already exists") != std::string::npos, err);
  CHECK(!fs::exists(out + ".tmp"));
  // A group_by shard holds a block of the groups: eval asks for the merged file.
  const std::vector<std::string> groups = train_shards(
      "refuse-group",
      "name: g\nseed: 1\ndevice: cpu\nmodel: {layers: [{units: 4}, {units: 1}]}\nloss: mse\n"
      "data:\n  source: {type: random_walk, series: 3, length: 60}\n  sequence: {window: 4, target: close}\n"
      "  split: {train: 0.8, test: 0.2}\n  per_member: {group_by: ticker}\ntrain: {epochs: 1}\n",
      2);
  std::tie(rc, err) = exit_and_stderr([&] { return run_eval(eval_opts(groups[1])); });
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("join the shards first") != std::string::npos, err);
}

TEST_CASE("a shard checkpoints and resumes like a whole run, bitwise") {
  const std::string yaml = swarm_yaml("bootstrap", "{type: adam, lr: {values: [0.001, 0.01, 0.1, 0.3, 0.03, 0.003, 0.02]}}");
  const auto shard_run = [&](const std::string& name, std::vector<std::string> set, const std::string& resume) {
    TrainOptions o;
    o.config_path = write_file("resume-shard.yaml", yaml).string();
    o.out = scratch(name + ".h5").string();
    o.shard = "0/2";
    o.set = std::move(set);
    o.resume = resume;
    o.force = true;
    o.verbosity = Verbosity::Quiet;
    REQUIRE(run_train(o) == kExitOk);
    return read_run_file(scratch(name + ".shard-0-of-2.h5").string());
  };
  const RunFile straight = shard_run("straight", {"train.epochs=3"}, "");
  shard_run("stepped", {"train.epochs=2", "train.checkpoint.every_epochs=1"}, "");
  const std::string ckpt = scratch("stepped.shard-0-of-2.ckpt.h5").string();
  REQUIRE(fs::exists(ckpt));
  CHECK(read_run_file(ckpt).meta.shard_count == 2);
  const RunFile resumed = shard_run("stepped", {"train.epochs=3", "train.checkpoint.every_epochs=1"}, ckpt);
  CHECK(resumed.meta.swarm_size == straight.meta.swarm_size);
  for (std::size_t l = 0; l < straight.params.size(); ++l)
    for (std::size_t t = 0; t < straight.params[l].tensors.size(); ++t)
      CHECK(resumed.params[l].tensors[t].second.data == straight.params[l].tensors[t].second.data);
  CHECK(resumed.train_loss.data == straight.train_loss.data);
}
