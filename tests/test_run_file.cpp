// Tests for io/run_file: round trips, absent parts, atomic writes, reader errors, h5py access.
#include <doctest/doctest.h>
#include <hdf5.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "io/h5.h"
#include "io/h5_file.h"
#include "io/run_file.h"
#include "python_test_util.h"
#include "seal_test_util.h"

namespace fs = std::filesystem;
using tn::Array;
using tn::RunFile;
using tn::RunFileError;

namespace {

// A fresh directory under the system temp dir, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("turbanet_run_file_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// Deterministic, non-trivial values: mixed signs and magnitudes.
Array make_array(std::vector<std::uint64_t> shape, std::uint32_t seed) {
  Array a;
  a.shape = std::move(shape);
  a.data.resize(a.size());
  std::uint32_t x = seed * 2654435761u + 12345u;
  for (float& v : a.data) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<std::int32_t>(x)) / 65536.0f *
        std::ldexp(1.0f, -(int)(x % 20));
  }
  return a;
}

tn::LayerParams make_layer(std::uint64_t s, std::uint64_t in, std::uint64_t out,
                           std::uint32_t seed) {
  return {{{"W", make_array({s, in, out}, seed)}, {"b", make_array({s, out}, seed + 1)}}};
}

RunFile minimal_run() {
  RunFile run;
  run.config_yaml = "name: tiny\nswarm:\n  size: 3\n";
  run.meta.version = "0.1.0";
  run.meta.name = "tiny";
  run.meta.device = "cpu";
  run.meta.kernel = "cpu-blocked, 8 members/block";
  run.meta.created = "2024-05-01T12:00:00Z";
  run.meta.threads = 2;
  run.meta.swarm_size = 3;
  run.meta.first_member = 7;
  run.meta.epochs = 4;
  run.meta.steps = 1234567890123;
  run.meta.wall_seconds = 1.5;
  run.meta.train_seconds = 0.125;
  run.params = {make_layer(3, 4, 5, 1), make_layer(3, 5, 2, 3)};
  return run;
}

RunFile full_run() {
  RunFile run = minimal_run();
  run.config_yaml += "notes: \"ünïcödé ✓\"\n";
  run.init_params = {make_layer(3, 4, 5, 11), make_layer(3, 5, 2, 13)};
  run.train_loss = make_array({3, 4}, 21);
  run.train_loss.data[5] = std::numeric_limits<float>::quiet_NaN();  // a diverged member
  run.train_loss.data[6] = std::numeric_limits<float>::infinity();
  run.val_loss = make_array({3, 4}, 22);
  run.train_accuracy = make_array({3, 4}, 23);
  run.val_accuracy = make_array({3, 4}, 24);
  run.diverged_epoch = {-1, 2, -1};
  run.normalization.mean = make_array({4}, 31);
  run.normalization.std = make_array({4}, 32);
  tn::Predictions p;
  p.split = "test";
  p.members = make_array({3, 30000, 2}, 41);  // 720 KB, compressible: chunked and compressed
  for (std::size_t i = 0; i < p.members.data.size(); ++i) p.members.data[i] = 0.125f * static_cast<float>(i % 7);
  p.ensemble_mean = make_array({30000, 2}, 42);
  p.ensemble_std = make_array({30000, 2}, 43);
  p.targets = make_array({30000}, 44);
  run.put(p);
  return run;
}

// Exact comparison, bit for bit (NaN included).
void check_array(const Array& got, const Array& want, const std::string& what) {
  INFO(what);
  CHECK(got.shape == want.shape);
  REQUIRE(got.data.size() == want.data.size());
  if (want.data.empty()) return;
  CHECK(std::memcmp(got.data.data(), want.data.data(), want.data.size() * sizeof(float)) == 0);
}

void check_layers(const std::vector<tn::LayerParams>& got,
                  const std::vector<tn::LayerParams>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    check_array(got[i]["W"], want[i]["W"], "W of layer " + std::to_string(i));
    check_array(got[i]["b"], want[i]["b"], "b of layer " + std::to_string(i));
  }
}

void check_meta(const tn::RunMeta& got, const tn::RunMeta& want) {
  CHECK(got.version == want.version);
  CHECK(got.name == want.name);
  CHECK(got.device == want.device);
  CHECK(got.kernel == want.kernel);
  CHECK(got.created == want.created);
  CHECK(got.threads == want.threads);
  CHECK(got.swarm_size == want.swarm_size);
  CHECK(got.first_member == want.first_member);
  CHECK(got.epochs == want.epochs);
  CHECK(got.steps == want.steps);
  CHECK(got.wall_seconds == want.wall_seconds);
  CHECK(got.train_seconds == want.train_seconds);
}

void check_run(const RunFile& got, const RunFile& want) {
  CHECK(got.config_yaml == want.config_yaml);
  check_meta(got.meta, want.meta);
  check_layers(got.params, want.params);
  check_layers(got.init_params, want.init_params);
  check_array(got.train_loss, want.train_loss, "train_loss");
  check_array(got.val_loss, want.val_loss, "val_loss");
  check_array(got.train_accuracy, want.train_accuracy, "train_accuracy");
  check_array(got.val_accuracy, want.val_accuracy, "val_accuracy");
  CHECK(got.diverged_epoch == want.diverged_epoch);
  check_array(got.normalization.mean, want.normalization.mean, "mean");
  check_array(got.normalization.std, want.normalization.std, "std");
  REQUIRE(got.predictions.size() == want.predictions.size());
  for (std::size_t i = 0; i < want.predictions.size(); ++i) {
    const tn::Predictions &g = got.predictions[i], &w = want.predictions[i];
    CHECK(g.split == w.split);
    check_array(g.members, w.members, "members");
    check_array(g.ensemble_mean, w.ensemble_mean, "ensemble_mean");
    check_array(g.ensemble_std, w.ensemble_std, "ensemble_std");
    check_array(g.targets, w.targets, "targets");
  }
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Names in `dir` that start with '.', i.e. leftover temporary files.
std::vector<std::string> hidden_files(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().front() == '.') names.push_back(e.path().filename().string());
  }
  return names;
}

std::string error_of(const std::string& path) {
  try {
    (void)tn::read_run_file(path);
  } catch (const RunFileError& e) {
    return e.what();
  }
  return "(no error)";
}

// Layout of dataset `name`: {chunked?, number of filters}.
std::pair<bool, int> storage_of(const std::string& path, const char* name) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  const hid_t plist = H5Dget_create_plist(d);
  std::pair<bool, int> result{H5Pget_layout(plist) == H5D_CHUNKED, H5Pget_nfilters(plist)};
  H5Pclose(plist);
  H5Dclose(d);
  H5Fclose(f);
  return result;
}

// HDF5 objects (files, groups, datasets, ...) still open anywhere: leaked handles.
ssize_t open_hdf5_objects() { return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); }

// Opens `path` read-write, lets `edit` change it, closes it.
template <typename Edit>
void edit_file(const std::string& path, Edit edit) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  edit(f);
  REQUIRE(H5Fclose(f) >= 0);
  tn::test::reseal(path);  // an edit on purpose: the checks behind the seal are what is tested
}

}  // namespace

TEST_CASE("h5: compressed datasets split into chunks (edge chunks padded) read back exactly") {
  // Shapes whose chunks split the first axis unevenly, split a later axis after single rows,
  // or cover it whole; values compressible enough to be deflated.
  const std::vector<std::vector<std::uint64_t>> shapes = {
      {5, 60000, 2}, {3, 400000}, {1, 600000}, {40000}, {7, 3, 9001}, {300000}, {2, 100001}};
  TempDir dir;
  const std::string path = dir.file("chunks.h5");
  std::vector<std::vector<float>> values;
  for (const auto& shape : shapes) {
    std::uint64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<float> v(n);
    std::uint32_t x = 7;
    for (auto& f : v) {
      x = x * 1664525u + 1013904223u;
      f = static_cast<float>(x >> 28) * 0.25f - 1.0f;  // 16 distinct values
    }
    values.push_back(std::move(v));
  }
  tn::io::write_h5_atomically(path, "test file", [&](hid_t file) {
    for (std::size_t i = 0; i < shapes.size(); ++i)
      tn::h5::write_floats(file, "/d" + std::to_string(i), shapes[i], values[i].data());
  }, tn::io::Replace::Yes);
  tn::h5::Session session;
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    std::vector<std::uint64_t> shape;
    std::vector<float> got;
    tn::h5::read_floats(f, "/d" + std::to_string(i), shape, got);
    INFO("dataset ", i);
    CHECK(shape == shapes[i]);
    CHECK(got == values[i]);
  }
  H5Fclose(f);
  // Chunks of at most 256 KiB: d0 [1, 30000, 2], d4 [2, 3, 9001] (the last of 4 padded), d6
  // [1, 50001] (the second of each row padded), d3 one chunk.
  for (const char* d : {"/d0", "/d1", "/d3", "/d4", "/d6"}) CHECK(storage_of(path, d) == std::pair<bool, int>{true, 2});
}

TEST_CASE("run file: a full run round-trips exactly") {
  TempDir dir;
  const std::string path = dir.file("nested/dirs/run.h5");  // parents are created
  const RunFile run = full_run();
  tn::write_run_file(path, run);
  check_run(tn::read_run_file(path), run);
  CHECK(storage_of(path, "/predictions/test/members") == std::pair<bool, int>{true, 2});
  CHECK(storage_of(path, "/params/layer_0/W") == std::pair<bool, int>{false, 0});
  // 240 KB of incompressible values: not worth deflating, stored contiguous.
  CHECK(storage_of(path, "/predictions/test/ensemble_mean") == std::pair<bool, int>{false, 0});
  CHECK(hidden_files(dir.path / "nested/dirs").empty());

  SUBCASE("overwriting replaces the file whole") {
    const RunFile small = minimal_run();
    tn::write_run_file(path, small);
    check_run(tn::read_run_file(path), small);
  }
  CHECK(open_hdf5_objects() == 0);
}

TEST_CASE("run file: absent optional parts round-trip as absent") {
  TempDir dir;
  const std::string path = dir.file("run.h5");
  const RunFile run = minimal_run();
  tn::write_run_file(path, run);
  const RunFile got = tn::read_run_file(path);
  check_run(got, run);
  CHECK(got.init_params.empty());
  CHECK(got.train_loss.shape.empty());
  CHECK(got.val_accuracy.data.empty());
  CHECK(got.normalization.mean.size() == 0);
  CHECK(got.diverged_epoch.empty());
  CHECK(got.predictions.empty());

  SUBCASE("predictions with only some arrays") {
    RunFile partial = minimal_run();
    tn::Predictions val;  // members and targets only
    val.split = "val";
    val.members = make_array({3, 6, 2}, 5);
    val.targets = make_array({6}, 6);
    partial.put(val);
    tn::write_run_file(path, partial);
    check_run(tn::read_run_file(path), partial);
  }
}

TEST_CASE("run file: Array::size is the product of the shape") {
  CHECK(Array{}.size() == 0);
  CHECK(Array{{3, 4, 5}, {}}.size() == 60);
  CHECK(Array{{3, 0}, {}}.size() == 0);
}

TEST_CASE("run file: a failed write leaves an existing file untouched") {
  TempDir dir;
  const std::string path = dir.file("run.h5");
  tn::write_run_file(path, minimal_run());
  const std::string before = read_bytes(path);
  REQUIRE(!before.empty());

  SUBCASE("shape and data size disagree") {
    RunFile bad = full_run();
    bad.params[1]["W"].data.pop_back();
    CHECK_THROWS_WITH_AS(tn::write_run_file(path, bad),
                         doctest::Contains("/params/layer_1/W has shape [3,5,2] (30 values)"),
                         RunFileError);
  }
  SUBCASE("the target is a directory, so the rename fails") {
    fs::create_directories(dir.path / "taken" / "child");
    CHECK_THROWS_WITH_AS(tn::write_run_file(dir.file("taken"), minimal_run()),
                         doctest::Contains("renaming"), RunFileError);
  }
  SUBCASE("the disk fills up while writing") {
    // RLIMIT_FSIZE makes write() fail with EFBIG past 256 KiB, as a full disk fails with ENOSPC.
    rlimit old{};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 256 * 1024;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    std::string message;
    try {
      tn::write_run_file(path, full_run());
    } catch (const RunFileError& e) {
      message = e.what();
    }
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
    CHECK(message.find("cannot write run file '" + path + "': writing '") == 0);
    CHECK(message.find("File too large") != std::string::npos);
  }
  CHECK(read_bytes(path) == before);
  CHECK(hidden_files(dir.path).empty());
  CHECK(open_hdf5_objects() == 0);
}

TEST_CASE("run file: a parent directory that cannot be created is reported") {
  TempDir dir;
  std::ofstream(dir.file("plain")) << "not a directory";
  CHECK_THROWS_WITH_AS(tn::write_run_file(dir.file("plain/sub/run.h5"), minimal_run()),
                       doctest::Contains("cannot create directory"), RunFileError);
  CHECK(hidden_files(dir.path).empty());
}

TEST_CASE("run file: reader errors name the file and the problem") {
  TempDir dir;
  const std::string path = dir.file("run.h5");

  SUBCASE("missing file") { CHECK(error_of(path) == "run file '" + path + "' does not exist"); }
  SUBCASE("a text file") {
    std::ofstream(path) << "name: not hdf5\n";
    CHECK(error_of(path) ==
          "run file '" + path +
              "' is not an HDF5 file: it was not written by turbanet or is damaged");
  }
  SUBCASE("missing groups and datasets") {
    tn::write_run_file(path, minimal_run());
    const std::string suffix = ": it was not written by turbanet or is damaged";
    SUBCASE("/params") {
      edit_file(path, [](hid_t f) { REQUIRE(H5Ldelete(f, "/params", H5P_DEFAULT) >= 0); });
      CHECK(error_of(path) == "run file '" + path + "' has no /params" + suffix);
    }
    SUBCASE("/params/layer_0/W") {
      edit_file(path,
                [](hid_t f) { REQUIRE(H5Ldelete(f, "/params/layer_0/W", H5P_DEFAULT) >= 0); });
      CHECK(error_of(path) == "run file '" + path + "' has no /params/layer_0/W" + suffix);
    }
    SUBCASE("/params/layer_1/b") {
      edit_file(path,
                [](hid_t f) { REQUIRE(H5Ldelete(f, "/params/layer_1/b", H5P_DEFAULT) >= 0); });
      CHECK(error_of(path) == "run file '" + path + "' has no /params/layer_1/b" + suffix);
    }
    SUBCASE("/config") {
      edit_file(path, [](hid_t f) { REQUIRE(H5Ldelete(f, "/config", H5P_DEFAULT) >= 0); });
      CHECK(error_of(path) == "run file '" + path + "' has no /config" + suffix);
    }
    SUBCASE("/meta") {
      edit_file(path, [](hid_t f) { REQUIRE(H5Ldelete(f, "/meta", H5P_DEFAULT) >= 0); });
      CHECK(error_of(path) == "run file '" + path + "' has no /meta" + suffix);
    }
    SUBCASE("a /meta attribute") {
      edit_file(path,
                [](hid_t f) { REQUIRE(H5Adelete_by_name(f, "/meta", "steps", H5P_DEFAULT) >= 0); });
      CHECK(error_of(path) == "run file '" + path + "' has no /meta attribute 'steps'" + suffix);
    }
    SUBCASE("format_version") {
      edit_file(path, [](hid_t f) { REQUIRE(H5Adelete(f, "format_version") >= 0); });
      CHECK(error_of(path) == "run file '" + path + "' has no format_version attribute" + suffix);
    }
  }
  SUBCASE("another format_version") {
    tn::write_run_file(path, minimal_run());
    edit_file(path, [](hid_t f) {
      const int two = 2;
      const hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
      REQUIRE(H5Awrite(a, H5T_NATIVE_INT, &two) >= 0);
      H5Aclose(a);
    });
    CHECK(error_of(path) ==
          "run file '" + path +
              "' has format_version 2, but this turbanet reads only format_version 1");
  }
  CHECK(open_hdf5_objects() == 0);
}

using tn::test::python_with_h5py;
using tn::test::run_command;

TEST_CASE("run file: h5py can read it") {
  const std::string python = python_with_h5py();
  if (python.empty()) {
    MESSAGE("h5py is not installed: skipping the h5py check");
    return;
  }
  TempDir dir;
  const std::string path = dir.file("run.h5");
  tn::write_run_file(path, full_run());
  const std::string script =
      "import sys, h5py\n"
      "f = h5py.File(sys.argv[1], \"r\")\n"
      "w = f[\"params/layer_0/W\"]\n"
      "m = f[\"meta\"].attrs\n"
      "print(w.shape, w.dtype, f[\"predictions/test/members\"].compression)\n"
      "print(m[\"name\"], m[\"device\"], m[\"swarm_size\"], m[\"first_member\"], m[\"steps\"])\n"
      "print(m[\"wall_seconds\"], m[\"train_seconds\"], f.attrs[\"format_version\"])\n"
      "print(f[\"predictions/test\"].attrs[\"split\"], "
      "f[\"config\"].asstr()[()].splitlines()[0])\n";
  const std::string out = run_command(python + " -c '" + script + "' " + path + " 2>&1");
  CHECK(out ==
        "(3, 4, 5) float32 gzip\n"
        "tiny cpu 3 7 1234567890123\n"
        "1.5 0.125 1\n"
        "test name: tiny\n");
}

// More than 8192 strings make a dataset larger than 64 KiB: it must be stored so that HDF5
// and h5py read the strings back (it once held the writer's string pointers).
TEST_CASE("run file: a string dataset of 9000 entries reads back, with our reader and h5py") {
  TempDir dir;
  const std::string path = dir.file("run.h5");
  RunFile r = full_run();
  std::vector<std::string> names;
  for (int i = 0; i < 9000; ++i) names.push_back("feature_" + std::to_string(i));
  r.data.feature_names = names;
  tn::write_run_file(path, r);
  CHECK(tn::read_run_file(path).data.feature_names == names);
  const std::string python = python_with_h5py();
  if (python.empty()) {
    MESSAGE("SKIPPED (h5py part): h5py is not installed");
    return;
  }
  const std::string script =
      "import sys, h5py\n"
      "n = h5py.File(sys.argv[1], \"r\")[\"data/feature_names\"].asstr()[()]\n"
      "print(len(n), n[0], n[-1])\n";
  CHECK(run_command(python + " -c '" + script + "' " + path + " 2>&1") == "9000 feature_0 feature_8999\n");
}
