// load_dataset: the one dispatch from data.source.type to a generator or file reader, and
// the hdf5 source (its file access lives in io/h5_source.cpp).
#include "data/sources.h"

#include <algorithm>
#include <utility>

#include "io/h5_source.h"

namespace tn {
namespace {

// Fails unless the loss kind fits a source whose targets are always classes or numbers.
void require_kind(const SourceConfig& s, bool classification, bool source_has_classes) {
  if (classification == source_has_classes) return;
  if (source_has_classes)
    throw DataError("data.source: " + s.type + " has class labels; use loss cross_entropy (one "
                    "output per class) or bce (one output, two classes)");
  throw DataError("data.source: " + s.type + " has real-valued targets; use a regression loss "
                  "(mse, mae or huber)");
}

}  // namespace

Dataset load_hdf5(const SourceConfig& s, bool classification) {
  std::vector<io::H5Request> requests = {{s.x_dataset, "data.source.x_dataset"},
                                         {s.y_dataset, "data.source.y_dataset"}};
  if (!s.test_x_dataset.empty()) {
    requests.push_back({s.test_x_dataset, "data.source.test_x_dataset"});
    requests.push_back({s.test_y_dataset, "data.source.test_y_dataset"});
  }
  std::vector<NumericArray> arrays;
  try {
    arrays = io::read_h5_arrays(s.path, requests);
  } catch (const io::SourceError& e) {
    throw DataError(e.what());
  }
  SourceArrays a;
  a.X = std::move(arrays[0]);
  a.y = std::move(arrays[1]);
  if (arrays.size() == 4) {
    a.test_X = std::move(arrays[2]);
    a.test_y = std::move(arrays[3]);
  }
  return dataset_from_arrays(std::move(a), classification, s.path);
}

Dataset load_memory_arrays(const DataConfig& data, bool classification, SourceArrays* arrays) {
  if (!arrays)
    throw DataError("data.source: type arrays holds arrays handed over in memory (Python: turbaswarm.train(config, X, "
                    "y)); from the command line, write them as .npy files (type: npy, x_path, y_path) or HDF5 (type: hdf5)");
  if (data.sequence.enabled())
    throw DataError("data.sequence: sequence data need a csv or random_walk source, not in-memory arrays");
  const std::string origin = "arrays X" + shape_text(arrays->X.shape);
  return dataset_from_arrays(std::move(*arrays), classification, origin);
}

namespace {

// The long-format table of sequence data: random_walk, or the csv columns data.sequence names.
Dataset load_table(const DataConfig& data, const std::vector<std::string>& id_columns) {
  const SourceConfig& s = data.source;
  const SequenceConfig& q = data.sequence;
  const bool grouped = data.per_member == PerMember::GroupBy;
  if (s.type == "random_walk") {
    Dataset d = make_random_walk(s);
    if (!grouped) {  // one series (config: series: 1)
      d.group.clear();
      d.group_names.clear();
    }
    if (q.time.empty()) {  // file order, as for a csv without a time column
      d.time.clear();
      d.time_column.clear();
    }
    return d;
  }
  if (s.type != "csv")
    throw DataError("data.sequence: sequence data need a csv or random_walk source, not '" + s.type + "'");
  const std::string target_key = "data.sequence.target", features_key = "data.sequence.features";
  std::vector<std::string> columns = q.features, keys;
  for (const std::string& c : columns) keys.push_back(c == q.target ? target_key : features_key);
  if (std::find(columns.begin(), columns.end(), q.target) == columns.end()) {
    columns.push_back(q.target);
    keys.push_back(target_key);
  }
  return load_csv_table(s, columns, keys, grouped ? data.group_by : "", q.time, id_columns);
}

}  // namespace

Dataset load_dataset(const DataConfig& data, bool classification, const std::vector<std::string>& id_columns) {
  const SourceConfig& s = data.source;
  if (!id_columns.empty() && s.type != "csv")
    throw DataError("--id '" + id_columns.front() + "': ID columns are read from CSV files; the data source is '" +
                    s.type + "'. Write the data as CSV (turbanet data generate) to carry columns through");
  if (data.sequence.enabled()) {
    require_kind(s, classification, false);
    return load_table(data, id_columns);
  }
  if (s.type == "random_walk")
    throw DataError("data.source: random_walk makes price series; add data.sequence, e.g. "
                    "{window: 20, target: close}");
  if (s.type == "spirals" || s.type == "moons") {
    require_kind(s, classification, true);
    return s.type == "spirals" ? make_spirals(s) : make_moons(s);
  }
  if (s.type == "sine") {
    require_kind(s, classification, false);
    return make_sine(s);
  }
  if (s.type == "csv")
    return load_csv(s, classification, data.per_member == PerMember::GroupBy ? data.group_by : "",
                    {data.feature_settings, data.missing, data.drop}, id_columns);
  if (s.type == "idx") {
    require_kind(s, classification, true);
    return load_idx(s);
  }
  if (s.type == "npy") return load_npy(s, classification);
  if (s.type == "hdf5") return load_hdf5(s, classification);
  if (s.type == "arrays") return load_memory_arrays(data, classification, nullptr);
  throw DataError("data.source.type: unknown source '" + s.type + "'");
}

}  // namespace tn
