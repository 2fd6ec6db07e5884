// `turbanet export`: options → the export service (export/export_run.h) → a member or the
// ensemble as an ONNX model or a NumPy .npz archive, written atomically.
#include <spdlog/spdlog.h>

#include <filesystem>

#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "io/run_file_error.h"
#include "export/export_run.h"

namespace tn {
namespace {

// --format, or the one --out's extension names (.onnx, .npz).
ExportFormat export_format(const ExportOptions& opt) {
  if (opt.format) return parse_export_format(*opt.format);
  const std::string ext = std::filesystem::path(opt.out).extension().string();
  if (ext == ".onnx") return ExportFormat::Onnx;
  if (ext == ".npz") return ExportFormat::Npz;
  throw UsageError("--out: '" + opt.out + "' does not say the format; pass --format onnx or --format npz, "
                   "or name the file *.onnx or *.npz");
}

int export_model(const ExportOptions& opt) {
  const ExportFormat format = export_format(opt);
  check_out_file(opt.out, opt.force, {{"RUN", opt.run_path}});
  const ExportedModel m = build_export(opt.run_path, format, {opt.member, opt.ensemble},
                                       parse_select_options(opt.select, opt.select_by), opt.threads);
  writing_output([&] { write_export(opt.out, format, m, opt.force); });
  if (m.ensemble && m.selection.present())
    spdlog::info("wrote the ensemble of the selected members ({}) to {}", describe_selection(m.selection), opt.out);
  else if (m.ensemble) spdlog::info("wrote the ensemble of {} members to {}", m.members.size(), opt.out);
  else spdlog::info("wrote member {} to {}", m.members.front(), opt.out);
  return kExitOk;
}

}  // namespace

int run_export(const ExportOptions& opt) {
  setup_logging(opt.verbosity);
  return with_user_errors([&] { return export_model(opt); });
}

}  // namespace tn
