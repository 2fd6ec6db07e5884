// Command-line helpers shared by the subcommands: user errors to exit codes, option values.
#include "cli/commands/cli_util.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "backend/backend.h"
#include "cli/commands/commands.h"
#include "config/config.h"
#include "data/dataset.h"
#include "io/atomic_file.h"
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

void log_as_rank(const World& w) {
  const std::string rank = "rank " + std::to_string(w.rank) + " of " + std::to_string(w.size);
  spdlog::default_logger()->set_pattern("[%H:%M:%S] " + rank + " %^%l%$ %v");
  if (w.rank > 0) spdlog::set_level(spdlog::level::warn);
}

Combine parse_combine(const std::string& name) {
  for (Combine c : {Combine::MeanProb, Combine::Vote, Combine::MeanLogit})
    if (name == to_string(c)) return c;
  throw UsageError("--combine: unknown rule '" + name + "'; allowed: mean_prob, vote, mean_logit");
}

void check_out_file(const std::string& out, bool force, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const std::string& in : inputs)
    if (!in.empty() && fs::equivalent(out, in, ec))
      throw UsageError("--out: '" + out + "' is the command's own input '" + in + "'; write the output elsewhere");
  if (const std::string why = io::output_problem(out); !why.empty()) throw UsageError("--out: " + why);
  if (fs::exists(fs::symlink_status(out, ec)) && !force)
    throw UsageError("--out: '" + out + "' already exists; pass --force to replace it, or write elsewhere");
}

bool print_stdout(const std::string& text) {
  errno = 0;
  const bool ok = std::fputs(text.c_str(), stdout) >= 0 && std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (!ok) spdlog::error("writing to standard output failed: {}", errno ? std::strerror(errno) : "write error");
  return ok;
}

}  // namespace tn
