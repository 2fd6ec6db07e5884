// The files a command reads and writes, checked before any work (see run/command_files.h).
#include "run/command_files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "io/atomic_file.h"
#include "run/errors.h"

namespace tn {
namespace {

namespace fs = std::filesystem;

bool control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The path as it can be shown in a message: control characters as \xNN.
std::string shown(const std::string& path) {
  std::string s;
  for (const char ch : path) {
    if (!control(static_cast<unsigned char>(ch))) {
      s += ch;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(ch));
    s += hex;
  }
  return s;
}

void check_characters(const std::string& key, const std::string& path) {
  for (std::size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    if (!control(c)) continue;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", c);
    throw UsageError(key + ": '" + shown(path) + "' holds a control character (byte " + byte + " at offset " +
                     std::to_string(i) + (c == 0 ? ", where the file name would end" : "") +
                     "); file names with control characters are refused: give the path without it");
  }
}

// stat(2) of `path`, symbolic links followed; nullopt when there is nothing there (or it
// cannot be reached), and errno then says why.
std::optional<struct stat> status(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

bool same(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

const char* kind_of(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// An output that exists must be a regular file (after symbolic links), which the atomic write
// replaces by renaming a new regular file over it.
void check_kind(const OutputFile& o) {
  errno = 0;
  const std::optional<struct stat> st = status(o.path);
  if (!st && errno == ELOOP) throw UsageError(o.key + ": " + io::output_problem(o.path));  // names the loop
  if (!st || S_ISREG(st->st_mode)) return;
  if (S_ISDIR(st->st_mode))
    throw UsageError(o.key + ": '" + o.path + "' is a directory; give a file name such as " +
                     (fs::path(o.path) / (o.what == "run file" || o.what == "checkpoint" ? "run.h5" : "NAME")).string());
  throw UsageError(o.key + ": '" + o.path + "' is " + kind_of(st->st_mode) + ", not a regular file; outputs are "
                   "written to a new file that is then moved into place, which would replace it: write to a file");
}

fs::path absolute_path(const std::string& p) {
  std::error_code ec;
  return fs::absolute(p, ec).lexically_normal();
}

// The same path once made absolute, normalized and its existing part's links resolved (for
// outputs that do not exist yet).
bool same_path(const std::string& a, const std::string& b) {
  std::error_code ec1, ec2;
  const fs::path x = fs::weakly_canonical(a, ec1), y = fs::weakly_canonical(b, ec2);
  return !ec1 && !ec2 && x == y;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  const std::optional<struct stat> x = status(a), y = status(b);
  return x && y && same(*x, *y);
}

void check_command_files(const std::vector<OutputFile>& outputs, const std::vector<NamedFile>& inputs) {
  for (const OutputFile& o : outputs) check_characters(o.key, o.path);
  for (const NamedFile& in : inputs) check_characters(in.key, in.path);
  for (const OutputFile& o : outputs) check_kind(o);
  for (const OutputFile& o : outputs) {
    const std::optional<struct stat> out = status(o.path);
    if (!out) continue;
    for (const NamedFile& in : inputs) {
      const std::optional<struct stat> st = status(in.path);
      if (!st || !same(*out, *st) || (!o.updated_input.empty() && same_file(o.updated_input, in.path))) continue;
      const bool alias = absolute_path(o.path) != absolute_path(in.path);  // a symbolic or hard link
      throw UsageError(o.key + ": '" + o.path + "' is the command's own input (" + in.key + " '" + in.path + "'" +
                       (alias ? ", the same file by another name" : "") +
                       "); write the output elsewhere: --force never replaces an input");
    }
  }
  for (std::size_t j = 1; j < outputs.size(); ++j)
    for (std::size_t i = 0; i < j; ++i)
      if (same_path(outputs[j].path, outputs[i].path) || same_file(outputs[j].path, outputs[i].path))
        throw UsageError(outputs[j].key + ": '" + outputs[j].path + "' is the " + outputs[i].what + " (" +
                         outputs[i].key + "); give each output its own file");
  for (const OutputFile& o : outputs)  // a name too long, an unwritable directory (io/atomic_file.h)
    if (const std::string why = io::output_problem(o.path); !why.empty()) throw UsageError(o.key + ": " + why);
  for (const OutputFile& o : outputs) {
    std::error_code ec;
    if (!o.replace && fs::exists(fs::symlink_status(o.path, ec)))
      throw UsageError(o.key + ": '" + o.path + "' already exists; pass --force to replace it, or write elsewhere");
  }
}

std::vector<NamedFile> config_inputs(const Config& c) {
  std::vector<NamedFile> files = {{"the config file", c.source_file}};
  const SourceConfig& s = c.data.source;
  for (const auto& [key, path] : {std::pair<const char*, const std::string*>{"path", &s.path},
                                  {"images", &s.images}, {"labels", &s.labels}, {"test_images", &s.test_images},
                                  {"test_labels", &s.test_labels}, {"x_path", &s.x_path}, {"y_path", &s.y_path},
                                  {"test_x_path", &s.test_x_path}, {"test_y_path", &s.test_y_path}})
    if (!path->empty()) files.push_back({std::string("data.source.") + key, *path});
  if (c.model.init_from.enabled()) files.push_back({"model.init_from.path", c.model.init_from.path});
  return files;
}

}  // namespace tn
