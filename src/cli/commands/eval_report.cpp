// Formatting evaluation results as a table, as JSON and as a log line.
#include "cli/commands/eval_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "eval/own.h"
#include "run/lineage.h"
#include "run/select_run.h"

namespace tn {
namespace {

using json = nlohmann::ordered_json;

// A metric value; NaN (a member left out, or no members) becomes null.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

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

json metric_object(const EvalRecord& r, const double* values, const Array* confusion, std::size_t offset) {
  json o = json::object();
  for (std::size_t m = 0; m < r.metrics.size(); ++m) o[r.metrics[m]] = number(values[m]);
  if (confusion && confusion->size() > 0) o["confusion"] = matrix(*confusion, offset);
  return o;
}

double mean_of(const Array& a) {
  double sum = 0;
  for (float v : a.data) sum += v;
  return a.data.empty() ? NAN : sum / a.data.size();
}

std::string num(double v) {
  if (!std::isfinite(v)) return "nan";
  const double a = std::abs(v);
  return a != 0 && (a >= 1e4 || a < 1e-3) ? fmt::format("{:.4g}", v) : fmt::format("{:.4f}", v);
}

std::string member_list(const std::vector<int>& members) {
  return fmt::format("{}", fmt::join(members, ", "));
}

// The members best first: as ranked on the selection split, else on `e` itself.
std::vector<int> ranked_members(const Evaluation& e, const RankView& rank) {
  return rank.eval ? rank.ranked : rank_members(e);
}

// What members are ranked by (rank_members): "accuracy (ties: log_loss)" or "mse".
const char* ranked_by(const Evaluation& e) { return e.classification ? "accuracy (ties: log_loss)" : "mse"; }

// The split members are ranked on: the selection split, else the evaluated one.
std::string ranked_on(const RankView& rank, const EvalRecord& r) { return rank.eval ? rank.split : r.split; }

// "#12 0.9902 (val 0.9950), #5 0.9804 (val 0.9900), ..., #40 0.9314 (val 0.9400)" (the first 5
// and last 3 of long rankings); the value on the selection split when it is another split.
std::string ranking(const Evaluation& e, const std::vector<int>& order, int first_member, const RankView& rank,
                    const EvalRecord& r) {
  const bool both = rank.eval && rank.split != r.split;
  std::string text;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order.size() > 10 && i == 5) {
      text += ", ...";
      i = order.size() - 4;
      continue;
    }
    text += fmt::format("{}#{} {}", i ? ", " : "", first_member + order[i], num(e.members[order[i]].values[0]));
    if (both) text += fmt::format(" ({} {})", rank.split, num(rank.eval->members[order[i]].values[0]));
  }
  return text;
}

json selection_json(const Evaluation& e, const EvalRecord& r) {
  const SelectionRecord& s = r.selection;
  if (!s.present()) return nullptr;
  json all = json::object();
  for (std::size_t m = 0; m < e.names.size() && m < e.all_members.values.size(); ++m)
    all[e.names[m]] = number(e.all_members.values[m]);
  return {{"select", s.method}, {"k", s.k},         {"metric", s.metric},   {"chosen_on", s.split},
          {"value", number(s.value)}, {"members", s.member}, {"weights", s.weight}, {"all_members_ensemble", all}};
}

json threshold_json(const EvalRecord& r) {
  if (r.threshold_from.empty()) return nullptr;
  json members = json::array();
  for (double t : r.member_threshold) members.push_back(number(t));
  return {{"from", r.threshold_from}, {"ensemble", number(r.threshold)}, {"members", members}};
}

json best_member_json(const Evaluation& e, const EvalRecord& r, const RankView& rank) {
  const std::vector<int> order = ranked_members(e, rank);
  if (order.empty()) return nullptr;
  const int b = order.front();
  const auto metrics = [&](const Evaluation& x) {
    json o = json::object();
    for (std::size_t m = 0; m < x.names.size(); ++m) o[x.names[m]] = number(x.members[b].values[m]);
    return o;
  };
  json j = {{"chosen_on", ranked_on(rank, r)},
            {"by", e.classification ? json::array({"accuracy", "log_loss"}) : json::array({"mse"})},
            {"member", r.member[b]}};
  j["chosen_on_metrics"] = metrics(rank.eval ? *rank.eval : e);
  j["metrics"] = metrics(e);
  if (!rank.eval && !rank.note.empty()) j["note"] = rank.note;
  return j;
}

// The lines that say how the ensemble and the decisions were made, and where members are ranked.
std::string choices_text(const Evaluation& e, const EvalRecord& r, const RankView& rank) {
  std::string t;
  if (r.selection.present()) t += "ensemble of the selected members: " + describe_selection(r.selection) + "\n";
  if (!r.threshold_from.empty()) {
    double lo = NAN, hi = NAN;
    for (double x : r.member_threshold)
      if (std::isfinite(x)) {
        lo = std::isnan(lo) ? x : std::min(lo, x);
        hi = std::isnan(hi) ? x : std::max(hi, x);
      }
    t += fmt::format("decision threshold of class 1: ensemble {}, members {}..{} ({})\n", num(r.threshold), num(lo), num(hi),
                     r.threshold_from == "fixed" ? "fixed" : "each F1-maximizing on the " + r.threshold_from + " split");
  }
  if (rank.eval)
    t += fmt::format("members ranked on the {} split by {}{}\n", rank.split, ranked_by(e),
                     rank.split == r.split ? "" : "; the values below are on the " + r.split + " split");
  else
    t += fmt::format("members ranked on the {} split itself by {} (optimistic: the validation split could not be "
                     "read{})\n", r.split, ranked_by(e), rank.note.empty() ? "" : ": " + rank.note);
  return t;
}

std::string confusion_table(const std::vector<double>& c, const std::vector<std::string>& names) {
  const int K = static_cast<int>(names.size());
  std::size_t w = 6;
  for (const std::string& n : names) w = std::max(w, n.size() + 2);
  std::string text = fmt::format("{:>{}}", "", w);
  for (const std::string& n : names) text += fmt::format("{:>{}}", n, w);
  for (int i = 0; i < K; ++i) {
    text += fmt::format("\n{:>{}}", names[i], w);
    for (int j = 0; j < K; ++j) text += fmt::format("{:>{}}", c[static_cast<std::size_t>(i) * K + j], w);
  }
  return text + "\n";
}


json hparams_json(const HparamReport& hp, const EvalRecord& r, const RankView& rank) {
  const auto metrics = [&](const std::vector<double>& v) {
    json o = json::object();
    for (std::size_t m = 0; m < r.metrics.size() && m < v.size(); ++m) o[r.metrics[m]] = number(v[m]);
    return o;
  };
  json best = json::object();
  for (std::size_t m = 0; m < r.metrics.size() && m < hp.best.size(); ++m) {
    if (hp.best[m] < 0) continue;
    json b = {{"member", r.member[hp.best[m]]}, {"chosen_on", ranked_on(rank, r)}};
    if (rank.eval) b["chosen_on_value"] = number(rank.eval->members[hp.best[m]].values[m]);
    for (std::size_t k = 0; k < hp.keys.size(); ++k)
      b[hp.keys[k]] = hp.texts[k].empty() ? json(hp.values[k][hp.best[m]]) : json(hp.texts[k][hp.best[m]]);
    best[r.metrics[m]] = b;
  }
  json by_value = json::object();
  for (std::size_t k = 0; k < hp.keys.size(); ++k) {
    json groups = json::array();
    for (const HparamGroup& g : hp.by_value[k])
      groups.push_back({{"value", hp.texts[k].empty() ? json(g.value) : json(g.text)}, {"members", g.members},
                        {"mean", metrics(g.mean)}, {"std", metrics(g.std)}, {"ensemble", metrics(g.ensemble)}});
    by_value[hp.keys[k]] = groups;
  }
  return {{"keys", hp.keys}, {"best", best}, {"by_value", by_value}};
}

std::string hparams_table(const Evaluation& e, const HparamReport& hp, int first, const RankView& rank,
                          const EvalRecord& r) {
  const bool both = rank.eval && rank.split != r.split;
  std::string t = fmt::format("\nper-member hyperparameters (/members/hparams)\nbest member per metric, chosen on the "
                              "{} split{}:\n", ranked_on(rank, r), both ? " (its value there, then on the " + r.split + " split)" : "");
  for (std::size_t m = 0; m < e.names.size(); ++m) {
    if (hp.best[m] < 0) continue;
    std::string values;
    for (std::size_t k = 0; k < hp.keys.size(); ++k)
      values += fmt::format("  {}={}", hp.keys[k], hp.value_text(k, static_cast<std::size_t>(hp.best[m])));
    const std::string chosen = both ? fmt::format("{:>10}", num(rank.eval->members[hp.best[m]].values[m])) : "";
    t += fmt::format("  {:<16}#{:<6}{}{:>10}{}\n", e.names[m], first + hp.best[m], chosen,
                     num(e.members[hp.best[m]].values[m]), values);
  }
  const std::vector<std::size_t> shown = headline_metrics(e.names);
  for (std::size_t k = 0; k < hp.keys.size(); ++k) {
    // Text values (architectures) may be long: the column is as wide as the longest.
    std::size_t width = 12;
    for (const HparamGroup& g : hp.by_value[k]) width = std::max(width, g.text.size());
    t += fmt::format("by {}:\n  {:>{}}{:>9}", hp.keys[k], "value", width, "members");
    for (std::size_t m : shown) t += fmt::format("{:>24}{:>14}", e.names[m] + " mean ± std", "its ensemble");
    t += "\n";
    for (const HparamGroup& g : hp.by_value[k]) {
      t += hp.texts[k].empty() ? fmt::format("  {:>{}.4g}{:>9}", g.value, width, g.members)
                               : fmt::format("  {:>{}}{:>9}", g.text, width, g.members);
      for (std::size_t m : shown)
        t += fmt::format("{:>24}{:>14}", num(g.mean[m]) + " ± " + num(g.std[m]), m < g.ensemble.size() ? num(g.ensemble[m]) : "");
      t += "\n";
    }
  }
  return t;
}

json search_json(const SearchView& v, int first) {
  const SearchRecord& s = *v.record;
  json j = {{"type", s.type}, {"metric", s.metric}, {"epochs", s.epochs}};
  if (s.type == "halving") {
    j["members_after_rung"] = halving_counts(s.epochs, s.rung, v.diverged_epoch ? *v.diverged_epoch : std::vector<int>{});
    j["stopped_rung"] = s.rung;
    if (v.finished && !v.finished->empty()) {
      json members = json::array(), ensemble = json::object();
      for (int k : *v.finished) members.push_back(first + k);
      const Evaluation& f = *v.finished_eval;
      for (std::size_t m = 0; m < f.names.size(); ++m) ensemble[f.names[m]] = number(f.ensemble.values[m]);
      j["finished_members"] = members;
      j["finished_ensemble"] = ensemble;
    }
  } else if (v.best >= 0) {
    json steps = json::array();
    for (const LineageStep& st : pbt_lineage(s, v.best, v.epochs)) {
      json o = {{"member", first + st.member}, {"first_epoch", st.first_epoch}, {"last_epoch", st.last_epoch}};
      for (std::size_t k = 0; k < s.keys.size(); ++k) o[s.keys[k]] = st.values[k];
      steps.push_back(o);
    }
    j["best_member"] = first + v.best;
    j["best_lineage"] = steps;
  }
  return j;
}

std::string search_table(const SearchView& v, int first) {
  const SearchRecord& s = *v.record;
  std::string t = fmt::format("\nsearch: {} by {} (/search)\n", s.type, s.metric);
  if (s.type == "halving") {
    const std::vector<int> counts = halving_counts(s.epochs, s.rung, v.diverged_epoch ? *v.diverged_epoch : std::vector<int>{});
    t += fmt::format("  members training: {} at the start", counts.front());
    for (std::size_t i = 0; i < s.epochs.size(); ++i) t += fmt::format(", {} after the rung at epoch {}", counts[i + 1], s.epochs[i]);
    if (v.finished && !v.finished->empty()) {
      const Evaluation& f = *v.finished_eval;
      t += fmt::format("\n  the {} members trained to the end alone: ensemble", v.finished->size());
      for (std::size_t m : headline_metrics(f.names)) t += fmt::format(" {} {}", f.names[m], num(f.ensemble.values[m]));
      t += fmt::format(" (the table's ensemble averages all {} members)", v.members);
    }
    if (v.best >= 0 && v.best < static_cast<int>(s.rung.size()))
      t += s.rung[v.best] == 0 ? fmt::format("\n  best member #{} {}\n", first + v.best,
                                             v.interrupted ? "was still training when the run stopped" : "trained to the end")
                               : fmt::format("\n  best member #{} stopped at rung {} (epoch {})\n", first + v.best,
                                             s.rung[v.best], s.epochs[s.rung[v.best] - 1]);
    return t;
  }
  if (s.epochs.empty()) return t + "  no round has run yet\n";
  if (v.best < 0) return t;
  t += fmt::format("  {} rounds (after epochs", s.epochs.size());
  for (int e : s.epochs) t += fmt::format(" {}", e);
  t += fmt::format("); lineage of the best member #{}:\n", first + v.best);
  for (const LineageStep& st : pbt_lineage(s, v.best, v.epochs)) {
    t += fmt::format("    epochs {:>4}-{:<4} as #{:<5}", st.first_epoch, st.last_epoch, first + st.member);
    for (std::size_t k = 0; k < s.keys.size(); ++k) t += fmt::format("  {}={:.4g}", s.keys[k], st.values[k]);
    t += "\n";
  }
  return t;
}

bool shows(const SearchView* sv) { return sv && sv->record && sv->record->present(); }

}  // namespace

std::vector<std::size_t> headline_metrics(const std::vector<std::string>& names) {
  std::vector<std::size_t> shown;
  for (const char* name : {"accuracy", "log_loss", "rmse", "r2"})
    for (std::size_t m = 0; m < names.size(); ++m)
      if (names[m] == name) shown.push_back(m);
  return shown;
}

// What every JSON evaluation record starts with.
static json record_header(const EvalRecord& r, const std::string& run_path, const std::vector<std::string>& class_names) {
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

std::string eval_json(const Evaluation& e, const EvalRecord& r, const std::string& run_path,
                      const std::vector<std::string>& class_names, const RankView& rank, const HparamReport* hp,
                      const SearchView* sv) {
  json j = record_header(r, run_path, class_names);
  const std::size_t M = r.metrics.size(), KK = r.member_confusion.shape.size() == 3
      ? r.member_confusion.shape[1] * r.member_confusion.shape[2] : 0;
  json members = json::array();
  for (std::size_t s = 0; s < r.member.size(); ++s) {
    json m = {{"member", r.member[s]},
              {"excluded", std::find(r.excluded.begin(), r.excluded.end(), r.member[s]) != r.excluded.end()}};
    m.update(metric_object(r, &r.members[s * M], &r.member_confusion, s * KK));
    members.push_back(m);
  }
  j["members"] = members;
  j["member_mean"] = metric_object(r, r.member_mean.data(), &r.member_mean_confusion, 0);
  j["member_std"] = metric_object(r, r.member_std.data(), nullptr, 0);
  j["ensemble"] = metric_object(r, r.ensemble.data(), &r.ensemble_confusion, 0);
  j["excluded_members"] = r.excluded;
  if (r.task == "classification")
    j["uncertainty"] = {{"mean_entropy", number(mean_of(r.entropy))},
                        {"mean_mutual_information", number(mean_of(r.mutual_information))},
                        {"mean_disagreement", number(mean_of(r.disagreement))}};
  j["best_member"] = best_member_json(e, r, rank);
  j["ensemble_selection"] = selection_json(e, r);
  j["threshold"] = threshold_json(r);
  if (hp && !hp->keys.empty()) j["hparams"] = hparams_json(*hp, r, rank);
  if (shows(sv)) j["search"] = search_json(*sv, r.member.empty() ? 0 : r.member.front());
  return j.dump(2) + "\n";
}

std::string eval_table(const Evaluation& e, const EvalRecord& r, const std::string& run_path,
                       const std::vector<std::string>& class_names, const RankView& rank, const HparamReport* hp,
                       const SearchView* sv) {
  const int first = r.member.empty() ? 0 : r.member.front();
  const std::vector<int> order = ranked_members(e, rank);
  std::string t = fmt::format("{}: {}, {} samples\n{} members (#{}..#{}), ensemble by {}\n", run_path, r.source,
                              r.n_samples, r.member.size(), first, first + static_cast<int>(r.member.size()) - 1, r.combine);
  if (!r.excluded.empty())
    t += fmt::format("left out (non-finite predictions, diverged): members {}\n", member_list(r.excluded));
  t += choices_text(e, r, rank);
  const bool selected = r.selection.present();
  const std::string best = order.empty() ? "best" : fmt::format("best #{}", first + order.front());
  const std::string worst = order.empty() ? "worst" : fmt::format("worst #{}", first + order.back());
  t += fmt::format("\n{:<16}{:>12}{:>12}{:>22}{:>12}{}\n", "metric", best, worst, "members mean ± std", "ensemble",
                   selected ? fmt::format("{:>14}", "all members") : "");
  for (std::size_t m = 0; m < e.names.size(); ++m) {
    const auto member = [&](bool top) { return order.empty() ? "nan" : num(e.members[top ? order.front() : order.back()].values[m]); };
    t += fmt::format("{:<16}{:>12}{:>12}{:>22}{:>12}{}\n", e.names[m], member(true), member(false),
                     num(e.member_mean.values[m]) + " ± " + num(e.member_std.values[m]), num(e.ensemble.values[m]),
                     selected && m < e.all_members.values.size() ? fmt::format("{:>14}", num(e.all_members.values[m])) : "");
  }
  t += fmt::format("\nmembers ranked on the {} split by {}: {}\n", ranked_on(rank, r), ranked_by(e),
                   ranking(e, order, first, rank, r));
  if (hp && !hp->keys.empty()) t += hparams_table(e, *hp, first, rank, r);
  if (hp && !hp->keys.empty() && shows(sv) && sv->record->type == "pbt")
    t += "  (the values members started with: PBT changed them while training, see the lineage below)\n";
  if (shows(sv)) t += search_table(*sv, first);
  if (!e.classification) return t;
  t += fmt::format("per-sample uncertainty, mean over samples: entropy {} nats, mutual information {} nats, "
                   "disagreement {}\n", num(mean_of(r.entropy)), num(mean_of(r.mutual_information)),
                   num(mean_of(r.disagreement)));
  if (!e.ensemble.confusion.empty())
    t += "\nensemble confusion matrix (rows: true class, columns: predicted)\n" +
         confusion_table(e.ensemble.confusion, class_names);
  return t;
}

std::string eval_summary(const Evaluation& e, const EvalRecord& r, const RankView& rank) {
  const std::vector<int> order = ranked_members(e, rank);
  const std::string metric = e.names.front();
  std::string t = fmt::format("{} ({} samples): {} {} {} | members {} ± {}", r.source, r.n_samples,
                              r.selection.present() ? "ensemble of the selected members" : "ensemble", metric,
                              num(e.ensemble.values[0]), num(e.member_mean.values[0]), num(e.member_std.values[0]));
  if (r.selection.present()) t = fmt::format("{} | all members' ensemble {}", t, num(e.all_members.values[0]));
  if (order.empty()) return t + " | no member with finite predictions";
  const int b = order.front();
  if (!rank.eval || rank.split == r.split)
    return t + fmt::format(" | best on the {} split #{}: {}", ranked_on(rank, r), r.member[b], num(e.members[b].values[0]));
  return t + fmt::format(" | best on the {} split #{}: {} {}, {} {}", rank.split, r.member[b], rank.split,
                         num(rank.eval->members[b].values[0]), r.split, num(e.members[b].values[0]));
}

namespace {

// Values of metric m of every member: {"member": k, [<"group">,] <metric>: v, ...} rows.
json member_rows(const EvalRecord& r, const std::vector<double>& values, const std::vector<std::string>& groups,
                 bool details) {
  const std::size_t M = r.metrics.size();
  json rows = json::array();
  for (std::size_t s = 0; s < r.member.size(); ++s) {
    json m = {{"member", r.member[s]}};
    if (s < groups.size()) m["group"] = groups[s];
    if (details) {
      m["excluded"] = std::find(r.excluded.begin(), r.excluded.end(), r.member[s]) != r.excluded.end();
      m["n_samples"] = s < r.member_samples.size() ? r.member_samples[s] : 0;
    }
    for (std::size_t k = 0; k < M; ++k) m[r.metrics[k]] = number(values[s * M + k]);
    rows.push_back(m);
  }
  return rows;
}

json quantile_object(const EvalRecord& r, const std::vector<double>& q) {
  json o = json::object();
  for (std::size_t m = 0; m < r.metrics.size(); ++m) {
    json row = json::array();
    for (std::size_t k = 0; k < kQuantileLevels.size(); ++k) row.push_back(number(q[m * kQuantileLevels.size() + k]));
    o[r.metrics[m]] = row;
  }
  return o;
}

json scores_json(const EvalRecord& r, const ScoreRecord& s, const std::vector<std::string>& groups) {
  if (s.empty()) return nullptr;
  return {{"members", member_rows(r, s.members, groups, false)},
          {"pooled", metric_object(r, s.pooled.data(), nullptr, 0)},
          {"quantiles", quantile_object(r, s.quantiles)}};
}

const char* level_name(std::size_t k) {
  static const char* const names[] = {"min", "5%", "25%", "median", "75%", "95%", "max"};
  return names[k];
}

// Rows "  <metric>  q0 .. q6  pooled" of one score set.
std::string quantile_rows(const EvalRecord& r, const std::vector<double>& q, const std::vector<double>& pooled,
                          const std::string& indent) {
  std::string t;
  const std::size_t L = kQuantileLevels.size();
  for (std::size_t m = 0; m < r.metrics.size(); ++m) {
    t += fmt::format("{:<18}", indent + r.metrics[m]);
    for (std::size_t k = 0; k < L; ++k) t += fmt::format("{:>11}", num(q[m * L + k]));
    t += fmt::format("{:>11}\n", num(pooled[m]));
  }
  return t;
}

std::string units_block(const EvalRecord& r, const std::string& title, const std::vector<double>& q,
                        const std::vector<double>& pooled, bool original) {
  std::string t = fmt::format("{:<18}", title);
  for (std::size_t k = 0; k < kQuantileLevels.size(); ++k) t += fmt::format("{:>11}", level_name(k));
  t += fmt::format("{:>11}\n", "pooled");
  t += quantile_rows(r, q, pooled, "  ");
  for (const EvalRecord::Baseline& b : r.baselines) {
    const ScoreRecord& s = original ? b.original : b.scores;
    if (!s.empty()) t += "  " + b.kind + "\n" + quantile_rows(r, s.quantiles, s.pooled, "    ");
  }
  return t;
}

// What series are compared in: original units when the record has them, else the model's.
bool compared_in_original(const EvalRecord& r) { return !r.original.empty(); }
const std::vector<double>& compared_members(const EvalRecord& r) {
  return compared_in_original(r) ? r.original.members : r.members;
}
const std::vector<double>& compared_members(const EvalRecord& r, const EvalRecord::Baseline& b) {
  return compared_in_original(r) && !b.original.empty() ? b.original.members : b.scores.members;
}

// "3 of 4 series beat persistence by mae (median ratio model/persistence 0.91), 3 of 4 by rmse (0.93)"
std::string beat_line(const EvalRecord& r, const EvalRecord::Baseline& b) {
  const std::vector<BaselineComparison> c = compare_with_baseline(r.metrics, compared_members(r), compared_members(r, b));
  std::string t;
  for (const BaselineComparison& x : c) {
    if (x.metric == "mse") continue;  // the same ranking as rmse
    if (t.empty())
      t = fmt::format("{} of {} series beat {} by {} (median ratio model/{} {})", x.beat, x.compared, b.kind, x.metric,
                      b.kind, num(x.median_ratio));
    else
      t += fmt::format(", {} of {} by {} ({})", x.beat, x.compared, x.metric, num(x.median_ratio));
  }
  return t;
}

std::size_t metric_index(const EvalRecord& r, const std::string& name) {
  const auto it = std::find(r.metrics.begin(), r.metrics.end(), name);
  return it == r.metrics.end() ? 0 : static_cast<std::size_t>(it - r.metrics.begin());
}

// Each series (member) against each baseline: {"member", "group", "n_samples", "units",
// <metric>: v, "baselines": {<kind>: {<metric>: v, "skill_<metric>": s, "beats_by_<metric>": b}}}.
json series_json(const EvalRecord& r, const std::vector<std::string>& groups) {
  const std::size_t M = r.metrics.size();
  const std::vector<double>& model = compared_members(r);
  json rows = json::array();
  for (std::size_t s = 0; s < r.member.size(); ++s) {
    json row = {{"member", r.member[s]}};
    if (s < groups.size()) row["group"] = groups[s];
    row["n_samples"] = s < r.member_samples.size() ? r.member_samples[s] : 0;
    row["units"] = compared_in_original(r) ? "original" : "model";
    json against = json::object();
    for (const std::string& name : baseline_compared_metrics()) {
      const std::size_t m = metric_index(r, name);
      if (r.metrics[m] == name) row[name] = number(model[s * M + m]);
    }
    for (const EvalRecord::Baseline& b : r.baselines) {
      const std::vector<double>& base = compared_members(r, b);
      json o = json::object();
      for (const std::string& name : baseline_compared_metrics()) {
        const std::size_t m = metric_index(r, name);
        if (r.metrics[m] != name) continue;
        const double a = model[s * M + m], c = base[s * M + m];
        o[name] = number(c);
        o["skill_" + name] = number(skill_score(a, c));
        o["beats_by_" + name] = std::isfinite(a) && std::isfinite(c) ? json(a < c) : json(nullptr);
      }
      against[b.kind] = o;
    }
    row["baselines"] = against;
    rows.push_back(row);
  }
  return rows;
}

// The per-series table by mae: the model, each baseline and the model's skill against it; all
// series up to 30, else the 10 with the lowest and the 10 with the highest skill against the
// first baseline.
std::string series_table(const EvalRecord& r, const std::vector<std::string>& groups) {
  const std::size_t M = r.metrics.size(), m = metric_index(r, "mae"), S = r.member.size();
  if (r.baselines.empty() || r.metrics[m] != "mae" || S == 0) return "";
  const std::vector<double>& model = compared_members(r);
  std::size_t width = 6;
  for (const std::string& g : groups) width = std::max(width, g.size());
  std::string t = fmt::format("\nper series: {} in {} units; skill = 1 − model/baseline (> 0: the model is better)\n",
                              r.metrics[m], compared_in_original(r) ? "original" : "model");
  t += fmt::format("{:<{}}{:>8}{:>12}", "series", width, "member", "model");
  for (const EvalRecord::Baseline& b : r.baselines) t += fmt::format("{:>16}{:>9}", b.kind, "skill");
  t += "\n";
  std::vector<std::size_t> order(S);
  for (std::size_t s = 0; s < S; ++s) order[s] = s;
  const std::vector<double>& first = compared_members(r, r.baselines.front());
  const auto skill = [&](std::size_t s) {
    const double v = skill_score(model[s * M + m], first[s * M + m]);
    return std::isfinite(v) ? v : -INFINITY;
  };
  const bool all = S <= 30;
  if (!all) std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return skill(a) < skill(b); });
  for (std::size_t i = 0; i < S; ++i) {
    if (!all && i == 10) {
      t += fmt::format("  ... {} series between (the 10 with the lowest and the 10 with the highest skill against {} "
                       "are shown; --json lists every one)\n", S - 20, r.baselines.front().kind);
      i = S - 10;
    }
    const std::size_t s = order[i];
    t += fmt::format("{:<{}}{:>8}{:>12}", s < groups.size() ? groups[s] : std::to_string(r.member[s]), width,
                     fmt::format("#{}", r.member[s]), num(model[s * M + m]));
    for (const EvalRecord::Baseline& b : r.baselines) {
      const double c = compared_members(r, b)[s * M + m], k = skill_score(model[s * M + m], c);
      t += fmt::format("{:>16}{:>9}", num(c), std::isfinite(k) ? fmt::format("{:+.3f}", k) : "nan");
    }
    t += "\n";
  }
  return t;
}

}  // namespace

std::string own_eval_json(const EvalRecord& r, const std::string& run_path,
                          const std::vector<std::string>& class_names, const std::vector<std::string>& groups) {
  json j = record_header(r, run_path, class_names);
  j["members"] = member_rows(r, r.members, groups, true);
  j["member_mean"] = metric_object(r, r.member_mean.data(), nullptr, 0);
  j["member_std"] = metric_object(r, r.member_std.data(), nullptr, 0);
  j["pooled"] = metric_object(r, r.pooled.data(), nullptr, 0);
  j["quantile_levels"] = std::vector<double>(kQuantileLevels.begin(), kQuantileLevels.end());
  j["quantiles"] = quantile_object(r, r.quantiles);
  // "baseline", "original_units.baseline" and "vs_baseline": persistence, as before seasonal naive
  // and drift; "baselines", "vs_baselines" and "series": every naive forecast.
  const auto persistence = std::find_if(r.baselines.begin(), r.baselines.end(),
                                        [](const EvalRecord::Baseline& b) { return b.kind == "persistence"; });
  const bool has_persistence = persistence != r.baselines.end();
  j["baseline"] = has_persistence ? scores_json(r, persistence->scores, groups) : json(nullptr);
  if (has_persistence) j["baseline"]["kind"] = persistence->kind;
  j["original_units"] = scores_json(r, r.original, groups);
  if (!r.original.empty())
    j["original_units"]["baseline"] = has_persistence ? scores_json(r, persistence->original, groups) : json(nullptr);
  json baselines = json::array(), vs_all = json::object();
  for (const EvalRecord::Baseline& b : r.baselines) {
    json o = scores_json(r, b.scores, groups);
    o["kind"] = b.kind;
    o["original_units"] = scores_json(r, b.original, groups);
    baselines.push_back(o);
    json vs = json::object();
    for (const BaselineComparison& c : compare_with_baseline(r.metrics, compared_members(r), compared_members(r, b)))
      vs[c.metric] = {{"beat", c.beat}, {"compared", c.compared}, {"median_ratio", number(c.median_ratio)}};
    vs_all[b.kind] = vs;
  }
  j["vs_baseline"] = has_persistence ? vs_all["persistence"] : json(nullptr);
  j["baselines"] = baselines;
  j["vs_baselines"] = r.baselines.empty() ? json(nullptr) : vs_all;
  j["compared_in"] = compared_in_original(r) ? "original_units" : "model_units";
  j["series"] = r.baselines.empty() ? json(nullptr) : series_json(r, groups);
  j["excluded_members"] = r.excluded;
  return j.dump(2) + "\n";
}

std::string own_eval_table(const EvalRecord& r, const std::string& run_path, const std::vector<std::string>& groups) {
  const int S = static_cast<int>(r.member.size()), first = S ? r.member.front() : 0;
  const auto [lo, hi] = std::minmax_element(r.member_samples.begin(), r.member_samples.end());
  std::string t = fmt::format("{}: {}, {} samples\n{} members (#{}..#{}), one per group, each scored on its own "
                              "samples ({}..{} per member)\n", run_path, r.source, r.n_samples, S, first, first + S - 1,
                              lo == r.member_samples.end() ? 0 : *lo, hi == r.member_samples.end() ? 0 : *hi);
  if (!r.excluded.empty())
    t += fmt::format("left out (non-finite predictions, diverged): members {}\n", member_list(r.excluded));
  t += fmt::format("\nper-member metrics: quantiles across members, and pooled over all samples\n");
  t += units_block(r, r.original.empty() ? "metric" : "model units", r.quantiles, r.pooled, false);
  if (!r.original.empty()) t += units_block(r, "original units", r.original.quantiles, r.original.pooled, true);
  // Best and worst member by the first error metric (mae for regression, accuracy otherwise).
  const std::size_t m = r.task == "regression" ? metric_index(r, "mae") : 0;
  const bool higher = higher_is_better(r.metrics[m]);
  int best = -1, worst = -1;
  const std::size_t M = r.metrics.size();
  for (int s = 0; s < S; ++s) {
    const double v = r.members[s * M + m];
    if (!std::isfinite(v)) continue;
    if (best < 0 || (higher ? v > r.members[best * M + m] : v < r.members[best * M + m])) best = s;
    if (worst < 0 || (higher ? v < r.members[worst * M + m] : v > r.members[worst * M + m])) worst = s;
  }
  const auto who = [&](int s) {
    return fmt::format("#{}{} {}", r.member[s], s < static_cast<int>(groups.size()) ? " (" + groups[s] + ")" : "",
                       num(r.members[s * M + m]));
  };
  if (best >= 0)
    t += fmt::format("\nby {}{}: best {}, worst {}\n", r.metrics[m], r.original.empty() ? "" : " in model units",
                     who(best), who(worst));
  t += series_table(r, groups);
  if (!r.baselines.empty())
    t += fmt::format("\n{} units:\n", compared_in_original(r) ? "original" : "model");
  for (const EvalRecord::Baseline& b : r.baselines) t += "  " + beat_line(r, b) + "\n";
  return t;
}

std::string own_eval_summary(const EvalRecord& r) {
  const std::size_t m = r.task == "regression" ? metric_index(r, "mae") : 0, L = kQuantileLevels.size();
  const auto q = [&](const std::vector<double>& v, std::size_t k) { return num(v[m * L + k]); };
  std::string t = fmt::format("{} ({} samples): per-member {} median {} (5%-95% {}-{}), pooled {}", r.source,
                              r.n_samples, r.metrics[m], q(r.quantiles, 3), q(r.quantiles, 1), q(r.quantiles, 5),
                              num(r.pooled[m]));
  for (const EvalRecord::Baseline& b : r.baselines) {
    const std::vector<BaselineComparison> c = compare_with_baseline(r.metrics, compared_members(r), compared_members(r, b));
    const auto it = std::find_if(c.begin(), c.end(), [&](const BaselineComparison& x) { return x.metric == r.metrics[m]; });
    if (it != c.end())
      t += fmt::format("{} {} of {} series beat {} (median ratio {})", &b == &r.baselines.front() ? " |" : ";", it->beat,
                       it->compared, b.kind, num(it->median_ratio));
  }
  return t;
}

}  // namespace tn
