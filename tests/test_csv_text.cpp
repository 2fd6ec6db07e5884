// Writing CSV text (util/csv_text.h): fields quoted as RFC 4180 asks, and a dataset written
// by `turbanet data generate` whose names hold commas and quotes reads back as written, with
// our reader and with Python's csv module.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "data/dataset.h"
#include "data/sources.h"
#include "python_test_util.h"
#include "util/csv_text.h"

using namespace tn;

TEST_CASE("csv_field: a comma, a quote, CR or LF puts the field in quotes with quotes doubled") {
  CHECK(csv_field("plain text") == "plain text");
  CHECK(csv_field("") == "");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field("carriage\rreturn") == "\"carriage\rreturn\"");
  std::string line;
  append_csv_line(line, {"id", "width, \"cm\"", "3"});
  CHECK(line == "id,\"width, \"\"cm\"\"\",3\n");
}

TEST_CASE("csv_field: names with commas and quotes round-trip through our reader and Python's csv") {
  Dataset d;
  d.n = 2;
  d.features = 1;
  d.feature_names = {"width, \"cm\""};
  d.X = {1.5f, 2.5f};
  d.y = {0.25f, 0.75f};
  d.group_column = "store \"north\", city";
  d.group_names = {"A,1", "say \"B\""};
  d.group = {0, 1};
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("turbanet-csv-text-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(path, std::ios::binary) << dataset_to_csv(d, "y, \"value\"");

  SourceConfig s;
  s.type = "csv";
  s.path = path.string();
  s.target = "y, \"value\"";
  const Dataset back = load_csv(s, false, d.group_column);
  CHECK(back.feature_names == d.feature_names);
  CHECK(back.group_names == d.group_names);
  CHECK(back.group == d.group);
  CHECK(back.X == d.X);
  CHECK(back.y == d.y);

  const std::string python = test::python_with_h5py();
  if (!python.empty()) {
    const std::string out = test::run_command(
        python + " -c 'import csv, sys; print(\"|\".join(\"/\".join(r) for r in csv.reader(open(sys.argv[1], newline=\"\"))))' " +
        path.string());
    CHECK(out == "store \"north\", city/width, \"cm\"/y, \"value\"|A,1/1.5/0.25|say \"B\"/2.5/0.75\n");
  }
  std::filesystem::remove(path);
}
