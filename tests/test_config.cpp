// Tests of config loading: schema, defaults, error messages, --set overrides, to_yaml.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "config_test_util.h"

using namespace tn;
using namespace tn::test;
namespace fs = std::filesystem;

namespace {

// The example configuration of the documented schema.
const char* const kExample = R"(name: spirals-small
seed: 7
device: cuda
swarm: {size: 128, first_member: 4}
model:
  layers:
    - {type: dense, units: 16, activation: leaky_relu, leaky_slope: 0.2, init: he}
    - {type: dense, units: 2}
loss: cross_entropy
optimizer: {type: adam, lr: 3.0e-4, beta1: 0.8, beta2: 0.99, eps: 1.0e-7, weight_decay: 0.01, grad_clip: 1.5}
schedule: {type: cosine, min_lr: 1.0e-5, warmup_epochs: 2.5}
data:
  source: {type: spirals, n: 256, noise: 0.1, rotations: 1.5, seed: 3}
  split: {train: 0.7, val: 0.2, test: 0.1, seed: 9}
  per_member: bootstrap
  normalize: standard
train: {epochs: 1024, batch_size: 64, shuffle: false, log_every: 10}
output: {path: out/x.h5}
)";

std::string override_error(const std::string& arg) {
  try {
    parse_override(arg);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("config: the documented example parses to the expected values") {
  const Config c = parse(kExample);
  CHECK(c.name == "spirals-small");
  CHECK(c.seed == 7);
  CHECK(c.device == DeviceKind::Cuda);
  CHECK(c.swarm.size == 128);
  CHECK(c.swarm.first_member == 4);
  REQUIRE(c.model.layers.size() == 2);
  CHECK(c.model.layers[0].units == 16);
  CHECK(c.model.layers[0].activation == Activation::LeakyRelu);
  CHECK(c.model.layers[0].leaky_slope == 0.2f);
  CHECK(c.model.layers[0].init == LayerConfig::Init::He);
  CHECK(c.model.layers[1].units == 2);
  CHECK(c.model.layers[1].activation == Activation::Identity);
  CHECK(c.model.layers[1].init == LayerConfig::Init::Auto);
  CHECK(c.loss.type == LossType::CrossEntropy);
  CHECK(c.optimizer.type == OptimizerType::Adam);
  CHECK(c.optimizer.lr == 3e-4);
  CHECK(c.optimizer.beta1 == 0.8);
  CHECK(c.optimizer.beta2 == 0.99);
  CHECK(c.optimizer.eps == 1e-7);
  CHECK(c.optimizer.weight_decay == 0.01);
  CHECK(c.optimizer.grad_clip == 1.5);
  CHECK(c.schedule.type == ScheduleType::Cosine);
  CHECK(c.schedule.min_lr == 1e-5);
  CHECK(c.schedule.warmup_epochs == 2.5);
  CHECK(c.data.source.type == "spirals");
  CHECK(c.data.source.n == 256);
  CHECK(c.data.source.noise == 0.1);
  CHECK(c.data.source.rotations == 1.5);
  CHECK(c.data.source.seed == 3);
  CHECK(c.data.split.train == 0.7);
  CHECK(c.data.split.val == 0.2);
  CHECK(c.data.split.test == 0.1);
  CHECK(c.data.split.seed == 9);
  CHECK(c.data.per_member == PerMember::Bootstrap);
  CHECK(c.data.normalize == Normalize::Standard);
  CHECK(c.train.epochs == 1024);
  CHECK(c.train.batch_size == 64);
  CHECK_FALSE(c.train.shuffle);
  CHECK(c.train.log_every == 10);
  CHECK(c.output.path == "out/x.h5");
  CHECK(c.source_file == "cfg.yaml");
}

TEST_CASE("config: missing keys take the struct defaults") {
  const Config c = parse(kMinimal);
  const Config d;
  CHECK(c.name == "run");
  CHECK(c.output.path == "runs/run.h5");
  CHECK(c.device == DeviceKind::Auto);
  CHECK(c.swarm.size == d.swarm.size);
  CHECK(c.loss.type == LossType::CrossEntropy);
  CHECK(c.optimizer.type == OptimizerType::Adam);
  CHECK(c.optimizer.lr == d.optimizer.lr);
  CHECK(c.schedule.type == ScheduleType::Constant);
  CHECK(c.data.source.n == d.data.source.n);
  CHECK(c.data.split.train == 1.0);
  CHECK(c.train.epochs == d.train.epochs);
  CHECK(c.train.batch_size == d.train.batch_size);
  CHECK(parse(with("name: abc\n")).output.path == "runs/abc.h5");
  // Sections given by name, and empty sections.
  const Config e = parse(with("optimizer: sgd\nschedule: linear\nloss: bce\nswarm:\ntrain:\n"));
  CHECK(e.optimizer.type == OptimizerType::Sgd);
  CHECK(e.schedule.type == ScheduleType::Linear);
  CHECK(e.loss.type == LossType::Bce);  // bce is fine with fewer than 2 outputs
}

TEST_CASE("config: enum names") {
  CHECK(std::string(to_string(DeviceKind::Cuda)) == "cuda");
  CHECK(std::string(to_string(ScheduleType::Cosine)) == "cosine");
  CHECK(std::string(to_string(PerMember::Bootstrap)) == "bootstrap");
  CHECK(std::string(to_string(Normalize::Standard)) == "standard");
  CHECK(std::string(to_string(Normalize::MinMax)) == "minmax");
  CHECK(std::string(to_string(PerMember::Subsample)) == "subsample");
  CHECK(std::string(to_string(PerMember::Shards)) == "shards");
  CHECK(std::string(to_string(PerMember::GroupBy)) == "group_by");
}

TEST_CASE("config errors: YAML syntax and unreadable files") {
  const std::string m = error_of("name: a\nmodel: [1, 2\nseed: 3\n");
  CHECK_HAS(m, "cfg.yaml:3:");
  CHECK_HAS(m, "invalid YAML");
  CHECK_HAS(error_of("- a\n- b\n"), "cfg.yaml:1:1: expected a map of settings");

  const fs::path dir = temp_dir("unreadable");
  const std::string missing = (dir / "nope.yaml").string();
  CHECK(load_error(missing) ==
        "cannot read config file '" + missing + "': No such file or directory");
  CHECK_HAS(load_error(dir.string()), "cannot read config file");
}

TEST_CASE("config errors: unknown keys suggest the nearest valid key") {
  std::string m = error_of(with("optimiser: {lr: 0.1}\n"));
  CHECK_HAS(m, "cfg.yaml:6:1: optimiser: unknown key");
  CHECK_HAS(m, "allowed: name, seed, device, device_precision, swarm, model");
  CHECK_HAS(m, "did you mean 'optimizer'?");
  m = error_of(with("optimizer:\n  type: adam\n  lr_: 0.1\n"));
  CHECK_HAS(m, "cfg.yaml:8:3: optimizer.lr_: unknown key");
  CHECK_HAS(m, "did you mean 'lr'?");
  m = error_of(with("train: {epochs: 3, zzzzzz: 1}\n"));
  CHECK_HAS(m, "train.zzzzzz: unknown key; allowed: epochs, batch_size, shuffle, log_every");
  CHECK(m.find("did you mean") == std::string::npos);
  CHECK_HAS(error_of(with("name: a\nname: b\n")), "cfg.yaml:7:1: name: duplicate key");
}

TEST_CASE("config errors: wrong types") {
  CHECK_HAS(error_of(with("optimizer: {lr: abc}\n")),
            "cfg.yaml:6:17: optimizer.lr: expected a number, got 'abc'");
  CHECK_HAS(error_of(with("swarm: 3\n")), "swarm: expected a map, got '3'");
  CHECK_HAS(error_of("model: {layers: 3}\ndata: {source: spirals}\n"),
            "model.layers: expected a list");
  CHECK_HAS(error_of(with("train: {shuffle: yes}\n")),
            "train.shuffle: expected true or false, got 'yes'");
  CHECK_HAS(
      error_of(
          "model:\n  layers:\n    - {units: 4}\n    - {units: 2.5}\ndata: {source: spirals}\n"),
      "cfg.yaml:4:15: model.layers[1].units: expected an integer, got '2.5'");
  CHECK_HAS(error_of(with("optimizer: {lr: }\n")),
            "optimizer.lr: expected a number, got an empty value");
  CHECK_HAS(error_of(with("name: [a]\n")), "name: expected a string, got a list");
}

TEST_CASE("config errors: out-of-range values state the allowed range") {
  CHECK_HAS(error_of(with("optimizer: {lr: 0}\n")),
            "optimizer.lr: value 0 is out of range; expected a number > 0");
  CHECK_HAS(error_of(with("optimizer: {beta1: 1}\n")), "expected a number in [0, 1)");
  CHECK_HAS(error_of(with("train: {epochs: 0}\n")),
            "train.epochs: value 0 is out of range; expected an integer >= 1");
  CHECK_HAS(error_of(with("seed: -1\n")),
            "seed: value -1 is out of range; expected an integer >= 0");
  CHECK_HAS(error_of(with("schedule: {type: step, step_every: 5, gamma: 0}\n")),
            "schedule.gamma: value 0 is out of range; expected a number in (0, 1]");
  CHECK_HAS(error_of(with("loss: {type: huber, delta: -1}\n")), "loss.delta");
  CHECK_HAS(error_of(with("name: my run\n")), "name: invalid character ' '");
  CHECK_HAS(error_of(with("optimizer: {type: sgd, nesterov: true}\n")),
            "optimizer.nesterov: nesterov needs momentum > 0");
  CHECK(parse(with("optimizer: {type: sgd, momentum: 0.9, nesterov: true}\n")).optimizer.nesterov);
}

TEST_CASE("config errors: unknown enum values list the allowed ones") {
  std::string m =
      error_of("model:\n  layers:\n    - {units: 2, activation: relux}\ndata: {source: spirals}\n");
  CHECK_HAS(m, "cfg.yaml:3:30: model.layers[0].activation: unknown value 'relux'");
  CHECK_HAS(m, "allowed: relu, leaky_relu, tanh, sigmoid, gelu, identity");
  CHECK_HAS(m, "did you mean 'relu'?");
  m = error_of(with("optimizer: sdg\n"));
  CHECK_HAS(
      m, "optimizer: unknown value 'sdg'; allowed: sgd, adam, adamw, rmsprop; did you mean 'sgd'?");
  CHECK_HAS(error_of(with("device: gpu\n")), "allowed: auto, cpu, cuda");
  CHECK_HAS(error_of("model: {layers: [{units: 2}]}\ndata: {source: spirals, normalize: minmx}\n"),
            "data.normalize: unknown value 'minmx'; allowed: none, standard, minmax; did you mean "
            "'minmax'?");
}

TEST_CASE("config errors: missing required keys") {
  CHECK_HAS(error_of("data: {source: spirals}\n"), "cfg.yaml:1:1: model: missing required key");
  CHECK_HAS(error_of("model: {layers: [{units: 2}]}\ndata: {split: {train: 1}}\n"),
            "data.source: missing required key");
  CHECK_HAS(error_of("model: {layers: [{activation: relu}]}\ndata: {source: spirals}\n"),
            "model.layers[0].units: missing required key");
  CHECK_HAS(error_of("model: {layers: []}\ndata: {source: spirals}\n"),
            "model.layers: must contain at least one layer");
  CHECK_HAS(error_of(with("schedule: {type: step}\n")),
            "schedule.step_every: missing required key");
  CHECK_HAS(error_of(""), "model: missing required key");
}

TEST_CASE("config errors: keys that do not apply to the selected type") {
  CHECK_HAS(error_of(with("optimizer: {type: adam, nesterov: true}\n")),
            "cfg.yaml:6:25: optimizer.nesterov: only applies to sgd; type is 'adam'");
  CHECK_HAS(error_of(with("optimizer: {type: sgd, beta1: 0.5}\n")),
            "optimizer.beta1: only applies to adam and adamw; type is 'sgd'");
  CHECK_HAS(error_of(with("schedule: {gamma: 0.5}\n")),
            "schedule.gamma: only applies to step; type is 'constant'");
  CHECK_HAS(error_of(with("loss: {type: mse, delta: 2}\n")),
            "loss.delta: only applies to huber; type is 'mse'");
  CHECK_HAS(error_of("model:\n  layers: [{units: 2, leaky_slope: 0.1}]\ndata: {source: spirals}\n"),
            "model.layers[0].leaky_slope: only applies to leaky_relu; activation is 'identity'");
  CHECK_HAS(
      error_of("model: {layers: [{units: 2}]}\ndata: {source: {type: spirals, path: a.csv}}\n"),
      "data.source.path: only applies to csv and hdf5; type is 'spirals'");
}

TEST_CASE("config errors: split fractions and cross-field checks") {
  std::string m = error_of(with("  split: {train: 0.7, val: 0.2}\n"));
  CHECK_HAS(m,
            "cfg.yaml:6:10: data.split: train + val + test must sum to 1, got 0.9 (0.7 + 0.2 + 0)");
  CHECK(parse(with("  split: {train: 0.8, val: 0.1, test: 0.1}\n")).data.split.test == 0.1);
  CHECK_HAS(error_of(with("  split: {train: 0}\n")), "data.split.train: value 0 is out of range");
  m = error_of("model: {layers: [{units: 1}]}\ndata: {source: spirals}\n");
  CHECK_HAS(m, "model.layers[0].units: the cross_entropy loss needs at least 2 output units");
  CHECK_HAS(m, "use loss: bce");
  CHECK(parse("model: {layers: [{units: 3}]}\nloss: bce\ndata: {source: spirals}\n").loss.type ==
        LossType::Bce);
}

TEST_CASE("config overrides: parse_override") {
  const Override o = parse_override("optimizer.lr=1e-3");
  CHECK(o.key == "optimizer.lr");
  CHECK(o.value == "1e-3");
  CHECK(parse_override("model.layers=[{units: 2}]").value == "[{units: 2}]");
  CHECK(parse_override("output.path=a=b").value == "a=b");
  CHECK_HAS(override_error("optimizer.lr"), "--set optimizer.lr: missing '='");
  CHECK_HAS(override_error("optimizer.lr"),
            "--set expects key.path=value, e.g. --set optimizer.lr=3e-4");
  CHECK_HAS(override_error("=3"), "empty key");
  CHECK_HAS(override_error("optimizer..lr=3"), "empty component in key 'optimizer..lr'");
}

TEST_CASE("config overrides: applied to the tree before validation") {
  const std::string two =
      "model:\n  layers:\n    - {units: 8, activation: tanh}\n    - {units: 2}\n"
      "data: {source: spirals}\n";
  Config c =
      parse(two, {parse_override("model.layers.0.units=32"), parse_override("optimizer.lr=3e-4"),
                  parse_override("schedule.type=step"), parse_override("schedule.step_every=10"),
                  parse_override("data.source.noise=0.5"), parse_override("train.shuffle=false")});
  CHECK(c.model.layers[0].units == 32);
  CHECK(c.model.layers[0].activation == Activation::Tanh);
  CHECK(c.optimizer.lr == 3e-4);
  CHECK(c.schedule.type == ScheduleType::Step);
  CHECK(c.schedule.step_every == 10);
  CHECK(c.data.source.noise == 0.5);
  CHECK_FALSE(c.train.shuffle);
  // Whole YAML values, and the last override wins.
  c = parse(two, {parse_override("optimizer={type: sgd, lr: 0.1}"),
                  parse_override("optimizer.lr=0.2"), parse_override("model.layers=[{units: 3}]")});
  CHECK(c.optimizer.type == OptimizerType::Sgd);
  CHECK(c.optimizer.lr == 0.2);
  REQUIRE(c.model.layers.size() == 1);
  CHECK(c.model.layers[0].units == 3);
  // A section given by name takes keys: `optimizer: sgd` becomes {type: sgd, lr: 0.5}.
  c = parse(with("optimizer: sgd\n"), {parse_override("optimizer.lr=0.5")});
  CHECK(c.optimizer.type == OptimizerType::Sgd);
  CHECK(c.optimizer.lr == 0.5);
  // An override fills a section left empty in the file.
  CHECK(parse(with("optimizer:\n"), {parse_override("optimizer.lr=0.5")}).optimizer.lr == 0.5);
}

TEST_CASE("config overrides: errors name the --set argument") {
  const std::string two = "model:\n  layers: [{units: 4}, {units: 2}]\ndata: {source: spirals}\n";
  std::string m = error_of(two, {parse_override("optimizer.lrr=0.1")});
  CHECK_HAS(m, "--set optimizer.lrr=0.1: optimizer.lrr: unknown key");
  CHECK_HAS(m, "did you mean 'lr'?");
  m = error_of(two, {parse_override("model.layers.1.units=abc")});
  CHECK_HAS(
      m, "--set model.layers.1.units=abc: model.layers[1].units: expected an integer, got 'abc'");
  CHECK_HAS(error_of(two, {parse_override("model.layers.2.units=3")}),
            "--set model.layers.2.units=3: index 2 is out of range; 'model.layers' has 2 elements");
  CHECK_HAS(error_of(two, {parse_override("model.layers.99999999999999999999.units=3")}),
            "index 99999999999999999999 is out of range");
  CHECK_HAS(error_of(two, {parse_override("model.layers.x=3")}), "'model.layers' is a list");
  CHECK_HAS(error_of(two, {parse_override("optimizer.lr=[1,")}),
            "--set optimizer.lr=[1,: invalid YAML value");
  // Values from the file keep their file location even when overrides are given.
  CHECK_HAS(error_of(two + "seed: x\n", {parse_override("optimizer.lr=0.1")}),
            "cfg.yaml:4:7: seed");
}

TEST_CASE("config: to_yaml round-trips exactly") {
  check_round_trip(parse(kExample));
  check_round_trip(parse(kMinimal));
  Config c = parse(
      with("optimizer: {type: sgd, lr: 0.1, momentum: 0.9, nesterov: true}\n"
           "schedule: {type: step, step_every: 7, gamma: 0.3}\nloss: {type: huber, delta: 0.3}\n"));
  check_round_trip(c);
  c.optimizer.lr = 0.1 + 0.2;  // needs all 17 digits
  c.model.layers[0].activation = Activation::LeakyRelu;
  c.model.layers[0].leaky_slope = 1.0f / 3.0f;
  c.loss.huber_delta = 0.1f;
  c.data.split = {0.6, 0.3, 0.1, 12345678901234567ull};
  check_round_trip(c);
  c = parse(with("optimizer: {type: rmsprop, alpha: 0.95, momentum: 0.5, eps: 1.0e-6}\n"
                 "schedule: {type: linear, min_lr: 1.0e-6}\n"));
  check_round_trip(c);
  const std::string text = to_yaml(c);
  CHECK_HAS(text, "alpha: 0.95");
  CHECK(text.find("beta1") == std::string::npos);  // only keys that apply to rmsprop
  CHECK(text.find("nesterov") == std::string::npos);
  CHECK(text.find("gamma") == std::string::npos);  // and to the linear schedule
}

TEST_CASE("config: csv source paths") {
  const fs::path dir = temp_dir("csv");
  const fs::path data = dir / "data" / "turbanet_cfg_test.csv";
  write_file(data, "a,b,label\n1,2,0\n");
  write_file(dir / "cfg.yaml",
             "model: {layers: [{units: 2}]}\ndata:\n  source: {type: csv, "
             "path: data/turbanet_cfg_test.csv, features: [a, b], target: label}\n");
  // Not found from the working directory: resolved against the config file's directory.
  Config c = load_config((dir / "cfg.yaml").string());
  CHECK(c.data.source.type == "csv");
  CHECK(fs::path(c.data.source.path) == data);
  CHECK(c.data.source.features == std::vector<std::string>{"a", "b"});
  CHECK(c.data.source.target == "label");
  CHECK(c.source_file == (dir / "cfg.yaml").string());
  check_round_trip(c);
  // Found from the working directory: kept as written.
  const std::string rel = fs::relative(data).string();
  write_file(dir / "other" / "cfg.yaml",
             "model: {layers: [{units: 2}]}\ndata: {source: {type: csv, path: '" + rel +
                 "', target: label}}\n");
  c = load_config((dir / "other" / "cfg.yaml").string());
  CHECK(c.data.source.path == rel);
  CHECK(c.data.source.features.empty());
  // Missing file, and missing target.
  const std::string bad = (dir / "bad.yaml").string();
  write_file(
      bad,
      "model: {layers: [{units: 2}]}\ndata:\n  source: {type: csv, path: nope.csv, target: y}\n");
  CHECK_HAS(load_error(bad), bad + ":3:29: data.source.path: file not found: 'nope.csv'");
  CHECK_HAS(error_of("model: {layers: [{units: 2}]}\ndata: {source: {type: csv, path: " +
                     data.string() + "}}\n"),
            "data.source.target: missing required key");
  fs::remove_all(dir);
}

TEST_CASE("config: YAML aliases that loop or expand without bound exit 2 with the position") {
  // An alias inside the node it repeats: a loop (a stack overflow in the reader before).
  CHECK_HAS(error_of(std::string(kMinimal) + "zzz: &a [*a]\n"), "cfg.yaml:6:10: this alias refers to a node that contains it");
  CHECK_HAS(error_of(kMinimal, {parse_override("zzz=&a [*a]")}),
            "--set zzz=&a [*a]: character 5 of the value: this alias refers to a node that contains it");
  CHECK_HAS(error_of(kMinimal, {parse_override("model=&m {layers: [*m]}")}), "a loop");
  // "Billion laughs": six levels of nine aliases each, 307 bytes that stood for 9^6 nodes.
  std::string laughs = "[&a [1,1,1,1,1,1,1,1,1]";
  for (char level = 'b'; level <= 'f'; ++level) {
    laughs += std::string(", &") + level + " [";
    for (int k = 0; k < 9; ++k) laughs += std::string(k ? "," : "") + "*" + static_cast<char>(level - 1);
    laughs += "]";
  }
  laughs += "]";
  CHECK_HAS(error_of(kMinimal, {parse_override("zzz=" + laughs)}), "aliases expand to more than 10000 nodes");
  CHECK_HAS(error_of(std::string(kMinimal) + "zzz: " + laughs + "\n"), "cfg.yaml:6:");
  // Nesting, with aliases counted as what they repeat, or written out.
  CHECK_HAS(error_of(kMinimal, {parse_override("zzz=" + std::string(70, '[') + std::string(70, ']'))}),
            "nested more than 64 levels deep");
  std::string deep = "a: &a " + std::string(40, '[') + std::string(40, ']') + "\nb: &b " + std::string(30, '[') + "*a" +
                     std::string(30, ']') + "\n";
  CHECK_HAS(error_of(std::string(kMinimal) + deep), "cfg.yaml:7:37: nested more than 64 levels deep");
  // A stored configuration (a run file's /config) is read the same way.
  CHECK_THROWS_WITH_AS(config_text_differences("a: &a [*a]\n", "a: 1\n"), doctest::Contains("contains it"), ConfigError);
}

TEST_CASE("config: aliases within the limits read as the nodes they repeat") {
  const Config c = parse(
      "model:\n  layers:\n    - &hidden {type: dense, units: 8, activation: tanh}\n    - *hidden\n    - {units: 2}\n"
      "data: {source: spirals}\n");
  REQUIRE(c.model.layers.size() == 3);
  CHECK(c.model.layers[1].units == 8);
  CHECK(c.model.layers[1].activation == Activation::Tanh);
  const Config s = parse(kMinimal, {parse_override("optimizer.lr={values: &v [0.1, 0.2]}"), parse_override("swarm.size=2")});
  CHECK(s.member_values.size() == 1);
}

TEST_CASE("config: bytes that are not UTF-8 exit 2 at their line and column, in a file or a --set") {
  CHECK(error_of(std::string(kMinimal) + "name: caf\xE9\n") ==
        "cfg.yaml:6:10: byte 0xE9 is not valid UTF-8; text must be UTF-8 (a Latin-1 file converts with iconv -f "
        "latin1 -t utf-8)");
  CHECK_HAS(error_of("# \xC3\x28\n" + std::string(kMinimal)), "cfg.yaml:1:3: byte 0xC3");  // a cut sequence
  CHECK_HAS(error_of("# \xED\xA0\x80 (a surrogate)\n" + std::string(kMinimal)), "cfg.yaml:1:3: byte 0xED");
  CHECK(error_of("# caf\xC3\xA9 \xF0\x9F\x90\x9D\n" + std::string(kMinimal)) == "<no error>");
  // The argument is not echoed past its valid part.
  CHECK(override_error("name=caf\xFF") ==
        "--set name=caf...: character 9: byte 0xFF is not valid UTF-8; text must be UTF-8 (a Latin-1 file converts "
        "with iconv -f latin1 -t utf-8)");
}
