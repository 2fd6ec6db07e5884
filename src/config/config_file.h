// The text of a config file, and the check that it is not a data or run file. Internal to
// src/config/.
#pragma once
#include <string>

#include "config/config.h"

namespace tn::cfg {

// The bytes of `path`; ConfigError "cannot read config file 'PATH': reason" (a directory too).
std::string read_config_file(const std::string& path);

// Refuses a data or run file (HDF5, CSV, NumPy, ONNX, binary) given where a config belongs,
// before its bytes reach a message: ConfigError saying what it is and where it goes instead.
void check_not_data(const std::string& path, const std::string& text);

}  // namespace tn::cfg
