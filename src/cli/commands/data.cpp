// `turbanet data generate`: a config's built-in generator written as a CSV file, so the same
// data can be read back with a csv source or by other programs.
#include <spdlog/spdlog.h>

#include <filesystem>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "io/run_file_error.h"
#include "io/text_file.h"
#include "run/stored_inputs.h"
#include "data/sources.h"

namespace tn {
namespace {

int generate(const DataGenerateOptions& opt) {
  if (std::filesystem::path(opt.out).extension() != ".csv")
    throw UsageError("--out: '" + opt.out + "' must end in .csv");
  std::vector<Override> ov = data_section_overrides();
  for (const std::string& s : opt.set) ov.push_back(parse_override(s));
  const Config c = load_config(opt.config_path, ov);
  check_out_file(opt.out, opt.force, config_inputs(c));
  const SourceConfig& s = c.data.source;
  if (!is_generator(s.type))
    throw UsageError(opt.config_path + ": data.source.type is '" + s.type +
                     "', which is not a built-in generator; data generate writes random_walk, "
                     "spirals, moons or sine data (a file source is already a file)");
  const Dataset d = generate_source(s);
  const std::string target = d.num_classes > 0 ? "label" : s.type == "sine" ? "y" : "";
  writing_output([&] { write_text_atomically(opt.out, dataset_to_csv(d, target), opt.force); });
  spdlog::info("wrote {} rows of {} to {}", d.n, d.origin, opt.out);
  return kExitOk;
}

}  // namespace

int run_data_generate(const DataGenerateOptions& opt) {
  setup_logging(opt.verbosity);
  return with_user_errors([&] { return generate(opt); });
}

}  // namespace tn
