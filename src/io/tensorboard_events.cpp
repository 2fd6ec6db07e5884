// TensorBoard event files: the record format, events and their files (io/tensorboard_events.h).
#include "io/tensorboard_events.h"

#include <proto/tensorboard/event.pb.h>  // generated from proto/tensorboard/*.proto at build time
#include <proto/tensorboard/hparams.pb.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <unistd.h>

#include <boost/crc.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "io/atomic_file.h"
#include "io/run_file_error.h"

namespace tn::io {
namespace {

namespace fs = std::filesystem;

constexpr const char* kExperimentTag = "_hparams_/experiment";
constexpr const char* kSessionStartTag = "_hparams_/session_start_info";
constexpr const char* kSessionEndTag = "_hparams_/session_end_info";

// Little-endian integers of `bytes` bytes, as the record framing stores its length and CRCs.
void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint64_t get_le(std::string_view b, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

// An event whose summary holds one value tagged `tag` of the hparams plugin, with `data` as its
// plugin content and the plugin's null tensor (float, shape [0]) as its value.
std::string hparams_event(long step, double wall_time, const char* tag, tensorboard::hparams::HParamsPluginData data) {
  data.set_version(0);
  tensorboard::Event ev;
  ev.set_wall_time(wall_time);
  ev.set_step(step);
  tensorboard::Summary::Value* v = ev.mutable_summary()->add_value();
  v->set_tag(tag);
  tensorboard::SummaryMetadata::PluginData* p = v->mutable_metadata()->mutable_plugin_data();
  p->set_plugin_name("hparams");
  std::string content;  // deterministic: a session's hparams map in key order, the same bytes every time
  {
    google::protobuf::io::StringOutputStream bytes(&content);
    google::protobuf::io::CodedOutputStream out(&bytes);
    out.SetSerializationDeterministic(true);
    data.SerializeToCodedStream(&out);
  }
  p->set_content(content);
  tensorboard::TensorProto* t = v->mutable_tensor();
  t->set_dtype(tensorboard::DT_FLOAT);
  t->mutable_tensor_shape()->add_dim()->set_size(0);
  return ev.SerializeAsString();
}

void set_value(google::protobuf::Value& out, const HParamValue& v) {
  if (const double* d = std::get_if<double>(&v)) out.set_number_value(*d);
  else out.set_string_value(std::get<std::string>(v));
}

// Whether an event of an existing file is kept when the file is continued after `keep_through`.
bool kept(const std::string& record, long keep_through) {
  tensorboard::Event ev;
  if (!ev.ParseFromString(record)) return false;
  if (ev.what_case() == tensorboard::Event::kFileVersion) return true;
  if (ev.step() > keep_through) return false;
  for (const auto& v : ev.summary().value())
    if (v.tag() == kSessionEndTag) return false;
  return true;
}

std::string read_whole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw RunFileError("cannot read TensorBoard event file '" + p.string() + "': " + std::strerror(errno));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

std::uint32_t crc32c(std::string_view bytes) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::uint32_t masked_crc32c(std::string_view bytes) {
  const std::uint32_t c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::string framed_record(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_le(out, data.size(), 8);
  put_le(out, masked_crc32c(out), 4);
  out.append(data);
  put_le(out, masked_crc32c(data), 4);
  return out;
}

std::vector<std::string> read_records(std::string_view b) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (b.size() - at >= 16) {
    const std::uint64_t n = get_le(b, at, 8);
    if (get_le(b, at + 8, 4) != masked_crc32c(b.substr(at, 8)) || n > b.size() - at - 16) break;
    const std::string_view data = b.substr(at + 12, n);
    if (get_le(b, at + 12 + n, 4) != masked_crc32c(data)) break;
    out.emplace_back(data);
    at += 16 + n;
  }
  return out;
}

std::string event_file_name(double wall_time) {
  static int n = 0;
  char host[256] = "localhost";
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  host[sizeof host - 1] = '\0';
  char name[400];
  std::snprintf(name, sizeof name, "events.out.tfevents.%010lld.%s.%d.%d", static_cast<long long>(wall_time), host,
                static_cast<int>(::getpid()), n++);
  return name;
}

bool is_event_file(const std::string& name) { return name.find("tfevents") != std::string::npos; }

EventWriter::EventWriter(const std::string& dir, long keep_through) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RunFileError("cannot create TensorBoard run directory '" + dir + "': " + ec.message());
  std::string newest;
  if (keep_through >= 0)
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file() && is_event_file(e.path().filename().string()) && e.path().string() > newest)
        newest = e.path().string();
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (newest.empty()) {
    path_ = (fs::path(dir) / event_file_name(now)).string();
  } else {
    path_ = newest;
    const std::string old = read_whole(newest);
    std::string keep;
    for (const std::string& r : read_records(old))
      if (kept(r, keep_through)) keep += framed_record(r);
    if (keep != old) write_file_atomically(path_, "TensorBoard event file", keep, Replace::Yes);
  }
  if (!newest.empty()) return;
  started_new_ = true;
  tensorboard::Event ev;
  ev.set_wall_time(now);
  ev.set_file_version("brain.Event:2");
  append(ev.SerializeAsString());
}

EventWriter::~EventWriter() {
  try {
    flush();
  } catch (const RunFileError&) {  // reported by the caller's own flush(), when it cares
  }
}

void EventWriter::append(const std::string& event_bytes) { pending_ += framed_record(event_bytes); }

void EventWriter::flush() {
  if (pending_.empty()) return;
  std::FILE* f = std::fopen(path_.c_str(), "ab");
  bool ok = f && std::fwrite(pending_.data(), 1, pending_.size(), f) == pending_.size();
  if (f) ok = std::fclose(f) == 0 && ok;
  if (!ok) throw RunFileError("cannot write TensorBoard event file '" + path_ + "': " + std::strerror(errno));
  pending_.clear();
}

void EventWriter::scalars(long step, double wall_time, const std::vector<Scalar>& values) {
  if (values.empty()) return;
  tensorboard::Event ev;
  ev.set_wall_time(wall_time);
  ev.set_step(step);
  for (const Scalar& s : values) {
    tensorboard::Summary::Value* v = ev.mutable_summary()->add_value();
    v->set_tag(s.tag);
    v->set_simple_value(s.value);
  }
  append(ev.SerializeAsString());
}

void EventWriter::experiment(double wall_time, const std::vector<HParamInfo>& hparams,
                             const std::vector<MetricInfo>& metrics) {
  namespace hp = tensorboard::hparams;
  hp::HParamsPluginData d;
  hp::Experiment* x = d.mutable_experiment();
  x->set_time_created_secs(wall_time);
  for (const HParamInfo& h : hparams) {
    hp::HParamInfo* i = x->add_hparam_infos();
    i->set_name(h.name);
    i->set_type(h.text ? hp::DATA_TYPE_STRING : hp::DATA_TYPE_FLOAT64);
    if (h.discrete.empty()) {
      i->mutable_domain_interval()->set_min_value(h.lo);
      i->mutable_domain_interval()->set_max_value(h.hi);
    } else {
      for (const HParamValue& v : h.discrete) set_value(*i->mutable_domain_discrete()->add_values(), v);
    }
    i->set_differs(true);
  }
  for (const MetricInfo& m : metrics) {
    hp::MetricInfo* i = x->add_metric_infos();
    i->mutable_name()->set_tag(m.tag);
    i->set_dataset_type(m.validation ? hp::DATASET_VALIDATION : hp::DATASET_TRAINING);
  }
  append(hparams_event(0, wall_time, kExperimentTag, d));
}

void EventWriter::session_start(double wall_time, const std::vector<std::pair<std::string, HParamValue>>& hparams) {
  tensorboard::hparams::HParamsPluginData d;
  tensorboard::hparams::SessionStartInfo* s = d.mutable_session_start_info();
  s->set_start_time_secs(wall_time);
  for (const auto& [name, v] : hparams) set_value((*s->mutable_hparams())[name], v);
  append(hparams_event(0, wall_time, kSessionStartTag, d));
}

void EventWriter::session_end(long step, double wall_time, bool success) {
  tensorboard::hparams::HParamsPluginData d;
  d.mutable_session_end_info()->set_status(success ? tensorboard::hparams::STATUS_SUCCESS
                                                   : tensorboard::hparams::STATUS_FAILURE);
  d.mutable_session_end_info()->set_end_time_secs(wall_time);
  append(hparams_event(step, wall_time, kSessionEndTag, d));
}

}  // namespace tn::io
