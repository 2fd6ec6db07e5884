// The sections of `turbanet report` (run/report_run.h), each built from a run file's records
// alone (nothing recomputed from parameters or data), as plain report/ sections. A section
// that does not apply to the run is not added; what a section lacks is a report::missing_note.
#pragma once
#include <string>
#include <vector>

#include "io/run_records.h"
#include "report/page.h"

namespace tn {

// What several sections draw against: the evaluation shown and its headline metric.
struct ReportView {
  const RunFile* file = nullptr;
  std::string path;                  // the run file as named
  const EvalRecord* eval = nullptr;  // /eval/test, else the first stored evaluation; null: none
  int metric = -1;                   // index in eval->metrics of the headline metric, -1 without eval
  std::string metric_name;           // accuracy (classification), rmse or mae (regression), ...
  bool higher_better = false;
  int best = -1;                     // local index of the best member by that metric, -1 if none
  bool classification = false;
  int S = 0, E = 0;                  // members, epochs in /history
  // Member s's value of the headline metric (NaN when left out or without an evaluation).
  double member_metric(int s) const;
};

ReportView report_view(const RunFile& f, const std::string& path);

using Sections = std::vector<report::Section>;

// sec-run: configuration, data, kernel, timings; notes for interrupted runs, checkpoints, shards.
void add_run_section(const ReportView& v, Sections& out);
// sec-curves: loss and accuracy per epoch, train and validation (report_curves.cpp).
void add_curve_section(const ReportView& v, Sections& out);
// sec-metrics: the members' final metrics, the best member and the ensemble (report_metrics.cpp).
void add_metric_section(const ReportView& v, Sections& out);
// sec-hparams, sec-grid, sec-architectures: the headline metric against the swept
// hyperparameters, the heat map of a grid of two keys, and per architecture (report_hparams.cpp).
void add_hparam_sections(const ReportView& v, Sections& out);
// sec-classification or sec-regression: what the ensemble predicted against the truth
// (report_outputs.cpp); sec-series for sequence runs.
void add_output_sections(const ReportView& v, Sections& out);
// sec-halving or sec-pbt: what a search inside the swarm did (report_search.cpp).
void add_search_section(const ReportView& v, Sections& out);

// Palette shared by the sections.
inline constexpr const char* kTrainColour = "#1f77b4";
inline constexpr const char* kValColour = "#ff7f0e";
inline constexpr const char* kBestColour = "#2ca02c";
inline constexpr const char* kEnsembleColour = "#d62728";
inline constexpr const char* kMeanColour = "#222222";

}  // namespace tn
