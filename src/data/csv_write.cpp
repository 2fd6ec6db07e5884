// Writing a dataset back as CSV text (turbanet data generate): numbers printed so that
// reading the file gives back exactly the same float32 values.
#include <cstdio>

#include "data/sources.h"
#include "util/csv_text.h"

namespace tn {
namespace {

void number(std::string& out, float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));  // 9 digits: exact for float32
  out += buf;
}

}  // namespace

std::string dataset_to_csv(const Dataset& d, const std::string& target_column) {
  const bool time = !d.time.empty(), group = !d.group.empty() && !d.group_column.empty();
  const bool target = d.targets == 1 && !target_column.empty();
  std::string out;
  std::vector<std::string> header;
  if (time) header.push_back(d.time_column);
  if (group) header.push_back(d.group_column);
  header.insert(header.end(), d.feature_names.begin(), d.feature_names.end());
  if (target) header.push_back(target_column);
  append_csv_line(out, header);
  for (int r = 0; r < d.n; ++r) {
    bool first = true;
    const auto sep = [&] {
      if (!first) out += ',';
      first = false;
    };
    if (time) sep(), out += csv_field(d.time[r]);
    if (group) sep(), out += csv_field(d.group_names[d.group[r]]);
    for (int f = 0; f < d.features; ++f) sep(), number(out, d.X[static_cast<std::size_t>(r) * d.features + f]);
    if (target) sep(), number(out, d.y[r]);
    out += '\n';
  }
  return out;
}

bool is_generator(const std::string& type) {
  return type == "spirals" || type == "moons" || type == "sine" || type == "random_walk";
}

Dataset generate_source(const SourceConfig& s) {
  if (s.type == "spirals") return make_spirals(s);
  if (s.type == "moons") return make_moons(s);
  if (s.type == "sine") return make_sine(s);
  if (s.type == "random_walk") return make_random_walk(s);
  throw DataError("data.source: '" + s.type + "' is not a built-in generator");
}

}  // namespace tn
