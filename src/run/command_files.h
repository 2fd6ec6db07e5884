// The files a command reads and writes, checked together before any work, with --force or
// without: no output is one of the command's inputs, no output replaces a device, a FIFO or
// a directory, no path holds a control character, and an existing output is replaced only
// when that is allowed. Every command that writes a file calls check_command_files once.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"

namespace tn {

// A file as the user named it: `key` is the option or config key path that gave it ("--out",
// "output.path", "data.source.path"), or what it is ("the config file", "RUN").
struct NamedFile {
  std::string key, path;
};

struct OutputFile {
  std::string key, path;
  std::string what;       // "run file", "checkpoint": named when another output is the same file
  bool replace = false;   // an existing regular file may be replaced (--force, a resumed run's own file)
  std::string updated_input{};  // the one input this output may be, updated in place (eval --save's run file), or ""
};

// Files a command reads and writes besides those a service knows of (train --trials, --trials-out).
struct CommandFiles {
  std::vector<OutputFile> outputs;
  std::vector<NamedFile> inputs;
};

// Throws UsageError (exit 2) naming the key, the path and the fix, in this order of checks:
//  - a path (output or input) with a control character (bytes 0x00-0x1F, 0x7F; a NUL would
//    silently cut the name short);
//  - an output that exists and is not a regular file (a directory, a device such as /dev/null,
//    a FIFO, a socket), or a symbolic link that loops: the atomic write (io/atomic_file.h)
//    would replace it with a regular file;
//  - an output that is one of the inputs (other than its updated_input), compared as files (device
//    and inode, symbolic links followed), so a link or a hard link to an input is caught too;
//  - two outputs that are the same file, or the same path;
//  - an output that exists when `replace` is false.
// Inputs that do not exist are skipped (their readers report them).
void check_command_files(const std::vector<OutputFile>& outputs, const std::vector<NamedFile>& inputs);

// Whether `a` and `b` are the same existing file (device and inode, symbolic links followed).
bool same_file(const std::string& a, const std::string& b);

// The files config `c` reads: its YAML file (c.source_file), the data files of its source
// (data.source.path, .images, .labels, .x_path, ...) and model.init_from.path.
std::vector<NamedFile> config_inputs(const Config& c);

}  // namespace tn
