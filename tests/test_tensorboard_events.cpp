// TensorBoard event files (io/tensorboard_events.h): CRC-32C, the record framing and a scalar
// event byte for byte as TensorBoard's own Python writer makes them, and continuing a file
// after a checkpoint keeps only the steps up to it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "io/tensorboard_events.h"

namespace fs = std::filesystem;
using tn::test::scratch_path;
using tn::test::slurp;

namespace {

std::string unhex(const std::string& h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

// The one event file of `dir`.
fs::path only_event_file(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  CHECK(tn::io::is_event_file(files[0].filename().string()));
  return files[0];
}

}  // namespace

TEST_CASE("crc32c of the standard check string is 0xE3069283") {
  CHECK(tn::io::crc32c("123456789") == 0xE3069283u);
  CHECK(tn::io::crc32c("") == 0u);
}

TEST_CASE("a record is framed as TensorBoard's RecordWriter frames it: length, masked CRCs, data") {
  // tensorboard.summary.writer.record_writer.RecordWriter(b).write(b"hello"), tensorboard 2.21.0
  CHECK(tn::io::framed_record("hello") == unhex("0500000000000000eab2043e68656c6c6fbb1f1c19"));
  const std::string two = tn::io::framed_record("hello") + tn::io::framed_record("");
  CHECK(tn::io::read_records(two) == std::vector<std::string>{"hello", ""});
}

TEST_CASE("reading records stops at a cut-off or damaged tail") {
  const std::string a = tn::io::framed_record("first"), b = tn::io::framed_record("second");
  CHECK(tn::io::read_records(a + b.substr(0, b.size() - 1)) == std::vector<std::string>{"first"});
  std::string flipped = a + b;
  flipped[a.size() + 14] ^= 1;  // a byte of the second record's data
  CHECK(tn::io::read_records(flipped) == std::vector<std::string>{"first"});
}

TEST_CASE("an event file starts with file_version and a scalar event is byte for byte TensorBoard's") {
  const fs::path dir = scratch_path("tensorboard", "bytes");
  fs::remove_all(dir);
  {
    tn::io::EventWriter w(dir.string(), -1);
    w.scalars(3, 1.5, {{"loss", 0.25f}});
  }
  const fs::path file = only_event_file(dir);
  CHECK(file.filename().string().rfind("events.out.tfevents.", 0) == 0);
  const std::vector<std::string> records = tn::io::read_records(slurp(file));
  REQUIRE(records.size() == 2);
  CHECK(records[0].find("brain.Event:2") != std::string::npos);
  // event_pb2.Event(wall_time=1.5, step=3, summary=Summary(value=[Value(tag="loss", simple_value=0.25)]))
  CHECK(records[1] == unhex("09000000000000f83f10032a0d0a0b0a046c6f7373150000803e"));
}

TEST_CASE("continuing an event file after a checkpoint keeps its steps up to it, its tail cut off and no session end") {
  const fs::path dir = scratch_path("tensorboard", "continued"), ref = scratch_path("tensorboard", "reference");
  fs::remove_all(dir);
  fs::remove_all(ref);
  {
    tn::io::EventWriter w(dir.string(), -1), r(ref.string(), -1);
    w.session_start(1.0, {{"optimizer.lr", 0.01}, {"model.hidden", std::string("[16]")}});
    r.session_start(1.0, {{"optimizer.lr", 0.01}, {"model.hidden", std::string("[16]")}});
    for (int step = 1; step <= 5; ++step) w.scalars(step, 10.0 + step, {{"loss", 1.0f / step}});
    for (int step = 1; step <= 3; ++step) r.scalars(step, 10.0 + step, {{"loss", 1.0f / step}});
    w.session_end(5, 20.0, true);
  }
  std::ofstream(only_event_file(dir), std::ios::app | std::ios::binary) << tn::io::framed_record("cut").substr(0, 9);
  {
    tn::io::EventWriter w(dir.string(), 3);  // resumed after epoch 3
    w.scalars(4, 14.0, {{"loss", 0.25f}});
  }
  {
    tn::io::EventWriter r(ref.string(), 3);
    r.scalars(4, 14.0, {{"loss", 0.25f}});
  }
  std::vector<std::string> got = tn::io::read_records(slurp(only_event_file(dir)));
  std::vector<std::string> want = tn::io::read_records(slurp(only_event_file(ref)));
  REQUIRE(got.size() == 6);  // file_version, session start, steps 1-3, step 4
  got.erase(got.begin());    // the file_version records differ in wall time only
  want.erase(want.begin());
  CHECK(got == want);
}
