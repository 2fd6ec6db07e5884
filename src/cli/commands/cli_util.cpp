// Command-line helpers shared by the subcommands: errors to exit codes, option values.
#include "cli/commands/cli_util.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/commands/commands.h"
#include "run/errors.h"
#include "util/error_report.h"
#include "util/user_error.h"

namespace tn {

int with_user_errors(const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const UserError& e) {
    return report_failure(e);
  }
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

std::optional<SelectSpec> parse_select_options(const std::optional<std::string>& select,
                                               const std::optional<std::string>& select_by) {
  if (!select) {
    if (select_by)
      throw UsageError("--select-by " + *select_by + " chooses the members of --select top:K or greedy[:K]; add one "
                       "of them");
    return std::nullopt;
  }
  SelectSpec spec;
  try {
    spec = parse_select(*select);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--select: ") + e.what());
  }
  if (select_by && spec.method == SelectMethod::All)
    throw UsageError("--select-by " + *select_by + " has nothing to choose with --select all; use top:K or greedy[:K]");
  if (select_by) spec.metric = *select_by;
  return spec;
}

void check_out_file(const std::string& out, bool force, const std::vector<NamedFile>& inputs, const std::string& key) {
  check_command_files({{.key = key, .path = out, .what = "output", .replace = force}}, inputs);
}

bool print_stdout(const std::string& text) {
  errno = 0;
  const bool ok = std::fputs(text.c_str(), stdout) >= 0 && std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (!ok) spdlog::error("writing to standard output failed: {}", errno ? std::strerror(errno) : "write error");
  return ok;
}

}  // namespace tn
