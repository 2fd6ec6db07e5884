// `turbanet sweep`: swarm-size specs, the analytic FLOP count checked by hand, and a small
// sweep end to end (table, CSV and HDF5 output, bad arguments).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "backend/device_choice.h"
#include "cli/commands/commands.h"
#include "run/stored_swarm.h"
#include "eval_test_util.h"
#include "io/h5.h"
#include "io/h5_file.h"
#include "model/flops.h"
#include "run/sweep_run.h"

using namespace tn;
using namespace evaltest;

TEST_CASE("sweep: swarm size specs") {
  CHECK(parse_swarm_sizes("1..128") == std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128});
  CHECK(parse_swarm_sizes("3..20") == std::vector<int>{3, 6, 12, 20});  // the end is always included
  CHECK(parse_swarm_sizes("8..32:8") == std::vector<int>{8, 16, 24, 32});
  CHECK(parse_swarm_sizes("1..10:4") == std::vector<int>{1, 5, 9, 10});
  CHECK(parse_swarm_sizes("1,3,17") == std::vector<int>{1, 3, 17});
  CHECK(parse_swarm_sizes("5") == std::vector<int>{5});
  for (const char* bad : {"0..8", "8..1", "a..b", "1..8:0", "1,,2", "", "-3", "1..8:x"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_swarm_sizes(bad), UsageError);
  }
}

TEST_CASE("sweep: FLOP count of the study's 2-16-2 network, by hand") {
  LossConfig ce;
  ModelConfig m;
  m.layers = {LayerConfig{"dense", 16, Activation::Relu}, LayerConfig{"dense", 2, Activation::Identity}};
  const ModelShape shape = make_model_shape(m, ce, 2, 2, 1);
  // Forward per sample: layer 1 2·2·16 + 16 = 80, layer 2 2·16·2 + 2 = 66.
  CHECK(forward_flops_per_sample(shape) == 146);
  // Backward: weight and bias gradients (146) plus the input gradient of layer 2 (2·16·2).
  CHECK(backward_flops_per_sample(shape) == 210);
  CHECK(shape.params_per_member() == 82);
  OptimizerConfig adam;
  // 2 members, 128 samples full batch (1 step), 3 epochs: 2·3·(128·356 + 82·16).
  CHECK(training_work(shape, {adam, adam}, {128, 128}, 128, 3, 0).flops == 2 * 3 * (128 * 356 + 82 * 16));
  CHECK(training_work(shape, {adam, adam}, {128, 128}, 128, 3, 0).member_samples == 2 * 3 * 128);
  // 100 samples in batches of 32: 4 steps; 10 validation samples add a forward pass each.
  CHECK(training_work(shape, {adam}, {100}, 32, 1, 10).flops == 100 * 356 + 4 * 82 * 16 + 10 * 146);
  OptimizerConfig sgd;
  sgd.type = OptimizerType::Sgd;
  CHECK(update_flops_per_param(sgd.type, 0, false) == 4);
  CHECK(update_flops_per_param(sgd.type, 0.9, true) == 8);
  CHECK(update_flops_per_param(OptimizerType::RmsProp, 0.9, false) == 13);
  CHECK(training_work(shape, {sgd}, {128}, 128, 1, 0).flops == 128 * 356 + 82 * 4);
}

TEST_CASE("sweep: FLOP count of the study's stock LSTM and a stacked GRU, by hand") {
  LossConfig mse;
  mse.type = LossType::Mse;
  ModelConfig m;
  LayerConfig lstm{"lstm", 32};
  m.layers = {lstm, LayerConfig{"dense", 1}};
  const ModelShape shape = make_model_shape(m, mse, 20, 0, 1, 20, 1);
  // LSTM(1, 32), G = 128, windows of 20: input projection 2·20·1·128 = 5120, recurrent
  // 2·19·32·128 = 155648, biases 20·128 = 2560; head 2·32·1 + 1 = 65.
  CHECK(forward_flops_per_sample(shape) == 5120 + 155648 + 2560 + 65);
  // Backward: the same, plus dL/dh through Wh (155648) and the head's input gradient (64).
  CHECK(backward_flops_per_sample(shape) == 163393 + 155648 + 64);
  CHECK(shape.params_per_member() == 1 * 128 + 32 * 128 + 128 + 32 + 1);
  // GRU(2, 4) → GRU(4, 3) → dense(1), windows of 5: G = 12 and 9.
  LayerConfig g1{"gru", 4}, g2{"gru", 3};
  g1.return_sequences = true;
  m.layers = {g1, g2, LayerConfig{"dense", 1}};
  const ModelShape two = make_model_shape(m, mse, 10, 0, 1, 5, 2);
  const double f1 = 2 * 5 * 2 * 12 + 2 * 4 * 4 * 12 + 5 * 12, f2 = 2 * 5 * 4 * 9 + 2 * 4 * 3 * 9 + 5 * 9, head = 2 * 3 + 1;
  CHECK(forward_flops_per_sample(two) == f1 + f2 + head);
  CHECK(backward_flops_per_sample(two) == f1 + f2 + head + 2 * 4 * 12 * 4 + 2 * 4 * 9 * 3 + 2 * 5 * 9 * 4 + 2 * 3);
}

namespace {

SweepOptions small_sweep(const std::string& name) {
  SweepOptions o;
  o.config_path = write_file(name + ".yaml", spirals_yaml(2, 3)).string();
  o.swarm = "1,2";
  o.repeats = 2;
  o.mode = "both";
  o.peak_n = 64;
  o.verbosity = Verbosity::Quiet;
  return o;
}

std::vector<std::vector<std::string>> read_csv(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> row;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) row.push_back(std::exchange(cell, ""));
      else cell += c;
    }
    row.push_back(cell);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST_CASE("sweep: a small sweep in both modes writes the table, CSV and HDF5") {
  SweepOptions o = small_sweep("sweep_ok");
  o.out = scratch("sweep.csv").string();
  int rc = -1;
  const std::string table = capture(1, [&] { rc = run_sweep(o); });
  REQUIRE(rc == kExitOk);
  CHECK(table.find("peak:") != std::string::npos);
  CHECK(table.find("swarm 2:") != std::string::npos);  // the vectorization gain line
  // Each distinct step kernel, with its SIMD target, and the points it ran.
  CHECK_MESSAGE(table.find("kernel: ") != std::string::npos, table);
  CHECK_MESSAGE(table.find("swarm 1") != std::string::npos, table);
  const auto rows = read_csv(*o.out);
  REQUIRE(rows.size() == 5);  // header + (1, 2) x (swarm, sequential)
  const std::vector<std::string>& h = rows[0];
  const auto col = [&](const std::string& name) {
    const auto it = std::find(h.begin(), h.end(), name);
    REQUIRE(it != h.end());
    return static_cast<std::size_t>(it - h.begin());
  };
  CHECK(rows[1][col("mode")] == "swarm");
  CHECK(rows[2][col("mode")] == "sequential");
  CHECK(rows[3][col("swarm")] == "2");
  for (std::size_t r = 1; r < rows.size(); ++r) {
    CHECK(std::stod(rows[r][col("seconds_median")]) > 0);
    CHECK(std::stod(rows[r][col("seconds_min")]) <= std::stod(rows[r][col("seconds_max")]));
    CHECK(std::stod(rows[r][col("gflops")]) > 0);
    CHECK(std::stod(rows[r][col("peak_gflops")]) > 0);
    CHECK(rows[r][col("device")] == (tn::list_gpus().empty() ? "cpu" : "cuda:0"));  // device: auto
    CHECK(rows[r][col("epochs")] == "3");
  }
  // The same FLOPs for both modes of a size; twice as many for twice the members.
  CHECK(rows[1][col("gflop")] == rows[2][col("gflop")]);
  CHECK(std::stod(rows[3][col("gflop")]) == doctest::Approx(2 * std::stod(rows[1][col("gflop")])).epsilon(1e-5));
  // HDF5: one dataset per column.
  o.out = scratch("sweep.h5").string();
  o.mode = "swarm";
  o.epochs = 2;
  capture(1, [&] { rc = run_sweep(o); });
  REQUIRE(rc == kExitOk);
  h5::Session session;
  h5::Handle f = h5::own(H5Fopen(o.out->c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "opening the sweep file");
  CHECK(h5::read_doubles(f.get(), "/sweep/swarm") == std::vector<double>{1, 2});
  CHECK(h5::read_doubles(f.get(), "/sweep/epochs") == std::vector<double>{2, 2});
  CHECK(h5::read_strings(f.get(), "/sweep/mode") == std::vector<std::string>{"swarm", "swarm"});
}

TEST_CASE("sweep: bad arguments exit 2 with a message and write nothing") {
  SweepOptions o = small_sweep("sweep_bad");
  const fs::path out = scratch("never.csv");
  o.out = out.string();
  const auto err = [&](SweepOptions x) { return exit_and_stderr([&] { return run_sweep(x); }); };
  SweepOptions a = o;
  a.swarm = "0..4";
  auto [rc, msg] = err(a);
  CHECK(rc == kExitUsage);
  CHECK(msg.find("--swarm '0..4'") != std::string::npos);
  SweepOptions b = o;
  b.out = scratch("x.txt").string();
  std::tie(rc, msg) = err(b);
  CHECK(rc == kExitUsage);
  CHECK(msg.find("must end in .csv or .h5") != std::string::npos);
  SweepOptions c = o;
  c.set = {"optimizer.lr=-1"};
  std::tie(rc, msg) = err(c);
  CHECK(rc == kExitUsage);
  CHECK(msg.find("optimizer.lr") != std::string::npos);
  CHECK(!fs::exists(out));
}

TEST_CASE("sweep: each column is named and written once, from the row's named fields") {
  SweepRow r;
  r.config = "spirals-small";
  r.mode = "swarm";
  r.swarm = 3;
  r.epochs = 1;
  r.repeats = 2;
  r.seconds_median = 7.171e-06;
  r.seconds_min = r.seconds_max = 7.171e-06;
  r.seconds_per_member = 7.171e-06 / 3;
  r.member_samples_per_s = 5.3549e+07;
  r.gflop = 0.00014064;
  r.gflops = 19.6123;
  r.peak_fraction = 0.961253;
  r.peak_gflops = 20.4029;
  r.peak_rss_mb = 20.0273;
  r.device = "cpu";
  r.threads = 1;
  r.kernel = "fused step";
  r.processes = 1;
  std::string names, cells;
  for (const SweepColumn& c : sweep_columns()) {
    names += fmt::format("{}{}", names.empty() ? "" : ",", c.name);
    cells += fmt::format("{}{}", cells.empty() ? "" : ",", c.cell(r));
    CHECK_MESSAGE((c.text == nullptr) != (c.number == nullptr), c.name);  // text or number, never both
  }
  CHECK(names == "config,mode,swarm,epochs,repeats,seconds_median,seconds_min,seconds_max,seconds_per_member,"
                 "member_samples_per_s,gflop,gflops,peak_fraction,peak_gflops,peak_rss_mb,device,threads,kernel,"
                 "processes");
  CHECK(cells == "spirals-small,swarm,3,1,2,7.171e-06,7.171e-06,7.171e-06,2.39033e-06,5.3549e+07,0.00014064,19.6123,"
                 "0.961253,20.4029,20.0273,cpu,1,fused step,1");
}
