// Test helpers for commands run as functions: scratch files, the log lines printed while a
// function runs, and a file's bytes.
#pragma once
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <unistd.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "util/log.h"

namespace tn::test {

// `name` in this process's scratch directory of `area` (/tmp/turbanet-<area>-<pid>/, created).
inline std::filesystem::path scratch_path(const std::string& area, const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("turbanet-" + area + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d / name;
}

// Writes `text` to `p` and returns p.
inline std::filesystem::path write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p;
}

// What the logger printed while fn ran (the messages a user sees).
template <class Fn>
std::string logged(Fn&& fn) {
  setup_logging(Verbosity::Quiet);
  std::ostringstream text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.push_back(sink);
  fn();
  sinks.pop_back();
  return text.str();
}

// The bytes of file p ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace tn::test
