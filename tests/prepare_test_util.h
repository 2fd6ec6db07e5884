// Helpers shared by the CSV encoding and column tests: a data config loaded and prepared as
// training does, and the DataError message of doing so.
#pragma once
#include <string>

#include "config/config.h"
#include "data/prepare.h"
#include "data/dataset.h"

namespace tn::test {

inline PreparedData prepared(const DataConfig& d) { return prepare_data(load_dataset(d, true), d); }

// The DataError message of preparing `d`, or "" when it prepares.
inline std::string error_of(const DataConfig& d) {
  try {
    prepared(d);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace tn::test
