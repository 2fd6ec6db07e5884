// Helpers shared by the config tests: parsing with messages, temporary files, and a
// field-by-field comparison for to_yaml round trips.
#pragma once
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.h"

namespace tn::test {

namespace fs = std::filesystem;

// The smallest valid configuration: everything else defaults.
inline const char* const kMinimal = "model:\n  layers:\n    - {units: 2}\ndata:\n  source: spirals\n";

inline Config parse(const std::string& text, const std::vector<Override>& ov = {}) {
  return parse_config(text, "cfg.yaml", ov);
}

// The ConfigError message of parsing `text`, or "<no error>".
inline std::string error_of(const std::string& text, const std::vector<Override>& ov = {}) {
  try {
    parse(text, ov);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

inline std::string load_error(const std::string& path) {
  try {
    load_config(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

// kMinimal followed by `extra` top-level text.
inline std::string with(const std::string& extra) { return std::string(kMinimal) + extra; }

#define CHECK_HAS(msg, part) CHECK_MESSAGE((msg).find(part) != std::string::npos, (msg))

inline void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A fresh, empty temporary directory for one test.
inline fs::path temp_dir(const std::string& name) {
  // The pid keeps tests that ctest runs in parallel (separate processes) apart.
  const fs::path d = fs::temp_directory_path() / ("turbanet_test_config_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline void check_same(const Config& a, const Config& b) {
  CHECK(a.name == b.name);
  CHECK(a.seed == b.seed);
  CHECK(a.device == b.device);
  CHECK(a.device_index == b.device_index);
  CHECK(a.swarm.size == b.swarm.size);
  CHECK(a.swarm.first_member == b.swarm.first_member);
  REQUIRE(a.model.layers.size() == b.model.layers.size());
  for (std::size_t i = 0; i < a.model.layers.size(); ++i) {
    const LayerConfig &x = a.model.layers[i], &y = b.model.layers[i];
    CHECK(x.type == y.type);
    CHECK(x.units == y.units);
    CHECK(x.activation == y.activation);
    CHECK(x.leaky_slope == y.leaky_slope);
    CHECK(x.init == y.init);
  }
  CHECK(a.model.init_scale == b.model.init_scale);
  CHECK(a.device_precision == b.device_precision);
  REQUIRE(a.member_values.size() == b.member_values.size());
  for (std::size_t i = 0; i < a.member_values.size(); ++i) {
    const MemberValues &x = a.member_values[i], &y = b.member_values[i];
    CHECK(x.key == y.key);
    CHECK(x.form == y.form);
    CHECK(x.values == y.values);
    CHECK(x.lo == y.lo);
    CHECK(x.hi == y.hi);
    CHECK(x.count() == y.count());
    CHECK(x.stride == y.stride);
  }
  CHECK(a.grid == b.grid);
  CHECK(a.loss.type == b.loss.type);
  CHECK(a.loss.huber_delta == b.loss.huber_delta);
  const OptimizerConfig &o = a.optimizer, &p = b.optimizer;
  CHECK(o.type == p.type);
  CHECK(o.lr == p.lr);
  CHECK(o.beta1 == p.beta1);
  CHECK(o.beta2 == p.beta2);
  CHECK(o.eps == p.eps);
  CHECK(o.momentum == p.momentum);
  CHECK(o.nesterov == p.nesterov);
  CHECK(o.alpha == p.alpha);
  CHECK(o.weight_decay == p.weight_decay);
  CHECK(o.grad_clip == p.grad_clip);
  CHECK(a.schedule.type == b.schedule.type);
  CHECK(a.schedule.warmup_epochs == b.schedule.warmup_epochs);
  CHECK(a.schedule.step_every == b.schedule.step_every);
  CHECK(a.schedule.gamma == b.schedule.gamma);
  CHECK(a.schedule.min_lr == b.schedule.min_lr);
  const SourceConfig &s = a.data.source, &t = b.data.source;
  CHECK(s.type == t.type);
  CHECK(s.n == t.n);
  CHECK(s.noise == t.noise);
  CHECK(s.rotations == t.rotations);
  CHECK(s.seed == t.seed);
  CHECK(s.path == t.path);
  CHECK(s.features == t.features);
  CHECK(s.features_from == t.features_from);
  CHECK(s.features_to == t.features_to);
  CHECK(s.target == t.target);
  CHECK(s.walk == t.walk);
  CHECK(a.data.sequence == b.data.sequence);
  const auto files = [](const SourceConfig& c) {  // idx, hdf5 and npy keys
    return std::vector<std::string>{c.images,         c.labels,         c.test_images,
                                    c.test_labels,    c.x_dataset,      c.y_dataset,
                                    c.test_x_dataset, c.test_y_dataset, c.x_path,
                                    c.y_path,         c.test_x_path,    c.test_y_path};
  };
  CHECK(files(s) == files(t));
  CHECK(a.data.split.train == b.data.split.train);
  CHECK(a.data.split.val == b.data.split.val);
  CHECK(a.data.split.test == b.data.split.test);
  CHECK(a.data.split.seed == b.data.split.seed);
  CHECK(a.data.per_member == b.data.per_member);
  CHECK(a.data.member_fraction == b.data.member_fraction);
  CHECK(a.data.group_by == b.data.group_by);
  CHECK(a.data.normalize == b.data.normalize);
  CHECK(a.data.normalize_per_member == b.data.normalize_per_member);
  CHECK(a.train.epochs == b.train.epochs);
  CHECK(a.train.batch_size == b.train.batch_size);
  CHECK(a.train.shuffle == b.train.shuffle);
  CHECK(a.train.log_every == b.train.log_every);
  CHECK(a.output.path == b.output.path);
  CHECK(a.output.predictions == b.output.predictions);
}

inline void check_round_trip(const Config& c) {
  const std::string text = to_yaml(c);
  INFO(text);
  check_same(parse_config(text, "x"), c);
}

}  // namespace tn::test
