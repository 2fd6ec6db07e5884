// The /eval/<split>/ groups of a run file (layout in docs/run-file.md). Internal to src/io/.
#pragma once
#include <string>
#include <vector>

#include "io/h5.h"
#include "io/run_file.h"

namespace tn::io {

void write_eval(hid_t file, const EvalRecord& e);
// Every /eval/<split>/ group, in name order (none when /eval is absent).
std::vector<EvalRecord> read_evals(hid_t file);

}  // namespace tn::io
