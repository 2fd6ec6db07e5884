// Reading a config file's text, and refusing a data or run file given where a config belongs.
#include "config/config_file.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tn::cfg {

std::string read_config_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError("cannot read config file '" + path + "': " + std::strerror(EISDIR));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read config file '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError("cannot read config file '" + path + "': read error");
  return text.str();
}

void check_not_data(const std::string& path, const std::string& text) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const auto refuse = [&](const std::string& what, const std::string& fix) {
    throw ConfigError("'" + path + "' is " + what + ", not a YAML config; " + fix);
  };
  if (text.starts_with("\x89HDF\r\n\x1a\n") || ext == ".h5" || ext == ".hdf5")
    refuse("an HDF5 file", "a run file goes to eval, predict or export (turbanet eval RUN.h5), and an HDF5 data "
                           "file is named in a config: data: {source: {type: hdf5, path: FILE}}");
  const std::string first_line = text.substr(0, text.find('\n'));
  const bool csv_like = !first_line.starts_with('#') && first_line.find(':') == std::string::npos &&
                        (first_line.find(',') != std::string::npos || first_line.find(';') != std::string::npos ||
                         first_line.find('\t') != std::string::npos);
  if (ext == ".csv" || ext == ".tsv" || (ext != ".yaml" && ext != ".yml" && csv_like))
    refuse("a CSV data file", "name it in a config, e.g. data: {source: {type: csv, path: " + path +
                              ", target: COLUMN}} (configs/iris.yaml is an example); predict takes it as --input");
  if (ext == ".npy" || ext == ".npz" || ext == ".onnx" || ext == ".gz" || text.find('\0') != std::string::npos)
    refuse("a binary file", "give the YAML config that describes the run (configs/*.yaml are examples)");
}

}  // namespace tn::cfg
