// The export service behind `turbanet export`: a stored swarm's member or ensemble as an ONNX
// model (export/onnx_model.h) or as NumPy arrays named as in the run file (.npz), written
// atomically. Formats, names and shapes: docs/export.md.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "export/member_tensors.h"
#include "export/npz.h"
#include "run/select_run.h"

namespace tn {

enum class ExportFormat { Onnx, Npz };

// "onnx" | "npz" → the format; throws UsageError naming the formats.
ExportFormat parse_export_format(const std::string& name);

// The arrays of the .npz export of `members` (local indices): params/layer_<i>/<tensor>
// ([S, ...] for several members, the member axis dropped for one), members/member,
// members/weight (with `weights`: each member's share of the ensemble), data/normalization/*,
// data/feature_names, data/class_names, config (the resolved YAML) and model (the
// architecture as JSON, what scripts/to_torch.py builds).
std::vector<NpyArray> npz_arrays(const StoredSwarm& run, const std::vector<int>& members, bool one_member,
                                 const std::vector<double>& weights = {});

// An export built in memory, ready to be written.
struct ExportedModel {
  std::string bytes;         // the .onnx or .npz file
  std::vector<int> members;  // global indices of the members it holds
  bool ensemble = false;
  SelectionRecord selection;  // the ensemble's selection (absent: every finite member alike)
};

// Loads the run and builds the export of the chosen member(s). The ensemble holds the members
// `select` chooses on the validation split (run/select_run.h; `threads` predict it), else
// those of the run's /ensemble, else every finite member. Throws RunFileError, ConfigError (a
// run file that cannot be used), UsageError (a member the run does not have, --select with
// --member), DataError (a validation split that cannot be rebuilt).
ExportedModel build_export(const std::string& run_path, ExportFormat format, const MemberChoice& choice,
                           const std::optional<SelectSpec>& select = std::nullopt, int threads = 0);

// Writes the export to `path` atomically (io/atomic_file.h): never half-written; with replace
// false an existing file is kept. Throws RunFileError naming the file.
void write_export(const std::string& path, ExportFormat format, const ExportedModel& model, bool replace);

}  // namespace tn
