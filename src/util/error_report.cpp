// Errors to log lines and exit codes.
#include "util/error_report.h"

#include <spdlog/spdlog.h>

#include "util/user_error.h"

namespace tn {

int report_failure(const std::exception& e, const std::string& internal) {
  if (dynamic_cast<const UserError*>(&e)) spdlog::error("{}", e.what());
  else spdlog::critical("{}: {}", internal, e.what());
  return exit_code_of(e);
}

}  // namespace tn
