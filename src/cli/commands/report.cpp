// `turbanet report`: options → the report service (run/report_run.h) → one self-contained
// HTML page of the run, written atomically next to the run file or to --out.
#include <spdlog/spdlog.h>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "run/report_run.h"

namespace tn {

int run_report(const ReportOptions& opt) {
  setup_logging(opt.verbosity);
  return with_user_errors([&] {
    const std::string out = opt.out ? *opt.out : default_report_path(opt.run_path);
    check_out_file(out, opt.force, {{"RUN", opt.run_path}}, opt.out ? "--out" : "--out (default: RUN.html beside RUN)");
    const ReportSummary r = write_report(opt.run_path, out, opt.force);
    std::string sections;
    for (const std::string& s : r.sections) sections += (sections.empty() ? "" : ", ") + s;
    spdlog::info("wrote {} ({:.1f} KB): {}", out, static_cast<double>(r.bytes) / 1024, sections);
    return kExitOk;
  });
}

}  // namespace tn
