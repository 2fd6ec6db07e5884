// Pieces shared by the evaluation reports: metric values as JSON and text.
#include "cli/commands/report_parts.h"

#include <fmt/format.h>

#include <cmath>

namespace tn::report {

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

namespace {

// A confusion matrix entry: counts as integers, the member mean as it is.
json entry(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15) return static_cast<long long>(v);
  return number(v);
}

json matrix(const Array& a, std::size_t offset) {
  if (a.shape.size() < 2) return nullptr;
  const std::size_t rows = a.shape[a.shape.size() - 2], cols = a.shape.back();
  json m = json::array();
  for (std::size_t i = 0; i < rows; ++i) {
    json row = json::array();
    for (std::size_t j = 0; j < cols; ++j) row.push_back(entry(a.data[offset + i * cols + j]));
    m.push_back(row);
  }
  return m;
}

}  // namespace

json metric_object(const EvalRecord& r, const double* values, const Array* confusion, std::size_t offset) {
  json o = json::object();
  for (std::size_t m = 0; m < r.metrics.size(); ++m) o[r.metrics[m]] = number(values[m]);
  if (confusion && confusion->size() > 0) o["confusion"] = matrix(*confusion, offset);
  return o;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "nan";
  const double a = std::abs(v);
  return a != 0 && (a >= 1e4 || a < 1e-3) ? fmt::format("{:.4g}", v) : fmt::format("{:.4f}", v);
}

std::string member_list(const std::vector<int>& members) {
  return fmt::format("{}", fmt::join(members, ", "));
}

json record_header(const EvalRecord& r, const std::string& run_path, const std::vector<std::string>& class_names) {
  json j;
  j["run"] = run_path;
  j["split"] = r.split;
  j["source"] = r.source;
  j["task"] = r.task;
  j["combine"] = r.combine;
  j["n_samples"] = r.n_samples;
  j["classes"] = r.task == "classification" ? json(class_names) : json::array();
  j["metrics"] = r.metrics;
  return j;
}

}  // namespace tn::report
