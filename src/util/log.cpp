// Logging set-up.
#include "util/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace tn {

void setup_logging(Verbosity v) {
  static auto logger = [] {
    auto l = spdlog::stderr_color_mt("turbanet");
    l->set_pattern("[%H:%M:%S] %^%l%$ %v");
    return l;
  }();
  spdlog::set_default_logger(logger);
  spdlog::set_level(v == Verbosity::Quiet ? spdlog::level::warn
                    : v == Verbosity::Verbose ? spdlog::level::debug
                                              : spdlog::level::info);
}

}  // namespace tn
