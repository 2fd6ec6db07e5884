// The /eval/<split>/ groups of a run file and the ensemble selections (layout in
// docs/run-file.md). Internal to src/io/.
#pragma once
#include <string>
#include <vector>

#include "io/h5.h"
#include "io/run_records.h"

namespace tn::io {

void write_eval(hid_t file, const EvalRecord& e);
// Every /eval/<split>/ group, in name order (none when /eval is absent).
std::vector<EvalRecord> read_evals(hid_t file);

// A selection (/ensemble, /eval/<split>/selection, a prediction file's /selection) as group
// `g`: nothing when it is absent; reading an absent group gives an absent record. Throws
// h5::Error when member and weight differ in length.
void write_selection(hid_t file, const std::string& g, const SelectionRecord& s);
SelectionRecord read_selection(hid_t file, const std::string& g);

}  // namespace tn::io
