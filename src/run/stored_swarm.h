// A trained swarm loaded back from its run file for eval and predict: the configuration,
// model shape and parameters, checked against each other (run/swarm_file.h), and the inputs
// it can be run on (its own splits, rebuilt, or new data preprocessed with the stored
// statistics).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "data/dataset.h"
#include "data/encode.h"
#include "data/sequence_units.h"
#include "eval/combine.h"
#include "eval/own.h"
#include "io/run_file.h"
#include "run/command_files.h"
#include "model/build.h"
#include "run/errors.h"
#include "run/stored_types.h"

namespace tn {

// Text-valued per-member values for reports (eval/by_hparam.h): /members/hparams' text keys
// (model.hidden, activations, recurrent types) and, when members differ in more than one
// architecture key, "architecture": each member's whole architecture.
std::vector<std::pair<std::string, std::vector<std::string>>> architecture_hparams(const StoredSwarm& run);

// Reads the run file and its /config and checks that the parameters fit the model. With
// `own_data` false the config's data source is replaced (so a training CSV that has moved
// does not matter); the stored feature names and statistics are used instead. Throws
// RunFileError, ConfigError or UsageError.
StoredSwarm load_swarm(const std::string& path, bool own_data);

// The model alone (shape, parameters, stored statistics and names), for any run, sequence runs
// included: the config's data section is not used (as load_swarm with own_data false).
StoredSwarm load_swarm_model(const std::string& path);

// Rebuilds split `split` ("test", "val", "train" or "all") of the run's own data, checking
// that it still matches the run (normalization statistics, classes, stored targets).
// No split named: test, else train (logged). Throws UsageError, DataError, ConfigError.
Inputs own_split(const StoredSwarm& run, const std::optional<std::string>& split);

// New data from `file`: a YAML config (its data section, every sample) or a CSV file with
// the run's feature columns by name (sequence runs, labeled only: every window of each series
// of a long-format CSV, run/new_series.h) (and, when `labeled`, its target column: the run's
// CSV target, or "label" for runs on built-in data). Labels are mapped to the run's classes
// by name. `id_columns` are carried through as text (ids). Throws DataError, ConfigError, UsageError.
Inputs new_data(const StoredSwarm& run, const std::string& file, bool labeled,
                const std::vector<std::string>& id_columns = {});

// The files new_data reads from `file`, given by option `key` (predict --input, eval --data):
// the file and, for a YAML config, its data files (run/command_files.h). A config that
// cannot be read adds none; new_data reports it.
std::vector<NamedFile> new_data_files(const std::string& key, const std::string& file);

// The overrides that let a config be read for its data section alone (data generate, a config
// as new data): a placeholder model and loss, and no grid (its keys may be the model's).
std::vector<Override> data_section_overrides();

// Every member's outputs and logits on `in`, on the device `device: auto` picks (a GPU when
// the build has the CUDA backend and one is present, else the CPU with `threads` threads).
SwarmPredictions run_swarm(const StoredSwarm& run, const Inputs& in, int threads);

// Throws UsageError when `how` does not apply to the run (vote needs a classification run).
void check_combine(const StoredSwarm& run, Combine how);

// group_by runs: each member's outputs on the samples of its own group (in.group), on the
// device run_swarm picks; in original units too when in.units is not the identity.
OwnPredictions run_own(const StoredSwarm& run, const Inputs& in, int threads);

}  // namespace tn
