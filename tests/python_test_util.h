// Test helpers for checks done with Python (h5py reads our files): finding an interpreter and
// capturing a command's output.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tn::test {

// A Python interpreter that can import h5py, or "" (pyenv shims may hide the system one).
inline std::string python_with_h5py() {
  for (const char* py : {"/usr/bin/python3", "python3"})
    if (std::system((std::string(py) + " -c 'import h5py' >/dev/null 2>&1").c_str()) == 0) return py;
  return "";
}

// What `command` prints on stdout (add 2>&1 for stderr too).
inline std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  pclose(pipe);
  return out;
}

}  // namespace tn::test
