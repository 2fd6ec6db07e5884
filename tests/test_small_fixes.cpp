// Smaller practitioner fixes: swarm.size from the number of groups, NumPy-style logspace
// exponents, unknown subcommands, readable numeric flag errors, data files given as configs.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "cli_test_util.h"
#include "config/config.h"
#include "data/member_sets.h"
#include "data/prepare.h"

using namespace tn;
using tn::test::run_binary_in;
using tn::test::scratch_path;
using tn::test::write_text;

namespace {

std::string grouped_csv() {
  std::string csv = "g,x,y\n";
  for (int i = 0; i < 40; ++i) csv += fmt::format("s{},{},{}\n", i % 5, i, i % 3);
  return write_text(scratch_path("small", "grouped.csv"), csv).string();
}

std::string grouped_yaml(const std::string& swarm) {
  return swarm + "model: {layers: [{units: 1}]}\nloss: mse\ndata:\n  source: {type: csv, path: " + grouped_csv() +
         ", target: y}\n  per_member: {group_by: g}\n";
}

}  // namespace

TEST_CASE("swarm.size defaults to the number of groups, a size that differs is still an error") {
  Config c = parse_config(grouped_yaml(""), "g.yaml");
  CHECK(c.swarm.size_from_groups);
  const PreparedData d = prepare_data(load_dataset(c.data, false), c.data);
  resolve_group_swarm(c, d);
  CHECK(c.swarm.size == 5);
  CHECK(!c.swarm.size_from_groups);
  CHECK(make_member_sets(c, d).offset.size() == 6);
  CHECK(parse_config(to_yaml(c), "again").swarm.size == 5);  // stored resolved

  Config given = parse_config(grouped_yaml("swarm: {size: 4}\n"), "g.yaml");
  CHECK(!given.swarm.size_from_groups);
  resolve_group_swarm(given, d);
  CHECK_THROWS_WITH_AS(make_member_sets(given, d), doctest::Contains("the data has 5 groups; set swarm.size: 5"),
                       ConfigError);
  const Config walk = parse_config(
      "model: {layers: [{type: lstm, units: 4}, {units: 1}]}\nloss: mse\ndata:\n  source: {type: random_walk, series: 7, "
      "length: 50}\n  per_member: {group_by: ticker}\n  sequence: {window: 5, target: close}\n",
      "w.yaml");
  CHECK(walk.swarm.size == 7);
  CHECK_THROWS_WITH_AS(parse_config(grouped_yaml("optimizer: {lr: {logspace: [1.0e-4, 1.0e-1]}}\n"), "g.yaml"),
                       doctest::Contains("give num"), ConfigError);
}

TEST_CASE("logspace takes NumPy's exponents and base") {
  const auto values = [](const std::string& lr) {
    const Config c = parse_config("swarm: {size: 4}\nmodel: {layers: [{units: 2}]}\ndata: {source: spirals}\n"
                                  "optimizer: {lr: " + lr + "}\n",
                                  "l.yaml");
    const MemberValues* mv = find_member_values(c, "optimizer.lr");
    REQUIRE(mv != nullptr);
    std::vector<double> v;
    for (int k = 0; k < 4; ++k) v.push_back(mv->at(k));
    return v;
  };
  const std::vector<double> numpy = values("{logspace: {base: 10, exponents: [-4, -1]}}");
  CHECK(numpy == values("{logspace: [1.0e-4, 1.0e-1]}"));
  CHECK(numpy[0] == doctest::Approx(1e-4));
  CHECK(numpy[1] == doctest::Approx(1e-3));
  CHECK(numpy[3] == doctest::Approx(1e-1));
  CHECK(values("{logspace: {exponents: [-3, 0], base: 2}}")[0] == doctest::Approx(0.125));
  CHECK(values("{logspace: {exponents: [-4, -1]}}") == numpy);  // base 10 by default
  CHECK_THROWS_WITH_AS(values("{logspace: {exponents: [-4]}}"), doctest::Contains("two exponents"), ConfigError);
  CHECK_THROWS_WITH_AS(values("{logspace: {exponents: [-4, -1], base: 1}}"), doctest::Contains("must not be 1"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(values("{logspace: {exponent: [-4, -1]}}"), doctest::Contains("did you mean 'exponents'"),
                       ConfigError);
}

TEST_CASE("the command line: unknown subcommands, numeric flags, data files given as configs") {
  const auto dir = scratch_path("small", "");
  auto [rc, out] = run_binary_in(dir, {"trian", "x.yaml"});
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("unknown subcommand 'trian'; did you mean 'train'?") != std::string::npos, out);
  std::tie(rc, out) = run_binary_in(dir, {"TRAIN", "x.yaml"});  // case is ignored, as for config keys
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("unknown subcommand 'TRAIN'; did you mean 'train'?") != std::string::npos, out);
  std::tie(rc, out) = run_binary_in(dir, {"train", "--swarm", "-3", "x.yaml"});
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("must be a whole number >= 1, got '-3'") != std::string::npos, out);
  CHECK_MESSAGE(out.find("1797693") == std::string::npos, out);
  std::tie(rc, out) = run_binary_in(dir, {"eval", "r.h5", "--threads", "many"});
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("must be a whole number >= 0, got 'many'") != std::string::npos, out);

  const std::string csv = write_text(scratch_path("small", "table.csv"), "a,b,label\n1,2,0\n3,4,1\n").string();
  std::tie(rc, out) = run_binary_in(dir, {"train", csv});
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("is a CSV data file, not a YAML config") != std::string::npos, out);
  CHECK_MESSAGE(out.find("3,4,1") == std::string::npos, out);
  const std::string h5 = write_text(scratch_path("small", "run.bin"), std::string("\x89HDF\r\n\x1a\n\0\0\0", 11)).string();
  std::tie(rc, out) = run_binary_in(dir, {"train", h5});
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("is an HDF5 file, not a YAML config") != std::string::npos, out);
}
