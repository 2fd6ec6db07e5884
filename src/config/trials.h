// Ask/tell trials (`turbanet train CONFIG --trials FILE`): a CSV or JSON file with one row per
// trial and one column per per-member key becomes a swarm with one member per trial, through
// overrides of the configuration (so every check of the YAML applies to trial values too).
#pragma once
#include <string>
#include <vector>

#include "config/config.h"

namespace tn {

struct Trials {
  std::string path;
  std::vector<std::string> keys;            // the per-member keys, in column order
  std::vector<std::vector<double>> values;  // [keys][trials]
  std::vector<std::string> ids;             // [trials] the `trial` column, else "0", "1", ...
  std::vector<std::string> rows;            // [trials] where each is: "row 3" (CSV line) or "trial 2" (JSON, 1-based)
  int size() const { return static_cast<int>(ids.size()); }
};

// Reads FILE.csv (a header of keys, then one row of numbers per trial; `#` comments and blank
// lines skipped) or FILE.json (a list of objects {key: number}, or {"trials": [...]}). An
// optional column `trial` names each trial (a whole number or text). ConfigError naming the
// file, row (1-based, counting the header in CSV) and column: a key that is not a per-member
// key, a missing or extra cell, a value that is not a finite number, duplicate columns or ids.
Trials read_trials(const std::string& path);

// The overrides that make `t` the swarm: swarm.size and KEY={values: [...]} per column, the
// values written so that they read back bitwise.
std::vector<Override> trial_overrides(const Trials& t);

// A ConfigError from loading a configuration with trial_overrides(t), line by line (one error
// a line): a line that concerns a trial value ("--set KEY=...: KEY.values[i]: problem") becomes
// the same problem naming the trials file, the trial's row and column; other lines unchanged.
std::string trial_error(const Trials& t, const std::string& message);

// Checks a loaded configuration against its trials: no grid (each row is one member's
// combination already) and no group_by (one member per group). ConfigError otherwise.
void check_trials_config(const Trials& t, const Config& cfg);

}  // namespace tn
