// CSV dialects: detected or given delimiters, quote and comment characters, header-less files
// with data.source.columns, and errors that still name file:line.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "data/dataset.h"
#include "source_test_util.h"

using namespace tn;
using tn::test::write_text;

namespace {

SourceConfig csv(const std::string& path, const std::string& target = "y") {
  SourceConfig s;
  s.type = "csv";
  s.path = path;
  s.target = target;
  return s;
}

std::string error_of(const SourceConfig& s) {
  try {
    load_csv(s, true);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the delimiter is detected from the first line") {
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"semi.csv", "a;b;y\n1.5;2;0\n3;4;1\n"},
           {"tab.csv", "a\tb\ty\n1.5\t2\t0\n3\t4\t1\n"},
           {"pipe.csv", "a|b|y\n1.5|2|0\n3|4|1\n"},
           {"quoted.csv", "\"a;x\",b,y\n1.5,2,0\n3,4,1\n"}}) {
    const std::string path = write_text(name, text);
    const Dataset d = load_csv(csv(path), true);
    INFO(name);
    CHECK(d.n == 2);
    CHECK(d.features == 2);
    CHECK(d.X == std::vector<float>{1.5f, 2, 3, 4});
    CHECK(d.y == std::vector<float>{0, 1});
  }
}

TEST_CASE("a given delimiter and quote character are used as given") {
  SourceConfig s = csv(write_text("given.csv", "a;b;y\n'1;5';2;0\n3;4;1\n"));
  s.delimiter = ';';
  s.quote = '\'';
  CHECK_THROWS_WITH_AS(load_csv(s, true), doctest::Contains("given.csv:2: column 'a': '1;5' is not a number"), DataError);
  s = csv(write_text("given2.csv", "a,b,y\n1.5,2,0\n3,4,1\n"));
  s.delimiter = ';';  // wrong: one column named "a,b,y"
  CHECK_THROWS_WITH_AS(load_csv(s, true), doctest::Contains("column 'y' is not in the header"), DataError);
}

TEST_CASE("comment lines are skipped and line numbers still count them") {
  SourceConfig s = csv(write_text("comments.csv", "# made by hand\na,b,y\n# first row\n1,2,0\n3,4,1\n#x\n5,6,2\n"));
  s.comment = '#';
  const Dataset d = load_csv(s, true);
  CHECK(d.n == 3);
  CHECK(d.X == std::vector<float>{1, 2, 3, 4, 5, 6});
  s = csv(write_text("comments_bad.csv", "# one\n# two\na,b,y\n1,2,0\n#\n3,4\n"));
  s.comment = '#';
  const std::string msg = error_of(s);
  CHECK_HAS(msg, "comments_bad.csv:6: row has 2 fields, the header has 3");
  s = csv(write_text("comments_head.csv", "# one\na,b\n1,2\n"));
  s.comment = '#';
  CHECK_HAS(error_of(s), "comments_head.csv:2: data.source.target: column 'y' is not in the header");
}

TEST_CASE("a file without a header takes its column names from data.source.columns") {
  SourceConfig s = csv(write_text("nohead.csv", "1;2;0\n3;4;1\n"));
  s.columns = {"a", "b", "y"};
  const Dataset d = load_csv(s, true);
  CHECK(d.n == 2);
  CHECK(d.feature_names == std::vector<std::string>{"a", "b"});
  CHECK(d.X == std::vector<float>{1, 2, 3, 4});
  s = csv(write_text("nohead_bad.csv", "1,2,0\n3,4\n"));
  s.columns = {"a", "b", "y"};
  CHECK_HAS(error_of(s), "nohead_bad.csv:2: row has 2 fields, data.source.columns names 3");
  s.columns = {"a", "b", "z"};
  CHECK_HAS(error_of(s), "data.source.columns: data.source.target: column 'y' is not in the header");
}

TEST_CASE("dialect keys in the config") {
  const std::string path = write_text("cfg.csv", "a;b;y\n1;2;0\n3;4;1\n");
  const std::string head = "model: {layers: [{units: 2}]}\ndata:\n  source: {type: csv, path: " + path + ", target: y";
  const Config c = parse_config(head + ", delimiter: tab, quote: \"'\", comment: '#', columns: [a, b, y]}\n", "c.yaml");
  CHECK(c.data.source.delimiter == '\t');
  CHECK(c.data.source.quote == '\'');
  CHECK(c.data.source.comment == '#');
  CHECK(c.data.source.columns == std::vector<std::string>{"a", "b", "y"});
  const Config back = parse_config(to_yaml(c), "again");
  CHECK(back.data.source.delimiter == '\t');
  CHECK(back.data.source.quote == '\'');
  CHECK(back.data.source.comment == '#');
  CHECK(back.data.source.columns == c.data.source.columns);
  CHECK(parse_config(head + ", delimiter: auto}\n", "c.yaml").data.source.delimiter == '\0');
  CHECK_THROWS_WITH_AS(parse_config(head + ", delimiter: ';;'}\n", "c.yaml"),
                       doctest::Contains("c.yaml:3"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_config(head + ", delimiter: ';;'}\n", "c.yaml"),
                       doctest::Contains("must be one character"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_config(head + ", delimiter: ';', quote: ';'}\n", "c.yaml"),
                       doctest::Contains("data.source.quote"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_config(head + ", columns: [a, a, y]}\n", "c.yaml"),
                       doctest::Contains("named twice"), ConfigError);
  const Config semi = parse_config(head + "}\n", "c.yaml");
  CHECK(load_dataset(semi.data, true).n == 2);  // detected
}
