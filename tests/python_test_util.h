// Test helpers for checks done with Python (h5py reads our files): finding an interpreter and
// capturing a command's output.
#pragma once
#include <cstdio>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace tn::test {

// A Python interpreter that can import h5py, or "" (pyenv shims may hide the system one).
inline std::string python_with_h5py() {
  for (const char* py : {"/usr/bin/python3", "python3"})
    if (std::system((std::string(py) + " -c 'import h5py' >/dev/null 2>&1").c_str()) == 0) return py;
  return "";
}

// A Python interpreter that can import h5py and scikit-learn, or "".
inline std::string python_with_sklearn() {
  const std::string py = python_with_h5py();
  if (py.empty() || std::system((py + " -c 'import sklearn' >/dev/null 2>&1").c_str()) != 0) return "";
  return py;
}

// The test venv's Python ($TURBANET_TEST_VENV or .venv-test) when it imports `modules` (as an
// import statement lists them), or "".
inline std::string test_venv_python(const std::string& modules) {
  const char* env = std::getenv("TURBANET_TEST_VENV");
  const std::filesystem::path venv = env ? std::filesystem::path(env) : std::filesystem::path(TURBANET_SOURCE_DIR) / ".venv-test";
  const std::string py = (venv / "bin" / "python").string();
  if (!std::filesystem::exists(py)) return "";
  return std::system((py + " -c 'import " + modules + "' >/dev/null 2>&1").c_str()) == 0 ? py : "";
}

// The export tests' Python (numpy, h5py, onnx, onnxruntime), or "".
inline std::string export_python() { return test_venv_python("onnxruntime, onnx, h5py"); }

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

// What `python script RUN1 METHOD1 RUN2 METHOD2 ...` prints (stdout and stderr): a check script
// over run files, each with the setting it was trained with.
inline std::string run_script_on_runs(const std::string& python, const std::string& script,
                                      const std::vector<std::pair<std::filesystem::path, std::string>>& runs) {
  std::string cmd = python + " " + script;
  for (const auto& [run, setting] : runs) {
    cmd += ' ';
    cmd += run.string();
    cmd += ' ';
    cmd += setting;
  }
  return run_command(cmd + " 2>&1");
}

// Reads every dataset and every attribute of each file with h5py; prints "<datasets> <path>"
// per file, or the Python error.
inline std::string read_all_with_h5py(const std::string& python, const std::vector<std::string>& files) {
  const std::filesystem::path script =
      std::filesystem::temp_directory_path() / ("turbanet-read-all-" + std::to_string(::getpid()) + ".py");
  std::ofstream(script) << "import sys, h5py\n"
                           "for path in sys.argv[1:]:\n"
                           "    n = 0\n"
                           "    with h5py.File(path, 'r') as f:\n"
                           "        def visit(name, obj):\n"
                           "            global n\n"
                           "            for k in obj.attrs: obj.attrs[k]\n"
                           "            if isinstance(obj, h5py.Dataset):\n"
                           "                obj[()]\n"
                           "                n += 1\n"
                           "        for k in f.attrs: f.attrs[k]\n"
                           "        f.visititems(visit)\n"
                           "    print(n, path)\n";
  std::string cmd = python + " " + script.string();
  for (const std::string& f : files) cmd += " '" + f + "'";
  return run_command(cmd + " 2>&1");
}

}  // namespace tn::test
