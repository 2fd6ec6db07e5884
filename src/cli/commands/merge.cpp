// `turbanet merge`: options → the merge service (run/merge_runs.h) → one run file, written
// atomically, of the whole sharded swarm.
#include <spdlog/spdlog.h>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "io/run_file_error.h"
#include "run/errors.h"
#include "run/merge_runs.h"

namespace tn {

int run_merge(const MergeOptions& opt) {
  setup_logging(opt.verbosity);
  return with_user_errors([&] {
    std::vector<NamedFile> parts;
    for (const std::string& p : opt.parts) parts.push_back({"PART", p});
    check_out_file(opt.out, opt.force, parts, "OUT");
    const RunFile r = merge_shards(opt.parts, opt.out);
    writing_output([&] { write_run_file(opt.out, r, opt.force); });
    spdlog::info("wrote {}: members {}..{} from {} shards", opt.out, r.meta.first_member,
                 r.meta.first_member + r.meta.swarm_size - 1, opt.parts.size());
    return kExitOk;
  });
}

}  // namespace tn
