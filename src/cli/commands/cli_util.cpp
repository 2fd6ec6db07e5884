// Command-line helpers shared by the subcommands: user errors to exit codes, option values.
#include "cli/commands/cli_util.h"

#include <spdlog/spdlog.h>

#include "backend/backend.h"
#include "cli/commands/commands.h"
#include "config/config.h"
#include "data/dataset.h"
#include "io/run_file.h"
#include "run/errors.h"

namespace tn {

int with_user_errors(const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const UsageError& e) {
    spdlog::error("{}", e.what());
  } catch (const RunFileError& e) {
    spdlog::error("{}", e.what());
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
  } catch (const DataError& e) {
    spdlog::error("{}", e.what());
  } catch (const BackendError& e) {
    spdlog::error("{}", e.what());
  }
  return kExitUsage;
}

Combine parse_combine(const std::string& name) {
  for (Combine c : {Combine::MeanProb, Combine::Vote, Combine::MeanLogit})
    if (name == to_string(c)) return c;
  throw UsageError("--combine: unknown rule '" + name + "'; allowed: mean_prob, vote, mean_logit");
}

}  // namespace tn
