// `turbanet report`: a small run of each kind (classification, regression, sequence, halving,
// PBT, architectures, a grid of two keys, a checkpoint, an interrupted run, shards and their
// merge) gives its expected sections and no others; the page is well-formed and refers to no
// other file or address; bad input exits 2 and writes nothing; a 10 000-member, 1 000-epoch
// run gives a page under 10 MB; and the axis arithmetic.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <chrono>
#include <cmath>
#include <regex>
#include <set>

#include "cli_test_util.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "io/sweep_file.h"
#include "report/chart.h"
#include "report/markup.h"
#include "report/ticks.h"
#include "run/report_run.h"
#include "seal_test_util.h"

using namespace evaltest;

namespace {

// The section ids of a page, in order.
std::vector<std::string> section_ids(const std::string& html) {
  std::vector<std::string> ids;
  const std::regex re(R"re(<section class="tn-section" id="sec-([a-z-]+)">\s*<h2>)re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it)
    ids.push_back((*it)[1]);
  return ids;
}

// "" when every element of `html` is closed in order (void elements and <x/> excepted), else what is wrong.
std::string nesting_problem(const std::string& html) {
  static const std::set<std::string> empty = {"meta", "br", "hr", "img", "input", "link"};
  std::vector<std::string> open;
  for (std::size_t i = html.find('<'); i != std::string::npos; i = html.find('<', i + 1)) {
    const std::size_t end = html.find('>', i);
    if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
    std::string tag = html.substr(i + 1, end - i - 1);
    if (tag.rfind("!DOCTYPE", 0) == 0) continue;
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(i);
    const bool closing = tag[0] == '/', self = tag.back() == '/';
    tag = tag.substr(closing ? 1 : 0);
    const std::string name = tag.substr(0, tag.find_first_of(" /"));
    if (self || empty.count(name)) continue;
    if (!closing) {
      open.push_back(name);
    } else {
      if (open.empty() || open.back() != name)
        return "</" + name + "> at " + std::to_string(i) + " closes <" + (open.empty() ? "" : open.back()) + ">";
      open.pop_back();
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

// What a page refers to outside itself ("" when nothing).
std::string outside_reference(const std::string& html) {
  for (const char* bad : {"http://", "https://", "src=", "<script", "url(", "@import", "<link"})
    if (html.find(bad) != std::string::npos) return bad;
  const std::regex href(R"re(href="([^"]*)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it)
    if ((*it)[1].str().rfind("#sec-", 0) != 0) return (*it)[0];
  return "";
}

// Reports `run` into RUN.html beside it; requires success and returns the page.
std::string report_of(const fs::path& run) {
  tn::ReportOptions o;
  o.run_path = run.string();
  o.force = true;
  o.verbosity = tn::Verbosity::Quiet;
  REQUIRE(tn::run_report(o) == tn::kExitOk);
  const std::string html = slurp(fs::path(run).replace_extension(".html"));
  CHECK_MESSAGE(nesting_problem(html).empty(), run << ": " << nesting_problem(html));
  CHECK_MESSAGE(outside_reference(html).empty(), run << ": " << outside_reference(html));
  return html;
}

using Ids = std::vector<std::string>;

fs::path train_shipped(const std::string& name, const std::vector<std::string>& set) {
  tn::TrainOptions o;
  o.config_path = (fs::path(TURBANET_SOURCE_DIR) / "configs" / (name + ".yaml")).string();
  o.set = set;
  o.out = scratch("report-" + name + ".h5").string();
  o.force = true;
  o.verbosity = tn::Verbosity::Quiet;
  REQUIRE_MESSAGE(tn::run_train(o) == tn::kExitOk, name);
  return *o.out;
}

}  // namespace

TEST_CASE("report: a classification run shows the run, curves, final metrics and the classification") {
  const fs::path run = train_run("report-class", spirals_yaml(4, 3));
  tn::EvalOptions save = eval_opts(run);
  save.split = "all";
  save.save = "all-vote";
  save.combine = "vote";
  REQUIRE(tn::run_eval(save) == tn::kExitOk);
  const std::string html = report_of(run);
  CHECK(html.find("Also stored, not drawn: all-vote") != std::string::npos);
  CHECK(html.find("Evaluation &#39;test&#39;") != std::string::npos);
  CHECK(section_ids(html) == Ids{"run", "curves", "metrics", "classification"});
  for (const char* part : {"Training loss", "Validation loss", "Validation accuracy", "Confusion matrix",
                           "Reliability diagram (ECE", "predictive entropy", "mutual information", "configuration"})
    CHECK_MESSAGE(html.find(part) != std::string::npos, part);
  CHECK(html.find("does not record the command") != std::string::npos);  // trained by a call, not a command line
  // The median is drawn darker than its 5-95 % band, so the legend tells them apart.
  CHECK(html.find("stroke=\"#114163\"") != std::string::npos);
}

TEST_CASE("report: a run trained by the turbanet command records its command line and the page shows it") {
  const fs::path dir = tn::test::scratch_path("report-command", "");
  fs::create_directories(dir);
  std::ofstream(dir / "it's c.yaml") << spirals_yaml(2, 2);
  const auto [rc, out] = tn::test::run_binary_in(dir, {"train", "it's c.yaml", "--set", "train.epochs=1", "--out", "r.h5"});
  REQUIRE_MESSAGE(rc == 0, out);
  const tn::RunFile f = tn::read_run_file((dir / "r.h5").string());
  CHECK(f.meta.command == std::string(TURBANET_BINARY) + " train 'it'\\''s c.yaml' --set train.epochs=1 --out r.h5");
  const std::string html = tn::report_html(f, (dir / "r.h5").string(), nullptr);
  CHECK(html.find("<h3>Command</h3>") != std::string::npos);
  CHECK(html.find(" train &#39;it&#39;\\&#39;&#39;s c.yaml&#39; --set train.epochs=1 --out r.h5</pre>") != std::string::npos);
  CHECK(html.find("does not record the command") == std::string::npos);
}

TEST_CASE("report: a regression run with a swept learning rate shows it against the metric on a log axis") {
  const std::string yaml =
      "name: sine\nseed: 1\nswarm: {size: 6}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: tanh}\n"
      "    - {type: dense, units: 1}\nloss: mse\noptimizer: {type: adam, lr: {logspace: [1.0e-4, 1.0e-1]}}\n"
      "data:\n  source: {type: sine, n: 200}\n  split: {train: 0.8, test: 0.2}\ntrain: {epochs: 3, batch_size: 32}\n";
  const std::string html = report_of(train_run("report-sine", yaml));
  CHECK(section_ids(html) == Ids{"run", "curves", "metrics", "hparams", "regression"});
  CHECK(html.find("optimizer.lr (log)") != std::string::npos);
  CHECK(html.find("Predicted against actual") != std::string::npos);
  CHECK(html.find("Ensemble spread against its error") != std::string::npos);
  CHECK(html.find("No validation curves") != std::string::npos);  // no val split: said, not failed
}

TEST_CASE("report: sequence runs draw their series, one member per series or the ensemble band") {
  const fs::path walk = train_shipped("random-walk", {"swarm.size=8", "data.source.series=8", "train.epochs=1"});
  const std::string per_series = report_of(walk);
  CHECK(section_ids(per_series) == Ids{"run", "curves", "metrics", "regression", "series"});
  CHECK(per_series.find("with the largest and the 3 with the smallest MAE of the 8") != std::string::npos);
  CHECK(per_series.find("In the target's original units") != std::string::npos);
  const std::string yaml =
      "name: walk\nseed: 3\nswarm: {size: 3}\nmodel:\n  layers:\n    - {type: lstm, units: 4}\n    - {units: 1}\n"
      "loss: mse\noptimizer: {type: adam, lr: 0.01}\n"
      "data:\n  source: {type: random_walk, series: 1, length: 120}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n"
      "  normalize: standard\n  sequence: {window: 6, target: close}\ntrain: {epochs: 2, batch_size: 16}\n";
  const std::string shared = report_of(train_run("report-walk", yaml));
  CHECK(section_ids(shared) == Ids{"run", "curves", "metrics", "regression", "series"});
  CHECK(shared.find("ensemble ± 2 std") != std::string::npos);
}

TEST_CASE("report: halving over a grid of two keys shows the rungs and the heat map") {
  const fs::path run =
      train_shipped("spirals-halving", {"swarm.size=8", "optimizer.lr.num=2", "train.epochs=5", "search.rungs=[2, 3]"});
  const std::string html = report_of(run);
  CHECK(section_ids(html) == Ids{"run", "curves", "metrics", "hparams", "grid", "classification", "halving"});
  CHECK(html.find("mean accuracy over the grid") != std::string::npos);
  // The heat map's light labels are set by style: a fill attribute loses to the page's CSS for
  // chart text, which made every label dark grey, unreadable on dark cells.
  CHECK(html.find("class=\"tn-cell\" style=\"fill:") != std::string::npos);
  CHECK(html.find("class=\"tn-cell\" fill=") == std::string::npos);
  CHECK(html.find("by the rung that stopped the member") != std::string::npos);
  CHECK(html.find("stopped (") != std::string::npos);  // members stopped at a rung are marked on the curves
}

TEST_CASE("report: PBT shows who copied whom and the best member's lineage") {
  const std::string html = report_of(train_shipped("spirals-pbt", {"swarm.size=8", "train.epochs=5", "search.every_epochs=2"}));
  CHECK(section_ids(html) == Ids{"run", "curves", "metrics", "hparams", "classification", "pbt"});
  CHECK(html.find("Copies per round") != std::string::npos);
  CHECK(html.find("optimizer.lr per round") != std::string::npos);
  CHECK(html.find("(the best)") != std::string::npos);
  CHECK(html.find("they are the ones members started with") != std::string::npos);
}

TEST_CASE("report: a swarm of several architectures shows the metric per architecture") {
  const std::string html = report_of(train_shipped("spirals-widths", {"swarm.size=21", "train.epochs=1"}));
  const Ids ids = section_ids(html);
  CHECK(std::count(ids.begin(), ids.end(), "architectures") == 1);
  CHECK(ids.front() == "run");
  CHECK(ids.back() == "classification");
  CHECK(html.find("dense 256 tanh, dense 256 tanh, dense 256 tanh, dense 2") != std::string::npos);
}

TEST_CASE("report: a checkpoint and an interrupted run say what they lack instead of failing") {
  // A checkpoint: the training state, no predictions or evaluations.
  const fs::path ck = scratch("report-ck.ckpt.h5");
  const std::string yaml = spirals_yaml(3, 2);
  const fs::path run = train_run("report-ck", yaml.substr(0, yaml.find("train: {")) +
                                                  "train: {epochs: 2, batch_size: 64, checkpoint: {every_epochs: 1, "
                                                  "path: '" + ck.string() + "'}}\n");
  // The report reads everything but the tensors: no parameters, optimizer state or member predictions.
  const tn::RunFile whole = tn::read_run_file(ck.string()), records = tn::read_run_records(ck.string());
  CHECK(records.params.empty());
  CHECK(records.init_params.empty());
  CHECK(records.state.opt1.empty());
  CHECK(records.state.data_fingerprint == whole.state.data_fingerprint);
  CHECK(records.train_loss.data == whole.train_loss.data);
  CHECK(records.meta.epochs == whole.meta.epochs);
  const tn::RunFile finished = tn::read_run_records(run.string());
  REQUIRE(finished.find_predictions("test") != nullptr);
  CHECK(finished.find_predictions("test")->members.data.empty());
  CHECK(finished.find_predictions("test")->ensemble_mean.data.size() > 0);
  CHECK(finished.evals.size() == 1);
  const std::string c = report_of(ck);
  CHECK(section_ids(c) == Ids{"run", "curves", "metrics", "classification"});
  CHECK(c.find("This is a checkpoint of 2 epochs") != std::string::npos);
  CHECK(c.find("No evaluation is stored") != std::string::npos);

  tn::RunFile f = tn::read_run_file(run.string());
  f.meta.interrupted = true;
  f.predictions.clear();
  f.evals.clear();
  const fs::path stopped = scratch("report-interrupted.h5");
  tn::write_run_file(stopped.string(), f);
  const std::string i = report_of(stopped);
  CHECK(section_ids(i) == Ids{"run", "curves", "metrics", "classification"});
  CHECK(i.find("Training was interrupted") != std::string::npos);
  CHECK(i.find("where training was interrupted") != std::string::npos);

  // A member that diverged is marked where its curve ends.
  f = tn::read_run_file(run.string());
  f.diverged_epoch[1] = 2;
  f.train_loss.data[1 * 2 + 1] = INFINITY;
  f.val_loss.data[1 * 2 + 1] = NAN;
  const fs::path diverged = scratch("report-diverged.h5");
  tn::write_run_file(diverged.string(), f);
  const std::string d = report_of(diverged);
  CHECK(d.find("diverged (1)") != std::string::npos);
  CHECK(d.find("member 1 diverged in epoch 2") != std::string::npos);
}

TEST_CASE("report: a shard says which members it holds, and the merged run reads as one") {
  const fs::path yaml = write_file("report-shard.yaml", spirals_yaml(4, 2));
  std::vector<std::string> parts;
  for (const char* k : {"0/2", "1/2"}) {
    tn::TrainOptions o;
    o.config_path = yaml.string();
    o.out = scratch("report-shard.h5").string();
    o.shard = k;
    o.force = true;
    o.verbosity = tn::Verbosity::Quiet;
    REQUIRE(tn::run_train(o) == tn::kExitOk);
  }
  for (const char* k : {"0", "1"}) parts.push_back(scratch(std::string("report-shard.shard-") + k + "-of-2.h5").string());
  const std::string shard = report_of(parts[1]);
  CHECK(shard.find("This file is shard 1 of 2 (members 2..3 of 4)") != std::string::npos);
  tn::MergeOptions m;
  m.out = scratch("report-merged.h5").string();
  m.parts = parts;
  m.force = true;
  m.verbosity = tn::Verbosity::Quiet;
  REQUIRE(tn::run_merge(m) == tn::kExitOk);
  const std::string merged = report_of(m.out);
  CHECK(section_ids(merged) == Ids{"run", "curves", "metrics", "classification"});
  CHECK(merged.find("This file is shard") == std::string::npos);
}

TEST_CASE("report: bad input exits 2 and writes nothing, an existing page needs --force") {
  const fs::path run = train_run("report-bad", spirals_yaml(2, 1));
  const fs::path page = scratch("report-bad.html");
  fs::remove(page);
  tn::ReportOptions o;
  o.verbosity = tn::Verbosity::Quiet;
  std::string want;
  SUBCASE("a damaged run file") {
    std::vector<char> bytes = tn::test::file_bytes(run.string());
    bytes[bytes.size() / 2] ^= 0x5a;
    o.run_path = scratch("report-damaged.h5").string();
    tn::test::put_bytes(o.run_path, bytes);
    o.out = page.string();
    want = "damaged";
  }
  SUBCASE("a run file of another format version") {
    tn::RunFile f = tn::read_run_file(run.string());
    o.run_path = scratch("report-v99.h5").string();
    tn::write_run_file(o.run_path, f);
    const hid_t h = H5Fopen(o.run_path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t a = H5Aopen(h, "format_version", H5P_DEFAULT);
    const int v = 99;
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
    H5Fclose(h);
    tn::test::reseal(o.run_path);
    o.out = page.string();
    want = "format_version 99";
  }
  SUBCASE("the page is the run file") {
    o.run_path = run.string();
    o.out = run.string();
    o.force = true;
    want = "is the command's own input";
  }
  SUBCASE("a missing run file") {
    o.run_path = scratch("report-none.h5").string();
    o.out = page.string();
    want = "does not exist";
  }
  const std::string before = slurp(run);
  auto [rc, err] = exit_and_stderr([&] { return tn::run_report(o); });
  CHECK(rc == tn::kExitUsage);
  CHECK_MESSAGE(err.find(want) != std::string::npos, err);
  CHECK_FALSE(fs::exists(page));
  CHECK(slurp(run) == before);
}

TEST_CASE("report: the default page is RUN.html beside the run, it is replaced only with --force") {
  const fs::path run = train_run("report-force", spirals_yaml(2, 1));
  const fs::path page = fs::path(run).replace_extension(".html");
  write_file("report-force.html", "keep me");
  tn::ReportOptions o;
  o.run_path = run.string();
  o.verbosity = tn::Verbosity::Quiet;
  auto [rc, err] = exit_and_stderr([&] { return tn::run_report(o); });
  CHECK(rc == tn::kExitUsage);
  CHECK_MESSAGE(err.find("already exists; pass --force") != std::string::npos, err);
  CHECK(slurp(page) == "keep me");
  o.force = true;
  CHECK(tn::run_report(o) == tn::kExitOk);
  CHECK(slurp(page).rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(tn::default_report_path("runs/a.b/run") == "runs/a.b/run.html");
  CHECK(tn::default_report_path("runs/x.h5") == "runs/x.html");
}

TEST_CASE("report: 10 000 members of 1 000 epochs make a page under 10 MB in seconds") {
  const int S = 10000, E = 1000;
  tn::RunFile f;
  f.config_yaml = "name: big\n";
  f.meta.name = "big";
  f.meta.swarm_size = S;
  f.meta.epochs = E;
  f.meta.device = "cpu";
  f.train_loss.shape = {static_cast<std::uint64_t>(S), static_cast<std::uint64_t>(E)};
  f.train_loss.data.resize(static_cast<std::size_t>(S) * E);
  f.val_loss = f.train_loss;
  f.diverged_epoch.assign(S, -1);
  f.stopped_epoch.assign(S, -1);
  std::vector<double> lr(S);
  tn::EvalRecord e;
  e.split = "test";
  e.task = "regression";
  e.combine = "mean";
  e.metrics = {"mse", "rmse", "mae", "r2"};
  for (int s = 0; s < S; ++s) {
    lr[static_cast<std::size_t>(s)] = std::pow(10.0, -4 + 3.0 * s / S);
    for (int t = 0; t < E; ++t) {
      f.train_loss.data[static_cast<std::size_t>(s) * E + t] = static_cast<float>(1.0 / (1 + t * lr[static_cast<std::size_t>(s)] * 10));
      f.val_loss.data[static_cast<std::size_t>(s) * E + t] = f.train_loss.data[static_cast<std::size_t>(s) * E + t] * 1.1f;
    }
    if (s % 100 == 0) f.diverged_epoch[static_cast<std::size_t>(s)] = 500;
    e.member.push_back(s);
    for (const double x : {0.5, std::sqrt(0.5), 0.6, 0.3}) e.members.push_back(x + s * 1e-5);
  }
  e.member_mean = e.member_std = e.ensemble = {0.4, 0.63, 0.5, 0.4};
  f.evals.push_back(e);
  f.members.hparams.push_back({"optimizer.lr", lr});
  const auto t0 = std::chrono::steady_clock::now();
  const std::string html = tn::report_html(f, "big.h5");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("10000 members x 1000 epochs: " << html.size() / 1e6 << " MB in " << seconds << " s");
  CHECK(html.size() < 10'000'000);
  CHECK(seconds < 20);
  const std::size_t faint = html.find("Faint curves: 60 of the 10000 members");
  CHECK(faint != std::string::npos);
  CHECK(html.find("Faint curves", faint + 1) == std::string::npos);  // said once, under all the charts
  CHECK(html.find("300 of 1000 epochs drawn") != std::string::npos);
  CHECK(nesting_problem(html).empty());
}

TEST_CASE("report: scatter plots keep their points off the frame") {
  tn::report::Chart c;
  c.points = {{0, 0, "#000", false, ""}, {1, 1, "#000", false, ""}};
  c.x.log = false;
  const auto xs = [](const std::string& svg) {
    std::vector<double> x;
    const std::regex cx(R"re(<circle cx="([0-9.]+)")re");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), cx); it != std::sregex_iterator(); ++it)
      x.push_back(std::stod((*it)[1]));
    return x;
  };
  const std::vector<double> framed = xs(tn::report::render(c));
  REQUIRE(framed.size() == 2);
  CHECK(framed[0] == 64);   // on the left edge of the plot
  CHECK(framed[1] == c.width - 16);  // on the right edge
  c.pad = true;
  const std::vector<double> padded = xs(tn::report::render(c));
  REQUIRE(padded.size() == 2);
  CHECK(padded[0] > 64);
  CHECK(padded[1] < c.width - 16);
}

TEST_CASE("report: nice ticks, log ticks, down-sampling and escaping") {
  const std::vector<double> unit = tn::report::nice_ticks(0, 1, 5);
  REQUIRE(unit.size() == 6);
  CHECK(unit[1] == doctest::Approx(0.2));
  CHECK(unit[5] == doctest::Approx(1));
  const std::vector<double> t = tn::report::nice_ticks(0.13, 0.87, 6);
  CHECK(t.front() <= 0.13);
  CHECK(t.back() >= 0.87);
  // Counts, rounds and epochs: whole-number ticks only (a histogram of 3 members had steps of 0.5).
  CHECK(tn::report::nice_ticks(0, 3, 6) == std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5, 3});
  CHECK(tn::report::nice_ticks(0, 3, 6, true) == std::vector<double>{0, 1, 2, 3});
  CHECK(tn::report::log_ticks(1e-4, 0.1) == std::vector<double>{1e-4, 1e-3, 1e-2, 0.1});
  CHECK(tn::report::log_ticks(2, 30).size() == 7);  // 1 2 5 10 20 50 100
  CHECK(tn::report::downsample(1000, 3) == std::vector<std::size_t>{0, 499, 999});
  CHECK(tn::report::downsample(2, 300).size() == 2);
  CHECK(tn::report::wants_log_axis({1e-4, 1e-2}));
  CHECK_FALSE(tn::report::wants_log_axis({0, 1e-2}));
  CHECK(tn::report::escape("<a href=\"x\">&'") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  CHECK(tn::report::tick_text(0.001) == "0.001");
  CHECK(tn::report::fixed(-0.04) == "0");
}

TEST_CASE("report: a sweep table (CSV or HDF5) draws time against swarm size, another CSV exits 2 naming the column") {
  const std::string header =
      "config,mode,swarm,epochs,repeats,seconds_median,seconds_min,seconds_max,seconds_per_member,member_samples_per_s,"
      "gflop,gflops,peak_fraction,peak_gflops,peak_rss_mb,device,threads,kernel,processes\n";
  std::string rows;
  for (const int s : {1, 2, 4, 8})
    for (const char* mode : {"swarm", "sequential"})
      rows += std::string("configs/spirals-small.yaml,") + mode + "," + std::to_string(s) + ",2,3," +
              std::to_string(0.1 * s) + ",0.09,0.2,0.1,1000,1,10,0.1,100,50,cpu,2,\"cpu, 8 members/block\",1\n";
  const fs::path csv = write_file("report-sweep.csv", header + rows);
  const std::string html = report_of(csv);
  CHECK(section_ids(html) == Ids{"run", "sweep"});
  CHECK(html.find("configs/spirals-small.yaml (sequential)") != std::string::npos);
  CHECK(html.find("cpu, 8 members/block") != std::string::npos);
  CHECK(html.find("measured peak") != std::string::npos);

  // The same table as turbanet sweep --out FILE.h5 writes it.
  tn::SweepTable t;
  t.version = "0.1.0";
  t.peak_gflops = 80;
  t.columns = {"config", "mode", "swarm", "seconds_median", "device"};
  t.text = {{"a.yaml", "a.yaml"}, {"swarm", "swarm"}, {}, {}, {"cpu", "cpu"}};
  t.num = {{}, {}, {1, 64}, {0.5, 0.9}, {}};
  const fs::path h5 = scratch("report-sweep.h5");
  tn::write_sweep_file(h5.string(), t);
  const std::string from_h5 = report_of(h5);
  CHECK(section_ids(from_h5) == Ids{"run", "sweep"});
  CHECK(from_h5.find("a.yaml (swarm)") != std::string::npos);
  CHECK(from_h5.find("80 GFLOP/s") != std::string::npos);

  tn::ReportOptions o;
  o.run_path = write_file("report-other.csv", "a,b\n1,2\n").string();
  o.out = scratch("report-other.html").string();
  o.verbosity = tn::Verbosity::Quiet;
  auto [rc, err] = exit_and_stderr([&] { return tn::run_report(o); });
  CHECK(rc == tn::kExitUsage);
  CHECK_MESSAGE(err.find("report-other.csv:1: no column 'config'") != std::string::npos, err);
  CHECK_FALSE(fs::exists(*o.out));
}
