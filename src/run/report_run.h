// `turbanet report`: one self-contained HTML page of what a run file holds (learning curves,
// final metrics, hyperparameters, predictions, searches), built from its stored records
// only, so it works on finished, interrupted, checkpointed and merged runs alike and says
// what is missing instead of failing (docs/commands.md, "Reports"). The drawing is src/report/.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "io/run_records.h"

namespace tn {

// The page for run file `f`, read from `path` (named in the page); `section_ids` (if given)
// receives the ids of the sections it holds, in order ("run", "curves", ...).
std::string report_html(const RunFile& f, const std::string& path, std::vector<std::string>* section_ids = nullptr);

// The page of a `turbanet sweep --out FILE.csv|FILE.h5` table: time, time per member and
// GFLOP/s against swarm size, one line per config and mode. Throws UsageError or RunFileError
// (exit 2) for a file that is not such a table, naming the line or column.
std::string sweep_report_html(const std::string& csv_path, std::vector<std::string>* section_ids = nullptr);

// RUN.html beside RUN.h5 (the run file's extension replaced; ".html" added when it has none).
std::string default_report_path(const std::string& run_path);

struct ReportSummary {
  std::size_t bytes = 0;
  std::vector<std::string> sections;
};

// Reads `run_path` without its parameters and member predictions (io/run_file.h
// read_run_records; RunFileError, exit 2, when missing, damaged or of another format
// version; a .csv path or an HDF5 file with /sweep is read as a sweep table) and writes its page to `out` atomically (replace: an existing file may be
// replaced). The caller has checked the output against the input (run/command_files.h).
ReportSummary write_report(const std::string& run_path, const std::string& out, bool replace);

}  // namespace tn
