// The one mapping between a trained swarm and its run file, both ways (the file's in-memory
// form is io/run_file.h; io/run_file.cpp lays it out in HDF5). Parameters are stored per layer
// as /params/layer_<i>/<tensor> [S, dims...] and held in memory in ParamLayout order.
#pragma once
#include <string>
#include <vector>

#include "backend/backend.h"
#include "config/config.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "io/run_file.h"
#include "model/build.h"
#include "train/trainer.h"

namespace tn {

// Layout-ordered swarm parameters as the file's layers: tensor t of the shape goes to layer
// shape.layer_of(t) under shape.tensor_name(t), shaped [S, tensor_dims(t)...].
std::vector<LayerParams> params_to_layers(const ModelShape& shape, const ParamLayout& layout, const std::vector<float>& p);

// The inverse: checks that `layers` hold exactly the shape's tensors (names, order and
// shapes for `members` members) and flattens them to ParamLayout order. Throws RunFileError
// naming the file `path` and the tensor.
std::vector<float> params_from_layers(const std::vector<LayerParams>& layers, const ModelShape& shape, int members,
                                      const std::string& path, const std::string& root = "/params");

// Now as /meta@created records it: ISO-8601 UTC, e.g. 2026-11-26T04:11:55Z.
std::string utc_now();

// The run file of a finished training: resolved config, metadata (device, kernel, timings),
// trained and initial parameters, histories, what each member trained on, the splits, the
// normalization, and the final evaluation's predictions (what cfg.output.predictions keeps:
// keep_predictions) and record.
RunFile make_run_file(const Config& cfg, const PreparedData& data, const MemberSets& sets, const TrainOutput& t,
                      const Backend& be, double wall, const Predictions& predictions, const EvalRecord& record);
// The same without the final evaluation: what a checkpoint holds besides its /train_state.
RunFile make_trained_file(const Config& cfg, const PreparedData& data, const MemberSets& sets, const TrainOutput& t,
                          const Backend& be, double wall);

// The run's resolved configuration (/config). Relative data file paths are looked up where the
// run was trained (/data@base_dir), then in the working directory, then beside the run file,
// so a run file works from any directory. Throws ConfigError (DataFileNotFound for data
// that is in none of these places).
// The encoding of CSV columns as stored in /data/encoding, and back (RunFileError naming `path`
// for an unknown kind or missing-value rule).
EncodingRecord encoding_record(const FeatureEncoding& e);
FeatureEncoding stored_encoding(const EncodingRecord& r, const std::string& path);

Config run_file_config(const RunFile& file, const std::string& path, const std::vector<Override>& overrides = {});

// The model a read run file holds: its shape, rebuilt from the stored config and the first
// layer's input width, and the parameters in ParamLayout order.
struct FileArchitecture {
  std::string name;
  std::vector<int> members;  // local indices
  ModelShape shape;
  std::vector<float> params;
};
struct FileModel {
  ModelShape shape;  // with `architectures`: the first one's
  std::vector<float> params;  // empty with `architectures`
  std::vector<FileArchitecture> architectures;  // members of several architectures (RunFile::architectures)
  bool classification = false;
  int K = 0;  // classes (2 for bce); 0 for regression
};
// Throws RunFileError naming `path` when the parameters do not fit the config's model.
FileModel model_from_run_file(const RunFile& file, const Config& cfg, const std::string& path);

}  // namespace tn
