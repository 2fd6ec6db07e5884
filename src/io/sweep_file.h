// The file `turbanet sweep --out FILE.h5` writes: one dataset per column under /sweep
// (docs/sweep.md). Only src/io/ knows HDF5.
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

}  // namespace tn
