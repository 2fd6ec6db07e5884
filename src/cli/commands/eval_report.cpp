// Formatting evaluation results as a table, as JSON and as a log line.
#include "cli/commands/eval_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/commands/report_parts.h"
#include "eval/per_group.h"
#include "run/lineage.h"
#include "run/select_run.h"

namespace tn {

using namespace report;  // json, number, num, metric_object, member_list, record_header

namespace {

double mean_of(const Array& a) {
  double sum = 0;
  for (float v : a.data) sum += v;
  return a.data.empty() ? NAN : sum / a.data.size();
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

}  // namespace tn
