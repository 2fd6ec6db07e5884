// Logging set-up: spdlog to stderr (stdout stays free for machine-readable output).
#pragma once

namespace tn {

enum class Verbosity { Quiet, Normal, Verbose };
void setup_logging(Verbosity v);

}  // namespace tn
