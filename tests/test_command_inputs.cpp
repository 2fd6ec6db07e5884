// No command writes over its own inputs or over files that are not outputs, with --force or
// without: the config, the data, the --resume checkpoint and the model.init_from run are
// inputs (also through a symbolic or hard link); a checkpoint path that exists and is not
// the one being resumed needs --force; outputs are regular files (never a FIFO or a device);
// a path with a NUL or another control character is refused naming its key. Each refusal
// exits 2 and leaves every file as it was.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "cli/commands/commands.h"
#include "cli_test_util.h"
#include "io/run_file.h"

using namespace tn;
using tn::test::logged;
using tn::test::slurp;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) { return tn::test::scratch_path("own-inputs", name); }

// A classification CSV (two features, two classes) and a config that trains on it.
fs::path data_csv() {
  std::string text = "x,y,label\n";
  for (int i = 0; i < 40; ++i)
    text += std::to_string(i % 7 * 0.1) + "," + std::to_string(i % 5 * -0.2) + "," + (i % 2 ? "a" : "b") + "\n";
  return tn::test::write_text(scratch("data.csv"), text);
}

std::string csv_yaml(const std::string& extra = "") {
  return "name: own\nseed: 1\ndevice: cpu\nswarm: {size: 2}\nmodel: {layers: [{units: 4, activation: tanh}, {units: 2}]}\n"
         "loss: cross_entropy\ndata:\n  source: {type: csv, path: '" + data_csv().string() + "', target: label}\n"
         "  split: {train: 0.75, test: 0.25}\ntrain: {epochs: 2, batch_size: 8}\n" + extra;
}

fs::path config(const std::string& name, const std::string& extra = "") {
  return tn::test::write_text(scratch(name), csv_yaml(extra));
}

TrainOptions train_to(const fs::path& cfg, const fs::path& out, bool force = false) {
  TrainOptions o;
  o.config_path = cfg.string();
  o.out = out.string();
  o.force = force;
  o.verbosity = Verbosity::Quiet;
  return o;
}

// Runs `fn` (a command returning its exit code), requires exit 2 and that the log names every
// string of `names`, and that `kept` is byte-identical afterwards.
template <class Fn>
void refused(Fn&& fn, const std::vector<std::string>& names, const fs::path& kept) {
  const std::string before = slurp(kept);
  int rc = -1;
  const std::string log = logged([&] { rc = fn(); });
  CHECK_MESSAGE(rc == kExitUsage, log);
  for (const std::string& n : names) CHECK_MESSAGE(log.find(n) != std::string::npos, "missing '" << n << "' in: " << log);
  CHECK(slurp(kept) == before);
}

// A run with its checkpoint (every epoch), trained fresh.
fs::path trained_with_checkpoint(const std::string& name) {
  const fs::path out = scratch(name + ".h5");
  TrainOptions o = train_to(config(name + ".yaml"), out, true);
  o.set = {"train.checkpoint.every_epochs=1"};
  REQUIRE(run_train(o) == kExitOk);
  REQUIRE(fs::exists(scratch(name + ".ckpt.h5")));
  return out;
}

}  // namespace

TEST_CASE("command inputs: train --out naming the config or the data is refused, even with --force") {
  const fs::path cfg = config("self.yaml");
  refused([&] { return run_train(train_to(cfg, cfg, true)); },
          {"output.path: '" + cfg.string() + "' is the command's own input (the config file"}, cfg);
  refused([&] { return run_train(train_to(cfg, data_csv(), true)); },
          {"is the command's own input (data.source.path '" + data_csv().string() + "')"}, data_csv());
  // Through a symbolic link and a hard link to the data.
  const fs::path link = scratch("link.csv"), hard = scratch("hard.csv");
  fs::remove(link);
  fs::remove(hard);
  fs::create_symlink(data_csv(), link);
  fs::create_hard_link(data_csv(), hard);
  for (const fs::path& alias : {link, hard})
    refused([&] { return run_train(train_to(cfg, alias, true)); },
            {"output.path: '" + alias.string() + "'", "data.source.path", "the same file by another name"}, data_csv());
  CHECK(fs::is_symlink(link));
}

TEST_CASE("command inputs: the train binary refuses --out CONFIG --force and leaves the config as it was") {
  const fs::path dir = scratch("binary");
  fs::create_directories(dir);
  tn::test::write_text(dir / "c.yaml", csv_yaml());
  const std::string before = slurp(dir / "c.yaml");
  const auto [rc, out] = tn::test::run_binary_in(dir, {"train", "c.yaml", "--out", "c.yaml", "--force", "-q"});
  CHECK_MESSAGE(rc == kExitUsage, out);
  CHECK_MESSAGE(out.find("output.path: 'c.yaml' is the command's own input (the config file 'c.yaml')") != std::string::npos, out);
  CHECK(slurp(dir / "c.yaml") == before);
}

TEST_CASE("command inputs: model.init_from naming the run file it would write is refused") {
  const fs::path source = scratch("warm.h5");
  REQUIRE(run_train(train_to(config("warm.yaml"), source, true)) == kExitOk);
  TrainOptions o = train_to(config("warm-again.yaml"), source, true);
  o.set = {"model.init_from={path: '" + source.string() + "'}"};
  refused([&] { return run_train(o); },
          {"output.path: '" + source.string() + "' is the command's own input (model.init_from.path"}, source);
}

TEST_CASE("command inputs: --resume CHECKPOINT --out CHECKPOINT keeps the checkpoint's training state") {
  const fs::path out = trained_with_checkpoint("resumed");
  const fs::path ck = scratch("resumed.ckpt.h5");
  TrainOptions o = train_to(config("resumed.yaml"), ck, true);
  o.resume = ck.string();
  o.set = {"train.epochs=3"};
  refused([&] { return run_train(o); }, {"output.path: '" + ck.string() + "' is the checkpoint --resume continues from"}, ck);
  CHECK(read_run_file(ck.string()).state.present());
  // Its own checkpoint is what a resumed run replaces, and the run file it continues: no --force needed.
  o.out = out.string();
  o.force = false;
  o.set = {"train.epochs=3", "train.checkpoint.every_epochs=1"};
  CHECK(run_train(o) == kExitOk);
  CHECK(read_run_file(ck.string()).state.epoch == 3);
  CHECK(read_run_file(out.string()).meta.epochs == 3);
}

TEST_CASE("command inputs: a checkpoint path that exists is replaced only when resumed from or with --force") {
  // The default NAME.ckpt.h5 beside a new run file.
  const fs::path out = scratch("beside.h5"), ck = scratch("beside.ckpt.h5");
  fs::remove(out);
  tn::test::write_text(ck, "another run's checkpoint");
  const fs::path cfg = config("beside.yaml");
  refused([&] { return run_train(train_to(cfg, out)); },
          {"train.checkpoint.path (default: output.path with .ckpt.h5): '" + ck.string() + "' already exists",
           "--force"},
          ck);
  CHECK(!fs::exists(out));
  // train.checkpoint.path naming the config, the data or any other file.
  TrainOptions o = train_to(cfg, out);
  o.set = {"train.checkpoint.path='" + cfg.string() + "'"};
  refused([&] { return run_train(o); }, {"train.checkpoint.path: '" + cfg.string() + "' is the command's own input"}, cfg);
  o.force = true;
  o.set = {"train.checkpoint.path='" + data_csv().string() + "'"};
  refused([&] { return run_train(o); }, {"train.checkpoint.path: '" + data_csv().string() + "' is the command's own input"},
          data_csv());
  const fs::path other = tn::test::write_text(scratch("notes.txt"), "a user's notes");
  o.force = false;
  o.set = {"train.checkpoint.path='" + other.string() + "'"};
  refused([&] { return run_train(o); }, {"train.checkpoint.path: '" + other.string() + "' already exists"}, other);
  CHECK(!fs::exists(out));
}

TEST_CASE("command inputs: an output that is a FIFO or a device is refused, --force or not") {
  const fs::path cfg = config("fifo.yaml");
  const fs::path fifo = scratch("fifo.h5");
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  refused([&] { return run_train(train_to(cfg, fifo, true)); }, {"output.path: '" + fifo.string() + "' is a FIFO"}, cfg);
  CHECK(fs::is_fifo(fifo));
  // A character device like /dev/null (1, 3), made here so that a failure cannot break the machine's.
  const fs::path dev = scratch("null-device.csv");
  fs::remove(dev);
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    MESSAGE("SKIPPED the device case: cannot create a character device here (needs CAP_MKNOD)");
    return;
  }
  PredictOptions p;
  p.run_path = trained_with_checkpoint("for-device").string();
  p.input = data_csv().string();
  p.out = dev.string();
  p.force = true;
  p.verbosity = Verbosity::Quiet;
  refused([&] { return run_predict(p); }, {"--out: '" + dev.string() + "' is a character device"}, p.run_path);
  CHECK(fs::is_character_file(dev));
  fs::remove(dev);
}

TEST_CASE("command inputs: a NUL or another control character in a path is refused naming the key") {
  const fs::path dir = scratch("nul");
  fs::remove_all(dir);
  const fs::path cfg = tn::test::write_text(scratch("nul.yaml"), csv_yaml("output: {path: \"" + dir.string() + "/run\\0.h5\"}\n"));
  TrainOptions o = train_to(cfg, "");
  o.out.reset();
  refused([&] { return run_train(o); }, {"output.path: '" + dir.string() + "/run\\x00.h5' holds a control character"}, cfg);
  CHECK(!fs::exists(dir / "run"));
  o.set = {"train.checkpoint.path=\"" + dir.string() + "/ck\\t.h5\""};
  o.out = (dir / "run.h5").string();
  refused([&] { return run_train(o); }, {"train.checkpoint.path: '" + dir.string() + "/ck\\x09.h5'"}, cfg);
  CHECK(!fs::exists(dir / "run.h5"));
}

TEST_CASE("command inputs: predict, eval, export, merge, data generate and sweep never write their inputs") {
  const fs::path run = trained_with_checkpoint("inputs");
  const fs::path cfg = scratch("inputs.yaml");
  const fs::path link = scratch("inputs-link.csv");
  fs::remove(link);
  fs::create_symlink(data_csv(), link);
  PredictOptions p;
  p.run_path = run.string();
  p.input = cfg.string();  // a config as input: its data file is an input too
  p.out = link.string();
  p.force = true;
  p.verbosity = Verbosity::Quiet;
  refused([&] { return run_predict(p); }, {"--out: '" + link.string() + "'", cfg.string() + ": data.source.path"}, data_csv());
  EvalOptions e;
  e.run_path = run.string();
  e.data = cfg.string();
  e.out = scratch("inputs-link.json").string();
  fs::remove(*e.out);
  fs::create_symlink(data_csv(), *e.out);
  e.force = true;
  e.verbosity = Verbosity::Quiet;
  refused([&] { return run_eval(e); }, {"--out: '" + *e.out + "' is the command's own input (" + cfg.string()}, data_csv());
  ExportOptions x;
  x.run_path = run.string();
  x.out = scratch("inputs-run.npz").string();
  fs::remove(x.out);
  fs::create_hard_link(run, x.out);
  x.force = true;
  x.verbosity = Verbosity::Quiet;
  refused([&] { return run_export(x); }, {"--out: '" + x.out + "' is the command's own input (RUN"}, run);
  MergeOptions m;
  m.out = scratch("inputs.ckpt.h5").string();
  m.parts = {run.string(), m.out};
  m.force = true;
  refused([&] { return run_merge(m); }, {"OUT: '" + m.out + "' is the command's own input (PART"}, m.out);
  DataGenerateOptions g;
  g.config_path = tn::test::write_text(scratch("gen.yaml"), "data: {source: {type: moons, n: 20}}\n").string();
  g.out = scratch("gen-link.csv").string();
  fs::remove(g.out);
  fs::create_symlink(g.config_path, g.out);
  g.force = true;
  refused([&] { return run_data_generate(g); }, {"--out: '" + g.out + "' is the command's own input (the config file"},
          g.config_path);
  SweepOptions s;
  s.config_path = cfg.string();
  s.swarm = "1";
  s.repeats = 1;
  s.out = link.string();
  s.force = true;
  s.verbosity = Verbosity::Quiet;
  refused([&] { return run_sweep(s); }, {"--out: '" + link.string() + "' is the command's own input (data.source.path"},
          data_csv());
}
