// The source tree's layers point one way: a file under src/<layer>/ includes only its own
// layer and layers below it, no files include each other in a loop, and no two files in
// different folders share a name (docs/architecture.md).
// Reads the includes of every source file.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

TEST_CASE("layers: no source file includes a layer above its own") {
  // Bottom to top; layers of the same rank (eval, io) do not include each other either.
  const std::map<std::string, int> rank = {{"math", 0}, {"util", 0}, {"swarm", 1}, {"backend", 2}, {"eval", 3},
                                           {"io", 3},   {"report", 3}, {"config", 4}, {"data", 5}, {"model", 6}, {"train", 7},
                                           {"run", 8},  {"export", 9}, {"cli", 10}};
  const fs::path src = fs::path(TURBANET_SOURCE_DIR) / "src";
  const std::regex include(R"(#include\s+"([a-z_]+)/)");
  int files = 0, includes = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const std::string layer = fs::relative(e.path(), src).begin()->string();
    REQUIRE_MESSAGE(rank.count(layer), "src/" << layer << "/ is not a known layer: add it to this test and docs/architecture.md");
    ++files;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include) || m[1] == layer || !rank.count(m[1])) continue;
      ++includes;
      CHECK_MESSAGE(rank.at(m[1]) < rank.at(layer),
                    fs::relative(e.path(), src).string() << " (" << layer << ") includes " << m[1] << "/: a layer at or above its own");
    }
  }
  MESSAGE(files << " files, " << includes << " includes across layers checked");
  CHECK(files > 100);
}

// The include graph of src/ between files: src/a/x.h and src/a/x.cpp are the file "a/x"; an
// edge x -> y when either includes y's header. Highway's "-inl.h" files re-include themselves
// by design and are left out.
static std::map<std::string, std::set<std::string>> include_graph() {
  const fs::path src = fs::path(TURBANET_SOURCE_DIR) / "src";
  const std::regex include(R"rx(#include\s+"([A-Za-z0-9_/.-]+)")rx");
  auto unit = [](std::string p) { return p.substr(0, p.rfind('.')); };
  auto inl = [](const std::string& p) { return p.size() > 6 && p.compare(p.size() - 6, 6, "-inl.h") == 0; };
  std::map<std::string, std::set<std::string>> edges;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), src).generic_string();
    if (inl(rel)) continue;
    edges[unit(rel)];
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include) || inl(m[1]) || !fs::exists(src / m[1].str())) continue;
      if (unit(m[1]) != unit(rel)) edges[unit(rel)].insert(unit(m[1]));
    }
  }
  return edges;
}

TEST_CASE("layers: no include loop between files (a header and its source count as one file)") {
  std::map<std::string, std::set<std::string>> edges = include_graph();
  // Depth-first search; a grey file reached again closes a loop, reported as the path around it.
  std::map<std::string, int> colour;  // 0 white, 1 grey (on the path), 2 black
  std::vector<std::string> path;
  std::set<std::string> loops;
  std::function<void(const std::string&)> visit = [&](const std::string& f) {
    colour[f] = 1;
    path.push_back(f);
    for (const auto& to : edges[f]) {
      if (colour[to] == 1) {
        std::string loop;
        for (auto it = std::find(path.begin(), path.end(), to); it != path.end(); ++it) loop += *it + " -> ";
        loops.insert(loop + to);
      } else if (colour[to] == 0) {
        visit(to);
      }
    }
    path.pop_back();
    colour[f] = 2;
  };
  for (const auto& [f, to] : edges)
    if (colour[f] == 0) visit(f);
  for (const auto& loop : loops)
    FAIL_CHECK("include loop: " << loop << " (move what both need into the lower file or a new one)");
  MESSAGE(edges.size() << " files checked for include loops");
  CHECK(edges.size() > 100);
}

TEST_CASE("layers: no two files in src/ share a name across folders (a header and its source count as one)") {
  // A name says what a file holds only when it is not also the name of something else:
  // backend/step_kernel.h beside model/step_kernel.h made every reader open both. The name of
  // a file is its basename without the extension (and without Highway's "-inl" suffix).
  // Clashes that stay, each with its reason; one that no longer clashes must leave the list.
  const std::map<std::string, std::string> allowed = {
  };
  const fs::path src = fs::path(TURBANET_SOURCE_DIR) / "src";
  auto name_of = [](const fs::path& p) {
    std::string n = p.filename().string();
    n = n.substr(0, n.find('.'));
    if (n.size() > 4 && n.compare(n.size() - 4, 4, "-inl") == 0) n.resize(n.size() - 4);
    return n;
  };
  std::map<std::string, std::set<std::string>> folders;  // name -> the folders holding a file of that name
  for (const auto& e : fs::recursive_directory_iterator(src))
    if (e.is_regular_file()) folders[name_of(e.path())].insert(fs::relative(e.path().parent_path(), src).generic_string());
  for (const auto& [name, in] : folders) {
    if (in.size() < 2) continue;
    std::string where;
    for (const auto& f : in) {
      if (!where.empty()) where += ", ";
      where += f;
      where += '/';
    }
    CHECK_MESSAGE(allowed.count(name), "\"" << name << "\" names files in " << where
                  << ": rename one for what it holds (or list the clash here with its reason)");
  }
  for (const auto& [name, why] : allowed)
    CHECK_MESSAGE(folders[name].size() > 1, "\"" << name << "\" no longer names files in two folders: remove it from "
                  "the allowed clashes (" << why << ")");
  CHECK(folders.size() > 100);
}

TEST_CASE("test names: every test case runs under ctest (no semicolon in a name)") {
  // doctest_discover_tests registers each case under its name in a CMake list: a ';' splits the
  // name in two, and each half runs no test case at all, which passes. Reads every test file.
  const std::regex test_case(R"rx(TEST_CASE\("((?:[^"\\]|\\.)*)"\))rx");
  int cases = 0;
  for (const auto& e : fs::directory_iterator(fs::path(TURBANET_SOURCE_DIR) / "tests")) {
    if (e.path().extension() != ".cpp") continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, test_case)) continue;
      ++cases;
      CHECK_MESSAGE(m[1].str().find(';') == std::string::npos,
                    e.path().filename().string() << ": \"" << m[1].str() << "\" has a ';', which ctest splits into two "
                    "names that run nothing; use a comma");
    }
  }
  CHECK(cases > 300);
}

TEST_CASE("layers: export/ writes the stored model of run/ without reaching the inputs or forward pass of eval and predict") {
  // run/stored_swarm.* loads the model (config, parameters, statistics): all the ONNX and .npz
  // writers need. The inputs (own splits, new data and series) and the forward pass are files
  // of their own, so a change to them does not reach the writers. export_run.* (the service)
  // is left out: its --select predicts the validation split through run/select_run.h.
  const std::map<std::string, std::set<std::string>> edges = include_graph();
  std::set<std::string> reached;
  std::vector<std::string> todo;
  for (const auto& [f, to] : edges)
    if (f.rfind("export/", 0) == 0 && f != "export/export_run") todo.push_back(f);
  while (!todo.empty()) {
    const std::string f = todo.back();
    todo.pop_back();
    if (!reached.insert(f).second) continue;
    const auto it = edges.find(f);
    if (it != edges.end()) todo.insert(todo.end(), it->second.begin(), it->second.end());
  }
  CHECK(reached.count("run/stored_swarm"));
  for (const std::string f : {"run/stored_inputs", "run/stored_predict", "run/new_series", "run/command_files"})
    CHECK_MESSAGE(!reached.count(f), "export/ includes " << f << ", directly or through another file");
}
