// The file `turbanet sweep --out FILE.h5` writes: one dataset per column under /sweep
// (docs/sweep.md), and reads back for `turbanet report`. Only src/io/ knows HDF5.
#pragma once
#include <string>
#include <vector>

namespace tn {

struct SweepTable {
  std::string version;  // turbanet version (/sweep@version)
  double peak_gflops = 0;
  int peak_n = 0;
  std::vector<std::string> columns;
  // Per column: its text values ([rows]) for a text column, else empty and its numbers in num.
  std::vector<std::vector<std::string>> text;
  std::vector<std::vector<double>> num;
};

// Writes atomically, like write_run_file (replace: as there). Throws RunFileError.
void write_sweep_file(const std::string& path, const SweepTable& t, bool replace = true);

// Reads a file write_sweep_file wrote (columns in name order), checked like a run file
// (io/h5_file.h read_h5_checked). Throws RunFileError when it is missing, damaged or has no /sweep.
SweepTable read_sweep_file(const std::string& path);

// Whether `path` is an HDF5 file with a /sweep group; false for anything that cannot be read.
bool is_sweep_file(const std::string& path);

}  // namespace tn
