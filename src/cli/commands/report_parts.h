// Pieces shared by the evaluation reports (cli/commands/eval_report.h, eval_group_report.h):
// metric values as JSON and text, member lists, the header of every JSON record.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/run_file.h"

namespace tn::report {

using json = nlohmann::ordered_json;

// A metric value; NaN (a member left out, or no members) becomes null.
json number(double v);

// Metric values [r.metrics] as {<metric>: v}, with the confusion matrix of `confusion` at
// `offset` when there is one.
json metric_object(const EvalRecord& r, const double* values, const Array* confusion, std::size_t offset);

// A value for the tables: 4 decimals, or 4 significant digits when very large or small; "nan".
std::string num(double v);

// "3, 7, 12"
std::string member_list(const std::vector<int>& members);

// What every JSON evaluation record starts with.
json record_header(const EvalRecord& r, const std::string& run_path, const std::vector<std::string>& class_names);

}  // namespace tn::report
