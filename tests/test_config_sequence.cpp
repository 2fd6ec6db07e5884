// Config of sequence data: the random_walk source, data.sequence and their checks against the
// source, split, per-member mode and loss; exact round trips through to_yaml.
#include <doctest/doctest.h>

#include <string>

#include "config/config.h"
#include "config_test_util.h"

using namespace tn;
using namespace tn::test;

namespace {

const char* const kHead = "swarm: {size: 4}\nmodel: {layers: [{units: 1}]}\nloss: mse\n";

// A config whose data section is `walk` (a random_walk source map) plus `rest` (data keys).
std::string walk(const std::string& source, const std::string& rest) {
  return std::string(kHead) + "data:\n  source: " + source + "\n" + rest;
}

const char* const kGroup = "  per_member: {group_by: ticker}\n";
const char* const kSeq = "  sequence: {window: 20, target: close}\n";

}  // namespace

TEST_CASE("config sequence: random_walk source and sequence keys") {
  Config c = parse(walk("{type: random_walk, series: 4, length: 300, seed: 2}",
                        std::string(kGroup) + kSeq));
  CHECK(c.data.source.type == "random_walk");
  CHECK(c.data.source.walk.series == 4);
  CHECK(c.data.source.walk.length == 300);
  CHECK(c.data.source.seed == 2);
  CHECK(c.data.source.walk.drift_lo == -2e-4);
  CHECK(c.data.sequence.window == 20);
  CHECK(c.data.sequence.horizon == 1);
  CHECK(c.data.sequence.stride == 1);
  CHECK(c.data.sequence.features == std::vector<std::string>{"close"});
  CHECK(c.data.sequence.time.empty());
  check_round_trip(c);
  CHECK_HAS(to_yaml(c), "  split:\n    train: 1\n    val: 0\n    test: 0\n  per_member");  // no seed

  c = parse(walk("{type: random_walk, series: 4, length: 50, drift: [-0.001, 0.002], volatility: 0.01, "
                 "season_period: 5, season_amplitude: [0, 0.1], start_price: [10, 1000]}",
                 std::string(kGroup) + "  split: {train: 0.8, val: 0.1, test: 0.1}\n  normalize: minmax\n"
                 "  normalize_per_member: true\n"
                 "  sequence: {window: 7, horizon: 3, stride: 2, target: close, features: [close], time: date}\n"));
  const RandomWalkConfig& w = c.data.source.walk;
  CHECK(w.drift_lo == -0.001);
  CHECK(w.drift_hi == 0.002);
  CHECK(w.volatility_lo == 0.01);
  CHECK(w.volatility_hi == 0.01);
  CHECK(w.season_period == 5);
  CHECK(w.start_hi == 1000);
  CHECK(c.data.sequence.horizon == 3);
  CHECK(c.data.sequence.stride == 2);
  CHECK(c.data.sequence.time == "date");
  CHECK_HAS(to_yaml(c), "sequence: {window: 7, horizon: 3, stride: 2, target: close, features: [close], time: date, transform: none, scale: series}");
  check_round_trip(c);

  // Transform, scale and season, and their round trip.
  c = parse(walk("{type: random_walk, series: 4}", std::string(kGroup) +
                 "  sequence: {window: 5, target: close, transform: pct_change, scale: window, season: 5}\n"));
  CHECK(c.data.sequence.transform == SeriesTransform::PctChange);
  CHECK(c.data.sequence.scale == SeriesScale::Window);
  CHECK(c.data.sequence.season == 5);
  CHECK_HAS(to_yaml(c), "transform: pct_change, scale: window, season: 5}");
  check_round_trip(c);

  // One series needs no group_by.
  c = parse(walk("{type: random_walk, series: 1}", kSeq));
  CHECK(c.data.per_member == PerMember::Shared);
  check_round_trip(c);
}

TEST_CASE("config sequence: csv long-format tables") {
  const fs::path dir = temp_dir("sequence");
  write_file(dir / "prices.csv", "");
  const std::string csv = "{type: csv, path: " + (dir / "prices.csv").string() + "}";
  Config c = parse(walk(csv, std::string(kGroup) +
                                 "  sequence: {window: 5, target: close, features: [open, close, volume], time: date}\n"));
  CHECK(c.data.source.target.empty());
  CHECK(c.data.sequence.features == std::vector<std::string>{"open", "close", "volume"});
  CHECK_HAS(to_yaml(c), "source:\n    type: csv\n    path: ");
  CHECK(to_yaml(c).find("target: \"\"") == std::string::npos);
  check_round_trip(c);
  c = parse(walk(csv, "  per_member: {bootstrap: {fraction: 0.5}}\n  sequence: {window: 5, target: y}\n"));
  check_round_trip(c);

  CHECK_HAS(error_of(walk("{type: csv, path: " + (dir / "prices.csv").string() + ", target: close}",
                          kSeq)),
            "data.source.target: with data.sequence the columns are data.sequence.target and "
            "data.sequence.features; remove data.source.target");
  fs::remove_all(dir);
}

TEST_CASE("config sequence: errors") {
  const std::string rw = "{type: random_walk, series: 4, length: 100}";
  const auto err = [&](const std::string& rest, const std::string& source = "") {
    return error_of(walk(source.empty() ? rw : source, rest));
  };
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 0, target: close}\n"),
            "cfg.yaml:7:22: data.sequence.window: value 0 is out of range; expected an integer >= 1");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, horizon: 0, target: close}\n"),
            "data.sequence.horizon: value 0 is out of range; expected an integer >= 1");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, stride: -1, target: close}\n"),
            "data.sequence.stride: value -1 is out of range");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5}\n"),
            "data.sequence.target: missing required key");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, target: close, widow: 3}\n"),
            "data.sequence.widow: unknown key; allowed: window, horizon, stride, target, features, "
            "time, transform, scale, season; did you mean 'window'?");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, target: close, transform: log}\n"),
            "data.sequence.transform: unknown value 'log'; allowed: none, diff, log_diff, pct_change");
  CHECK_HAS(err(std::string(kGroup) + "  normalize: standard\n  sequence: {window: 5, target: close, scale: window}\n"),
            "data.sequence.scale: window scales each window by its own inputs' mean and std, so data.normalize "
            "('standard') would do nothing; remove data.normalize (and normalize_per_member) or use scale: series");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, target: close, season: 0}\n"),
            "data.sequence.season: value 0 is out of range; expected an integer >= 1");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, target: close, features: []}\n"),
            "data.sequence.features: must name at least one column");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, target: close, features: [close, close]}\n"),
            "data.sequence.features[1]: column 'close' is listed twice");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, target: price}\n"),
            "data.sequence.target: random_walk has one numeric column, 'close'");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, target: close, time: day}\n"),
            "data.sequence.time: random_walk's time column is 'date'");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, target: close, time: close}\n"),
            "data.sequence.time: 'close' is also the target or a feature");
  CHECK_HAS(err(kSeq), "data.sequence: random_walk makes 4 series, and without data.per_member: "
                       "{group_by: ticker} the whole table would be one series");
  CHECK_HAS(err(std::string("  per_member: {group_by: symbol}\n") + kSeq),
            "data.per_member.group_by: random_walk's columns are date, ticker and close");
  CHECK_HAS(err(std::string(kGroup)), "data.source: random_walk makes price series for sequence "
                                      "models; add data.sequence");
  CHECK_HAS(err(std::string(kGroup) + "  split: {train: 0.8, test: 0.2, seed: 3}\n" + kSeq),
            "data.split.seed: sequence splits are chronological");
  CHECK_HAS(err(std::string("  per_member: shards\n") + kSeq, "{type: random_walk, series: 1}"),
            "data.per_member: shards cannot split sequence data");
  CHECK_HAS(err(kSeq, "spirals"), "data.source: sequence data need a long-format table");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: [20]\n"),
            "data.sequence: expected a map like {window: 20, target: close}");
  CHECK_HAS(err(std::string(kGroup) + "  sequence: {window: 5, target: close, features: close}\n"),
            "data.sequence.features: expected a list of column names");
  CHECK_HAS(err("", "{type: random_walk, series: 0}"), "data.source.series: value 0 is out of range");
  CHECK_HAS(err("", "{type: random_walk, drift: [0.1, -0.1]}"),
            "data.source.drift: the range [0.1, -0.1] is reversed; write [-0.1, 0.1]");
  CHECK_HAS(err("", "{type: random_walk, volatility: [1, 2, 3]}"),
            "data.source.volatility: expected a range [low, high] or one number");
  CHECK_HAS(err("", "{type: random_walk, n: 3}"), "data.source.n: only applies to spirals and moons and sine");
  CHECK_HAS(error_of("model: {layers: [{units: 2}]}\ndata:\n  source: " + rw + "\n" + kGroup + kSeq),
            "data.sequence: sequence targets are numbers (the next values of 'close'), so they need a "
            "regression loss: set loss: mse, mae or huber (the loss is cross_entropy)");
  CHECK_HAS(err("  per_member: {group_by: ticker}\n  sequence: {window: 5, target: ticker}\n",
                "{type: csv, path: " + std::string(TURBANET_SOURCE_DIR) + "/data/iris.csv}"),
            "data.per_member.group_by: 'ticker' is also a column of data.sequence");
}
