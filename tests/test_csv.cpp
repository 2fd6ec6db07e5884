// Tests for load_csv: column selection, label mapping, quoting, line endings and error messages.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace {

namespace fs = std::filesystem;

// Removes the files written by write_csv when the test program exits.
struct TempFiles {
  std::vector<fs::path> paths;
  ~TempFiles() {
    std::error_code ec;
    for (const fs::path& p : paths) fs::remove(p, ec);
  }
};
TempFiles temp_files;

// Writes `content` to a per-process file in the temp directory and returns its path.
std::string write_csv(const std::string& name, const std::string& content) {
  const fs::path p = fs::temp_directory_path() /
                     ("turbanet_test_csv_" + std::to_string(::getpid()) + "_" + name + ".csv");
  std::ofstream(p, std::ios::binary) << content;
  temp_files.paths.push_back(p);
  return p.string();
}

tn::SourceConfig csv_source(const std::string& path, const std::string& target,
                            std::vector<std::string> features = {}) {
  tn::SourceConfig s;
  s.type = "csv";
  s.path = path;
  s.target = target;
  s.features = std::move(features);
  return s;
}

// The DataError message load_csv throws, or "" when it loads.
std::string error_of(const tn::SourceConfig& s, bool classification = true) {
  try {
    tn::load_csv(s, classification);
  } catch (const tn::DataError& e) {
    return e.what();
  }
  return "";
}

std::string error_of_text(const std::string& name, const std::string& content,
                          const std::string& target = "y", bool classification = true,
                          std::vector<std::string> features = {}) {
  return error_of(csv_source(write_csv(name, content), target, std::move(features)),
                  classification);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("load_csv: selected features keep the configured order") {
  const std::string path = write_csv("selected", "a,b,c,label\n1,2,3,0\n4,5,6,1\n7,8,9.5,0\n");
  const tn::Dataset d = tn::load_csv(csv_source(path, "label", {"c", "a"}), true);
  CHECK(d.n == 3);
  CHECK(d.features == 2);
  CHECK(d.targets == 1);
  CHECK(d.X == std::vector<float>{3, 1, 6, 4, 9.5f, 7});
  CHECK(d.y == std::vector<float>{0, 1, 0});
  CHECK(d.feature_names == std::vector<std::string>{"c", "a"});
  CHECK(d.num_classes == 2);
  CHECK(d.class_names == std::vector<std::string>{"0", "1"});
  CHECK(d.origin == path);
}

TEST_CASE("load_csv: no features listed means every column except the target") {
  const tn::Dataset d = tn::load_csv(
      csv_source(write_csv("default", "x1,y,x2\n1,1,2\n3,0,4\n"), "y"), true);
  CHECK(d.feature_names == std::vector<std::string>{"x1", "x2"});
  CHECK(d.X == std::vector<float>{1, 2, 3, 4});
  CHECK(d.y == std::vector<float>{1, 0});
}

TEST_CASE("load_csv: string labels are numbered in sorted order") {
  const tn::Dataset d = tn::load_csv(
      csv_source(write_csv("strings", "x,y\n1,dog\n2,cat\n3,bird\n4,cat\n"), "y"), true);
  CHECK(d.num_classes == 3);
  CHECK(d.class_names == std::vector<std::string>{"bird", "cat", "dog"});
  CHECK(d.y == std::vector<float>{2, 1, 0, 1});
}

TEST_CASE("load_csv: integer labels are kept as class indices") {
  const tn::Dataset d =
      tn::load_csv(csv_source(write_csv("ints", "x,y\n1,2\n2,0\n3,2\n"), "y"), true);
  CHECK(d.num_classes == 3);
  CHECK(d.class_names == std::vector<std::string>{"0", "1", "2"});
  CHECK(d.y == std::vector<float>{2, 0, 2});
  // "01" is not written like an index, so all labels are names.
  const tn::Dataset m =
      tn::load_csv(csv_source(write_csv("mixed", "x,y\n1,01\n2,1\n3,10\n"), "y"), true);
  CHECK(m.class_names == std::vector<std::string>{"01", "1", "10"});
  CHECK(m.y == std::vector<float>{0, 1, 2});
}

TEST_CASE("load_csv: regression target") {
  const tn::Dataset d = tn::load_csv(
      csv_source(write_csv("regression", "x,y\n1, 2.5 \n+2,-3e2\n3,0\n"), "y"), false);
  CHECK(d.n == 3);
  CHECK(d.num_classes == 0);
  CHECK(d.class_names.empty());
  CHECK(d.X == std::vector<float>{1, 2, 3});
  CHECK(d.y == std::vector<float>{2.5f, -300, 0});
}

TEST_CASE("load_csv: quoted fields with commas, quotes and newlines") {
  const std::string text =
      "name,x,y\n\"Smith, John\",1.5,\"a, b\"\n\"Doe, \"\"J\"\"\",\"2\",c\n"
      "\"two\nlines\",3,c\n";
  const tn::Dataset d = tn::load_csv(csv_source(write_csv("quoted", text), "y", {"x"}), true);
  CHECK(d.n == 3);
  CHECK(d.X == std::vector<float>{1.5f, 2, 3});
  CHECK(d.class_names == std::vector<std::string>{"a, b", "c"});
  CHECK(d.y == std::vector<float>{0, 1, 1});
  // A row after a quoted field that spans lines 4-5 starts on physical line 6.
  const std::string msg =
      error_of_text("quoted_line", text + "4,5\n", "y", true, {"x"});
  CHECK_MESSAGE(has(msg, ":6: row has 2 fields, the header has 3"), msg);
  // A comma inside quotes does not split a numeric cell.
  const std::string num = error_of_text("quoted_num", "x,y\n\"1,5\",0\n2,1\n");
  CHECK_MESSAGE(has(num, ":2: column 'x': '1,5' is not a number"), num);
}

TEST_CASE("load_csv: CRLF line endings, BOM and blank trailing lines") {
  const tn::Dataset d = tn::load_csv(
      csv_source(write_csv("crlf", "\xEF\xBB\xBFx,y\r\n1,0\r\n2,1\r\n\r\n\n  \n"), "y"), true);
  CHECK(d.n == 2);
  CHECK(d.feature_names == std::vector<std::string>{"x"});
  CHECK(d.X == std::vector<float>{1, 2});
  CHECK(d.y == std::vector<float>{0, 1});
  const std::string msg = error_of_text("crlf_bad", "x,y\r\n1,0\r\nzz,1\r\n");
  CHECK_MESSAGE(has(msg, ":3: column 'x': 'zz' is not a number"), msg);
}

TEST_CASE("load_csv: a file larger than one read block keeps line numbers") {
  std::string text = "x,y\n";
  for (int i = 0; i < 20000; ++i)
    text += std::to_string(i) + ".25,\"" + std::to_string(i % 3) + "\"\n";
  const tn::Dataset d = tn::load_csv(csv_source(write_csv("large", text), "y"), true);
  CHECK(d.n == 20000);
  CHECK(d.X[19999] == doctest::Approx(19999.25));
  CHECK(d.num_classes == 3);
  const std::string msg = error_of_text("large_bad", text + "1,2,3\n");
  CHECK_MESSAGE(has(msg, ":20002: row has 3 fields"), msg);
}

TEST_CASE("load_csv: unreadable and empty files") {
  const std::string missing = (fs::temp_directory_path() / "turbanet_no_such_file.csv").string();
  std::string msg = error_of(csv_source(missing, "y"));
  CHECK(msg.starts_with("cannot read CSV file '" + missing + "': No such file or directory"));
  msg = error_of(csv_source(fs::temp_directory_path().string(), "y"));
  CHECK_MESSAGE(has(msg, "cannot read CSV file"), msg);
  const std::string empty = write_csv("empty", "");
  msg = error_of(csv_source(empty, "y"));
  CHECK_MESSAGE(msg.starts_with(empty + ": the file is empty"), msg);
  CHECK(has(error_of_text("blank", "\n\n"), "the file is empty"));
}

TEST_CASE("load_csv: unknown columns list the header and suggest the nearest") {
  const std::string path = write_csv("unknown", "sepal_length,petal_width,species\n1,2,a\n3,4,b\n");
  std::string msg = error_of(csv_source(path, "species", {"sepal_length", "petal_widht"}));
  CHECK_MESSAGE(msg.starts_with(path + ":1: "), msg);
  CHECK(has(msg, "column 'petal_widht' is not in the header"));
  CHECK(has(msg, "available columns: 'sepal_length', 'petal_width', 'species'"));
  CHECK(has(msg, "did you mean 'petal_width'?"));
  msg = error_of(csv_source(path, "specie"));
  CHECK(has(msg, "data.source.target: column 'specie'"));
  CHECK(has(msg, "did you mean 'species'?"));
  msg = error_of(csv_source(path, "zzzzzzzzzz"));
  CHECK_FALSE(has(msg, "did you mean"));
}

TEST_CASE("load_csv: duplicate or reused columns") {
  std::string msg = error_of_text("dup", "x,x,y\n1,2,0\n3,4,1\n");
  CHECK_MESSAGE(has(msg, ":1: column name 'x' appears more than once in the header"), msg);
  // A duplicate the config does not use is fine.
  CHECK(error_of_text("dup_unused", "x,z,z,y\n1,2,3,0\n3,4,5,1\n", "y", true, {"x"}).empty());
  msg = error_of_text("reuse", "x,y\n1,0\n3,1\n", "y", true, {"x", "y"});
  CHECK_MESSAGE(has(msg, "column 'y' is used twice (as the target and as a feature)"), msg);
}

TEST_CASE("load_csv: ragged rows") {
  const std::string path = write_csv("ragged", "a,b,c,y\n1,2,3,0\n\n4,5,1\n");
  const std::string msg = error_of(csv_source(path, "y"));
  CHECK_MESSAGE(msg.starts_with(path + ":4: row has 3 fields, the header has 4"), msg);
}

TEST_CASE("load_csv: bad cells name the line and the column") {
  const std::string body = "x1,x2,y\n1,2,0\n";
  std::string msg = error_of_text("abc", body + "3,abc,1\n");
  CHECK_MESSAGE(has(msg, ":3: column 'x2': 'abc' is not a number"), msg);
  msg = error_of_text("partial", body + "1.5x,2,1\n");
  CHECK_MESSAGE(has(msg, ":3: column 'x1': '1.5x' is not a number"), msg);
  msg = error_of_text("emptycell", body + "1,,1\n");
  CHECK_MESSAGE(has(msg, ":3: column 'x2': the value is empty"), msg);
  msg = error_of_text("nan", body + "1,2,1\nnan,3,0\n");
  CHECK_MESSAGE(has(msg, ":4: column 'x1': NaN is not allowed; remove or impute missing values"),
                msg);
  msg = error_of_text("inf", body + "1,-inf,1\n");
  CHECK_MESSAGE(has(msg, ":3: column 'x2': '-inf' is infinite"), msg);
  msg = error_of_text("huge", body + "1,1e300,1\n");
  CHECK_MESSAGE(has(msg, ":3: column 'x2': '1e300' does not fit a 32-bit float"), msg);
  msg = error_of_text("emptylabel", body + "1,2,\n");
  CHECK_MESSAGE(has(msg, ":3: column 'y': the class label is empty"), msg);
  msg = error_of_text("regress_text", body + "1,2,cat\n", "y", false);
  CHECK_MESSAGE(has(msg, ":3: column 'y': 'cat' is not a number"), msg);
}

TEST_CASE("load_csv: malformed CSV reports libcsv's error and the line") {
  std::string msg = error_of_text("unclosed", "x,y\n1,0\n2,1\n\"3,1\n4,0\n");
  CHECK_MESSAGE(has(msg, ":4: malformed CSV: "), msg);
  CHECK(has(msg, "never closed"));
  msg = error_of_text("stray", "x,y\n1,0\n2,\"a\"b\n");
  CHECK_MESSAGE(has(msg, ":3: malformed CSV: "), msg);
}

TEST_CASE("load_csv: too few rows or classes") {
  std::string msg = error_of_text("header_only", "x,y\n");
  CHECK_MESSAGE(has(msg, "found 0 data rows after the header; at least 2 are needed"), msg);
  msg = error_of_text("one_row", "x,y\n1,0\n");
  CHECK_MESSAGE(has(msg, "found 1 data row after"), msg);
  msg = error_of_text("one_class", "x,y\n1,cat\n2,cat\n");
  CHECK_MESSAGE(has(msg, "column 'y' has only one class ('cat')"), msg);
  msg = error_of_text("big_label", "x,y\n1,0\n2,99999999999999999999\n");
  CHECK_MESSAGE(has(msg, "is too large"), msg);
}

TEST_CASE("load_csv: the bundled iris data set") {
  const tn::Dataset d = tn::load_csv(
      csv_source(std::string(TURBANET_SOURCE_DIR) + "/data/iris.csv", "species"), true);
  CHECK(d.n == 150);
  CHECK(d.features == 4);
  CHECK(d.feature_names ==
        std::vector<std::string>{"sepal_length", "sepal_width", "petal_length", "petal_width"});
  CHECK(d.num_classes == 3);
  CHECK(d.class_names == std::vector<std::string>{"setosa", "versicolor", "virginica"});
  CHECK(d.X[0] == doctest::Approx(5.1));
  CHECK(d.y[0] == 0);
  CHECK(d.y[149] == 2);
}

TEST_CASE("load_csv: text that is not UTF-8 exits 2 at file:line:column, naming the column") {
  const std::string body = "x1,x2,y\n1,2,a\n3,4,b\n";
  // A class label (train exited 0 before; eval and export failed on the run file later).
  std::string msg = error_of_text("label_ff", body + "5,6,b\xFFz\n");
  CHECK_MESSAGE(has(msg, "label_ff.csv:4:6: column 'y': byte 0xFF is not valid UTF-8; text must be UTF-8"), msg);
  // A header name, which has no name to give: its column's number.
  msg = error_of_text("header_ff", "x1,\"x\xC3\",y\n1,2,a\n3,4,b\n");
  CHECK_MESSAGE(has(msg, "header_ff.csv:1:6: the name of column 2 in the header: byte 0xC3"), msg);
  // A category, a quoted cell over two lines, and a number whose bytes are not echoed.
  msg = error_of_text("category_ff", "c,y\nred,a\n\"bl\nu\xE9\",b\n");
  CHECK_MESSAGE(has(msg, "category_ff.csv:4:2: column 'c': byte 0xE9"), msg);
  msg = error_of_text("number_ff", body + "\xFF,6,a\n");
  CHECK_MESSAGE(has(msg, "number_ff.csv:4:1: column 'x1': byte 0xFF"), msg);
  CHECK(msg.find('\xFF') == std::string::npos);
  // A group, an id column and a regression target.
  const std::string groups = write_csv("group_ff", "g,x,y\nA,1,a\nA,2,b\nB\xFF,3,a\n");
  msg.clear();
  try {
    tn::load_csv(csv_source(groups, "y"), true, "g");
  } catch (const tn::DataError& e) {
    msg = e.what();
  }
  CHECK_MESSAGE(has(msg, ":4:2: column 'g': byte 0xFF"), msg);
  const std::string ids = write_csv("id_ff", "id,x\nok,1\n\xFE,2\n");
  msg.clear();
  try {
    tn::load_csv(csv_source(ids, "", {"x"}), false, "", {}, {"id"});
  } catch (const tn::DataError& e) {
    msg = e.what();
  }
  CHECK_MESSAGE(has(msg, ":3:1: column 'id': byte 0xFE"), msg);
  msg = error_of_text("target_ff", "x,y\n1,2\n3,\xC0\x80\n", "y", false);  // an overlong '\0'
  CHECK_MESSAGE(has(msg, "target_ff.csv:3:3: column 'y': byte 0xC0"), msg);
  // Valid UTF-8 of every length loads.
  CHECK(error_of_text("utf8_ok", "x,\xCE\xBB,y\n1,2,caf\xC3\xA9\n3,4,\xF0\x9F\x90\x9D\n", "y").empty());
}

TEST_CASE("load_csv: a header of 100,000 columns loads in linear time") {
  // Quadratic before: 10,000 / 40,000 / 1,000,000 columns took 0.23 / 2.31 / over 300 s.
  constexpr int kColumns = 100000;
  std::string header, row;
  for (int c = 0; c < kColumns; ++c) {
    header += 'f';
    header += std::to_string(c);
    header += ',';
    row += "1,";
  }
  const std::string path = write_csv("wide", header + "y\n" + row + "0\n" + row + "1\n");
  const auto start = std::chrono::steady_clock::now();
  const tn::Dataset d = tn::load_csv(csv_source(path, "y"), true);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(d.features == kColumns);
  CHECK(d.feature_names.back() == "f99999");
  MESSAGE(kColumns << " columns loaded in " << seconds << " s");
  CHECK(seconds < 5.0);  // about 0.2 s; quadratic, about 15 s
  CHECK_MESSAGE(has(error_of_text("wide_dup", header + "f5,y\n" + row + "1,0\n" + row + "1,1\n"),
                    "column name 'f5' appears more than once"), "a duplicate among many columns is still found");
}
