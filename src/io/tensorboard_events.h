// TensorBoard event files: records in TensorFlow's record format (length, masked CRC-32C,
// data, masked CRC-32C) holding tensorboard.Event messages (proto/tensorboard/*.proto):
// scalars, and the hparams plugin's experiment and session records. The file layer only: which
// runs and tags a training run writes is run/tensorboard_log.h's question.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tn::io {

// CRC-32C (Castagnoli) of `bytes`; crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(std::string_view bytes);
// The record format's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
std::uint32_t masked_crc32c(std::string_view bytes);
// One record: uint64 length (little-endian), masked CRC-32C of those 8 bytes, `data`, masked
// CRC-32C of `data`.
std::string framed_record(std::string_view data);
// The data of each whole, intact record of `bytes`, in order, up to the first record that is
// cut short or whose CRCs do not match (the tail a killed writer leaves).
std::vector<std::string> read_records(std::string_view bytes);

// A run directory's new event file name as TensorBoard's own writers make it:
// events.out.tfevents.<seconds, 10 digits>.<host>.<pid>.<n>.
std::string event_file_name(double wall_time);
// Whether `name` (a file name) is an event file TensorBoard reads: it contains "tfevents".
bool is_event_file(const std::string& name);

// One scalar (Summary.Value.simple_value, what TensorBoard's scalars plugin plots).
struct Scalar {
  std::string tag;
  float value = 0;
};

// An hparam value (google.protobuf.Value: number or string).
using HParamValue = std::variant<double, std::string>;

// An hparam of the experiment (hparams.HParamInfo): a numeric interval, or discrete values.
struct HParamInfo {
  std::string name;
  bool text = false;                  // DATA_TYPE_STRING, else DATA_TYPE_FLOAT64
  std::vector<HParamValue> discrete;  // the values it takes, or empty for [lo, hi]
  double lo = 0, hi = 0;
};

// A metric of the experiment (hparams.MetricInfo): a scalar tag of each session's run.
struct MetricInfo {
  std::string tag;
  bool validation = false;  // DATASET_VALIDATION, else DATASET_TRAINING
};

// Appends events to one event file of a run directory. Events are kept in memory until flush(),
// which opens the file, appends them and closes it: a swarm of thousands of runs holds no file
// open, and its writes are as few as its flushes (the caller decides how live). Not thread-safe.
class EventWriter {
 public:
  // The newest event file in `dir` (created when missing) continued, with only its events of
  // steps <= keep_through kept (and never an old session end, which ends a run that goes on):
  // rewritten atomically first when it holds more. keep_through < 0 starts a new file, the
  // first record of which is file_version "brain.Event:2". Throws RunFileError.
  EventWriter(const std::string& dir, long keep_through);
  ~EventWriter();  // flushes what is pending; a failure there goes unreported (call flush() first)
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;
  // Appends the pending events to the file. Throws RunFileError; they stay pending then.
  void flush();
  // Whether the constructor started a new file (nothing to continue).
  bool started_new() const { return started_new_; }

  void scalars(long step, double wall_time, const std::vector<Scalar>& values);
  // The hparams plugin's records (tags _hparams_/experiment, _hparams_/session_start_info,
  // _hparams_/session_end_info), at step 0, 0 and `step`.
  void experiment(double wall_time, const std::vector<HParamInfo>& hparams, const std::vector<MetricInfo>& metrics);
  void session_start(double wall_time, const std::vector<std::pair<std::string, HParamValue>>& hparams);
  void session_end(long step, double wall_time, bool success);
  const std::string& path() const { return path_; }

 private:
  void append(const std::string& event_bytes);
  std::string path_;
  std::string pending_;  // framed records not yet in the file
  bool started_new_ = false;
};

}  // namespace tn::io
