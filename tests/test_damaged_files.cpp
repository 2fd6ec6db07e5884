// Damaged and crafted run files exit 2 with the file named, never a signal or a hang: every
// flipped byte, truncation and tampered attribute of a sealed file is refused before HDF5
// parses it; every file, sealed or not, is parsed in a child process first, so a crash or loop
// of the HDF5 library on a damaged or crafted global heap becomes an error too; and text that
// is not UTF-8 is refused naming the file and the field before it reaches JSON or a terminal.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "eval_test_util.h"
#include "io/h5.h"
#include "io/h5_file.h"
#include "io/run_file.h"
#include "seal_test_util.h"

using namespace evaltest;
using tn::test::file_bytes;
using tn::test::put_bytes;

namespace {

// A small trained run (with string datasets and attributes in its global heap).
const fs::path& good_run() {
  static const fs::path run = train_run("damaged-good", spirals_yaml(3, 2));
  return run;
}

// eval and predict on `path`: both must exit 2 and name the file.
void expect_refused(const fs::path& path, const std::string& what) {
  tn::EvalOptions e = eval_opts(path);
  e.json = true;
  int rc = -1;
  std::string err;
  capture(1, [&] { std::tie(rc, err) = exit_and_stderr([&] { return tn::run_eval(e); }); });
  CHECK_MESSAGE(rc == tn::kExitUsage, what << ": eval exit " << rc << "; " << err);
  CHECK_MESSAGE(err.find(path.string()) != std::string::npos, what << ": " << err);
  tn::PredictOptions p;
  p.run_path = path.string();
  p.input = write_file("damaged-inputs.csv", "x,y\n0.1,0.2\n0.3,-0.4\n").string();
  p.verbosity = tn::Verbosity::Quiet;
  capture(1, [&] { std::tie(rc, err) = exit_and_stderr([&] { return tn::run_predict(p); }); });
  CHECK_MESSAGE(rc == tn::kExitUsage, what << ": predict exit " << rc << "; " << err);
  CHECK_MESSAGE(err.find(path.string()) != std::string::npos, what << ": " << err);
}

std::size_t find_bytes(const std::vector<char>& b, const std::string& s, std::size_t from = 0) {
  return static_cast<std::size_t>(std::search(b.begin() + static_cast<std::ptrdiff_t>(from), b.end(), s.begin(), s.end()) -
                                  b.begin());
}

// The header of object k (from 1) of the file's first global heap collection: "GCOL", its
// version, 3 reserved bytes and its size (8), then per object its index (2), reference count
// (2), 4 reserved bytes, size (8) and its bytes, padded to a multiple of 8.
std::size_t heap_object(const std::vector<char>& b, int k) {
  std::size_t at = find_bytes(b, "GCOL");
  REQUIRE(at + 16 < b.size());
  at += 16;
  for (int i = 1; i < k; ++i) {
    std::uint64_t size = 0;
    std::memcpy(&size, b.data() + at + 8, 8);
    at += 16 + (size + 7) / 8 * 8;
    REQUIRE(at + 16 < b.size());
  }
  return at;
}

// good_run's bytes with `edit` applied, sealed again: a file crafted on purpose, seal and all.
fs::path crafted(const std::string& name, const std::function<void(std::vector<char>&)>& edit) {
  std::vector<char> b = file_bytes(good_run().string());
  edit(b);
  const fs::path path = scratch(name);
  put_bytes(path.string(), b);
  tn::test::reseal(path.string());
  return path;
}

// The first global heap object's size set to 0xDE00000009: HDF5 1.10 copies that many bytes
// (H5HG_read) and crashes. The object is the /config text.
void huge_heap_object(std::vector<char>& b) {
  const std::uint64_t size = 0xDE00000009ull;
  std::memcpy(b.data() + heap_object(b, 1) + 8, &size, 8);
}

// The second object's header made index 0, size 0: HDF5 1.10 decodes it over and over
// (H5HG__cache_heap_deserialize) and never returns.
void looping_heap_object(std::vector<char>& b) {
  const std::size_t at = heap_object(b, 2);
  std::fill(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at) + 2, '\0');
  std::fill(b.begin() + static_cast<std::ptrdiff_t>(at) + 8, b.begin() + static_cast<std::ptrdiff_t>(at) + 16, '\0');
}

// Runs a command function and returns its exit code and what it logged.
std::pair<int, std::string> command(const std::function<int()>& fn) {
  std::pair<int, std::string> result;
  capture(1, [&] { result = exit_and_stderr(fn); });
  return result;
}

// export of `path` to .npz and to .onnx: each must exit 2 with `needle` in its message.
void expect_export_refused(const fs::path& path, const std::string& what, const std::string& needle) {
  for (const char* ext : {".npz", ".onnx"}) {
    tn::ExportOptions x;
    x.run_path = path.string();
    x.out = scratch(std::string("crafted-export") + ext).string();
    x.force = true;
    x.verbosity = tn::Verbosity::Quiet;
    const auto [rc, err] = command([&] { return tn::run_export(x); });
    CHECK_MESSAGE(rc == tn::kExitUsage, what << ": export " << ext << " exit " << rc << "; " << err);
    CHECK_MESSAGE(err.find(needle) != std::string::npos, what << ": " << err);
  }
}

// Every command that reads a run file, given `path`: eval, predict, export (npz and ONNX),
// merge, train --resume and a warm start from it. Each must exit 2 naming the file.
void expect_refused_everywhere(const fs::path& path, const std::string& what) {
  expect_refused(path, what);
  const std::string named = path.string();
  expect_export_refused(path, what, named);
  tn::MergeOptions m;
  m.parts = {named, good_run().string()};
  m.out = scratch("crafted-merged.h5").string();
  m.force = true;
  m.verbosity = tn::Verbosity::Quiet;
  auto [rc, err] = command([&] { return tn::run_merge(m); });
  CHECK_MESSAGE(rc == tn::kExitUsage, what << ": merge exit " << rc << "; " << err);
  CHECK_MESSAGE(err.find(named) != std::string::npos, what << ": " << err);
  tn::TrainOptions t;
  t.config_path = write_file("crafted-train.yaml", spirals_yaml(3, 2)).string();
  t.out = scratch("crafted-train.h5").string();
  t.force = true;
  t.verbosity = tn::Verbosity::Quiet;
  t.resume = named;
  std::tie(rc, err) = command([&] { return tn::run_train(t); });
  CHECK_MESSAGE(rc == tn::kExitUsage, what << ": train --resume exit " << rc << "; " << err);
  CHECK_MESSAGE(err.find(named) != std::string::npos, what << ": " << err);
  t.resume.clear();
  t.set = {"model.init_from.path=" + named};
  std::tie(rc, err) = command([&] { return tn::run_train(t); });
  CHECK_MESSAGE(rc == tn::kExitUsage, what << ": train with model.init_from exit " << rc << "; " << err);
  CHECK_MESSAGE(err.find(named) != std::string::npos, what << ": " << err);
}

}  // namespace

TEST_CASE("damaged files: a flipped byte anywhere in a sealed run file is refused by eval and predict") {
  const std::vector<char> good = file_bytes(good_run().string());
  const fs::path bad = scratch("damaged-flip.h5");
  // Every byte of the seal, then a spread over the rest (the global heap's first bytes included).
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < 512; i += 7) at.push_back(i);
  for (std::size_t i = 512; i < good.size(); i += good.size() / 97) at.push_back(i);
  const std::size_t gcol = find_bytes(good, "GCOL");
  REQUIRE(gcol < good.size());
  for (std::size_t i = gcol; i < gcol + 64; i += 5) at.push_back(i);
  at.push_back(good.size() - 1);
  for (std::size_t i : at) {
    std::vector<char> b = good;
    b[i] = static_cast<char>(b[i] ^ 0x21);
    put_bytes(bad.string(), b);
    expect_refused(bad, "byte " + std::to_string(i));
  }
  MESSAGE(at.size() << " single-byte flips refused by eval and predict");
}

TEST_CASE("damaged files: truncated and extended run files are refused") {
  const std::vector<char> good = file_bytes(good_run().string());
  const fs::path bad = scratch("damaged-cut.h5");
  for (std::size_t n : {std::size_t{0}, std::size_t{8}, std::size_t{511}, std::size_t{512}, std::size_t{600},
                        good.size() / 2, good.size() - 1}) {
    put_bytes(bad.string(), std::vector<char>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)));
    expect_refused(bad, "cut to " + std::to_string(n) + " bytes");
  }
  std::vector<char> longer = good;
  longer.push_back('\0');
  put_bytes(bad.string(), longer);
  expect_refused(bad, "one byte appended");
}

TEST_CASE("damaged files: a tampered /meta@first_member is refused, sealed again or not") {
  const fs::path bad = scratch("damaged-meta.h5");
  fs::copy_file(good_run(), bad, fs::copy_options::overwrite_existing);
  const hid_t f = H5Fopen(bad.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t g = H5Gopen2(f, "/meta", H5P_DEFAULT);
  const hid_t a = H5Aopen(g, "first_member", H5P_DEFAULT);
  const int v = 2147483647;
  REQUIRE(H5Awrite(a, H5T_NATIVE_INT, &v) >= 0);
  H5Aclose(a);
  H5Gclose(g);
  H5Fclose(f);
  expect_refused(bad, "tampered, seal not updated");
  tn::test::reseal(bad.string());  // as if changed on purpose: the reader's own checks refuse it
  CHECK_THROWS_WITH_AS(tn::read_run_file(bad.string()), doctest::Contains("exceed the largest member index"),
                       tn::RunFileError);
  expect_refused(bad, "tampered and resealed");
}

TEST_CASE("damaged files: an unsealed run file with a damaged global heap never takes the process down") {
  std::vector<char> good = file_bytes(good_run().string());
  std::fill(good.begin(), good.begin() + 512, '\0');  // as if written before files were sealed
  const fs::path plain = scratch("damaged-unsealed-good.h5"), bad = scratch("damaged-unsealed.h5");
  put_bytes(plain.string(), good);
  CHECK(tn::read_run_file(plain.string()).meta.swarm_size == 3);  // unsealed files still read
  const std::size_t gcol = find_bytes(good, "GCOL");
  REQUIRE(gcol < good.size());
  int read = 0, refused = 0, caught_crashes = 0;
  for (std::size_t i = gcol; i < std::min(good.size(), gcol + 160); i += 2) {
    std::vector<char> b = good;
    b[i] = static_cast<char>(b[i] ^ 0x5a);
    put_bytes(bad.string(), b);
    try {
      tn::read_run_file(bad.string());
      ++read;
    } catch (const tn::RunFileError& e) {
      ++refused;
      const std::string what = e.what();
      CHECK(what.find(bad.string()) != std::string::npos);
      if (what.find("crashed") != std::string::npos || what.find("did not finish") != std::string::npos) ++caught_crashes;
    }
  }
  MESSAGE("unsealed, global heap flips: " << read << " read, " << refused << " refused ("
                                          << caught_crashes << " of them crashes or loops of the HDF5 library, in a child)");
  CHECK(read + refused == 80);
}

TEST_CASE("damaged files: an unsealed file HDF5 fails to open is refused without opening it in this process") {
  // A fuzz input (tests/fuzz/regressions/run_file/) on which H5Fopen fails: HDF5 1.10 keeps part
  // of such a file until the process ends, and then prints "HDF5: infinite loop closing
  // library". The child's read refuses it, and the command ends as cleanly as it began.
  const fs::path bad = scratch("damaged-unopenable.h5");
  fs::copy_file(fs::path(TURBANET_SOURCE_DIR) / "tests/fuzz/regressions/run_file/leak-3b67d691a95ecd4678b1d02a2f793dd1e3a4364e",
                bad, fs::copy_options::overwrite_existing);
  CHECK_THROWS_WITH_AS(tn::read_run_file(bad.string()), doctest::Contains(("cannot open run file '" + bad.string() + "'").c_str()),
                       tn::RunFileError);
  const auto [rc, out] = tn::test::run_binary_in(bad.parent_path(), {"eval", bad.string(), "-q"});
  CHECK_MESSAGE(rc == tn::kExitUsage, out);
  CHECK_MESSAGE(out.find(bad.string()) != std::string::npos, out);
  CHECK_MESSAGE(out.find("HDF5:") == std::string::npos, out);
}

TEST_CASE("damaged files: a string dataset whose third string points outside the file is an error, in process") {
  // h5::read_strings reads in this process (no child): the failure must be an h5::Error, with
  // nothing leaked or overrun on the way (the ASan+UBSan suite, scripts/test-sanitizers.sh,
  // runs this with leak detection on). The strings HDF5 allocates while reading go to an arena
  // owned by the read, freed however it ends (the fuzzer found HDF5 leaving converted strings
  // behind on another damaged-heap path).
  const fs::path path = scratch("damaged-strings.h5");
  tn::io::write_h5_atomically(path, "test file", [](hid_t file) {
    tn::h5::write_strings(file, "/s", {"first-string", "second-string", "third-string"});
  }, tn::io::Replace::Yes);
  std::vector<char> b = file_bytes(path.string());
  // Each element of the dataset: the string's length (4 bytes), the address of its global
  // heap collection relative to the file's base (8; the base follows the 512-byte seal) and
  // its index there (4). The third element's address is sent past the end of the file.
  const std::size_t gcol = find_bytes(b, "GCOL");
  REQUIRE(gcol < b.size());
  std::string third(16, '\0');
  const std::uint32_t len = 12, index = 3;
  const std::uint64_t addr = gcol - 512;
  std::memcpy(third.data(), &len, 4);
  std::memcpy(third.data() + 4, &addr, 8);
  std::memcpy(third.data() + 12, &index, 4);
  const std::size_t at = find_bytes(b, third);
  REQUIRE(at < b.size());
  const std::uint64_t beyond = 1ull << 40;
  std::memcpy(b.data() + at + 4, &beyond, 8);
  put_bytes(path.string(), b);
  tn::h5::Session session;
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK_THROWS_AS(tn::h5::read_strings(f, "/s"), tn::h5::Error);
  H5Fclose(f);
}

TEST_CASE("crafted files: a global heap object of 0xDE00000009 bytes, sealed again, is refused by every command") {
  // The seal is a CRC anyone can recompute: a crafted file passes it. HDF5 1.10 then copies
  // 0xDE00000009 bytes (H5HG_read) and crashes, in the reading child; the command exits 2.
  const fs::path bad = crafted("crafted-heap-size.h5", huge_heap_object);
  try {
    tn::read_run_file(bad.string());
    FAIL("the crafted file was read");
  } catch (const tn::RunFileError& e) {
    MESSAGE(std::string(e.what()));
    CHECK(std::string(e.what()).find("its seal matches its bytes") != std::string::npos);
  }
  expect_refused_everywhere(bad, "heap object size");
}

TEST_CASE("crafted files: a global heap that HDF5 decodes forever, sealed again, is refused within the time limit") {
  // The child is killed after 5 s; one read shows it (every command reads through the same path).
  const fs::path bad = crafted("crafted-heap-loop.h5", looping_heap_object);
  CHECK_THROWS_WITH_AS(tn::read_run_file(bad.string()), doctest::Contains("did not finish within 5 s"), tn::RunFileError);
}

TEST_CASE("crafted files: the bytes the child checked are the bytes this process reads") {
  // The file is read once; overwriting it on disk after the child's read (with zeros) changes
  // nothing here. Before, this process opened the file again and read the zeros.
  const fs::path path = scratch("crafted-swapped.h5");
  fs::copy_file(good_run(), path, fs::copy_options::overwrite_existing);
  const std::vector<char> bad(fs::file_size(path), '\0');
  const pid_t parent = ::getpid();
  const auto swarm = tn::io::read_h5_checked<int>(path.string(), "run file", [&](hid_t file) {
    if (::getpid() == parent) put_bytes(path.string(), bad);  // after the child's read, before ours
    const tn::h5::Handle meta = tn::h5::open_group(file, "/meta");
    return static_cast<int>(tn::h5::get_int_attr(meta.get(), "/meta", "swarm_size"));
  });
  CHECK(swarm == 3);
  CHECK(file_bytes(path.string()) == bad);
}

TEST_CASE("crafted files: a FIFO named as a run file is refused at once, not waited on") {
  const fs::path fifo = scratch("crafted-fifo.h5");
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(tn::read_run_file(fifo.string()), doctest::Contains("is not a regular file"), tn::RunFileError);
  CHECK_THROWS_WITH_AS(tn::read_run_file(scratch("").string()), doctest::Contains("is a directory"), tn::RunFileError);
  fs::remove(fifo);
}

TEST_CASE("crafted files: text that is not UTF-8 is refused naming the file and the dataset or attribute") {
  const fs::path path = scratch("crafted-text.h5");
  tn::io::write_h5_atomically(path, "test file", [](hid_t file) {
    tn::h5::write_strings(file, "/s", {"fine", "caf\xc3\xa9", "bad\xff" "byte"});
    tn::h5::write_string_dataset(file, "/one", "\xed\xa0\x80");  // a UTF-16 surrogate, encoded
    tn::h5::Handle g = tn::h5::create_group(file, "/g");
    tn::h5::set_string_attr(g.get(), "/g", "note", "\xc0\xaf");  // an overlong '/'
    tn::h5::create_group(file, "/g/\xfe");
  }, tn::io::Replace::Yes);
  const auto read = [&](const std::function<void(hid_t)>& fn) {
    tn::io::read_h5_checked<int>(path.string(), "test file", [&](hid_t file) { return fn(file), 0; });
  };
  const std::string file = "cannot read test file '" + path.string() + "': ";
  CHECK_THROWS_WITH_AS(read([](hid_t f) { tn::h5::read_strings(f, "/s"); }),
                       doctest::Contains((file + "string 2 of dataset /s holds text that is not valid UTF-8 (byte 0xff at offset 3)").c_str()),
                       tn::RunFileError);
  CHECK_THROWS_WITH_AS(read([](hid_t f) { tn::h5::read_string_dataset(f, "/one"); }),
                       doctest::Contains((file + "dataset /one holds text that is not valid UTF-8 (byte 0xed at offset 0)").c_str()),
                       tn::RunFileError);
  CHECK_THROWS_WITH_AS(read([](hid_t f) { tn::h5::Handle g = tn::h5::open_group(f, "/g"); tn::h5::get_string_attr(g.get(), "/g", "note"); }),
                       doctest::Contains((file + "attribute 'note' of /g holds text").c_str()), tn::RunFileError);
  CHECK_THROWS_WITH_AS(read([](hid_t f) { tn::h5::list_group(f, "/g"); }),
                       doctest::Contains((file + "a link name in group /g holds text").c_str()), tn::RunFileError);
}

TEST_CASE("crafted files: a run file whose /config or class names are not UTF-8 is refused by eval, predict and export") {
  // /config: a byte of the output path made 0xFF in a file without a seal. Before, export to
  // .npz exited 1 ("critical internal error: not valid UTF-8"), export to ONNX wrote the bytes
  // into the model, and eval printed them.
  std::vector<char> b = file_bytes(good_run().string());
  const std::size_t at = find_bytes(b, "path: /", find_bytes(b, "output:"));
  REQUIRE(at < b.size());
  b[at + 7] = '\xff';
  std::fill(b.begin(), b.begin() + 512, '\0');
  const fs::path config = scratch("crafted-config-not-utf8.h5");
  put_bytes(config.string(), b);
  // /data/class_names: written so by a turbanet that did not check its CSV labels.
  tn::RunFile run = tn::read_run_file(good_run().string());
  REQUIRE(run.data.class_names.size() == 2);
  run.data.class_names[1] = "caf\xe9";  // Latin-1
  const fs::path labels = scratch("crafted-labels-not-utf8.h5");
  tn::write_run_file(labels.string(), run, true);
  for (const auto& [path, field] : {std::pair{config, std::string("dataset /config")},
                                    std::pair{labels, std::string("string 1 of dataset /data/class_names")}}) {
    CHECK_THROWS_WITH_AS(tn::read_run_file(path.string()), doctest::Contains((field + " holds text that is not valid UTF-8").c_str()),
                         tn::RunFileError);
    expect_refused(path, field);
    expect_export_refused(path, field, field);
  }
}
