// Joining a sharded swarm's run files (see run/merge_runs.h).
#include "run/merge_runs.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>

#include "config/config.h"
#include "eval/evaluate.h"
#include "eval/per_group.h"
#include "run/checkpoint.h"
#include "run/errors.h"
#include "run/eval_record.h"
#include "run/swarm_file.h"

namespace tn {
namespace {

namespace fs = std::filesystem;

struct Part {
  std::string path;
  RunFile file;
};

std::string in_quotes(const std::string& path) { return "'" + path + "'"; }

std::string joined(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

// Parts in shard order, each shard once, all of one swarm, none interrupted.
std::vector<Part> read_parts(const std::vector<std::string>& paths) {
  if (paths.empty()) throw UsageError("merge: no parts given; pass the K run files of train --shard k/K");
  std::vector<Part> parts;
  for (const std::string& p : paths) {
    parts.push_back({p, read_run_file(p)});
    const RunMeta& m = parts.back().file.meta;
    if (m.shard_count == 0)
      throw UsageError("merge: " + in_quotes(p) + " is not a shard (no /meta@shard_count): it holds a whole swarm of " +
                       std::to_string(m.swarm_size) + " members; merge takes the files of train --shard k/K");
    if (m.interrupted)
      throw UsageError("merge: " + in_quotes(p) + " (shard " + std::to_string(m.shard_index) + "/" +
                       std::to_string(m.shard_count) + ") was interrupted; finish it first with turbanet train CONFIG "
                       "--shard " + std::to_string(m.shard_index) + "/" + std::to_string(m.shard_count) +
                       " --resume " + p);
  }
  const RunMeta& m0 = parts.front().file.meta;
  std::map<int, std::string> by_index;
  for (const Part& p : parts) {
    const RunMeta& m = p.file.meta;
    if (m.shard_count != m0.shard_count || m.shard_swarm_first != m0.shard_swarm_first ||
        m.shard_swarm_size != m0.shard_swarm_size)
      throw UsageError("merge: " + in_quotes(p.path) + " is shard " + std::to_string(m.shard_index) + " of " +
                       std::to_string(m.shard_count) + " of a swarm of " + std::to_string(m.shard_swarm_size) +
                       " members, " + in_quotes(parts.front().path) + " shard " + std::to_string(m0.shard_index) + " of " +
                       std::to_string(m0.shard_count) + " of " + std::to_string(m0.shard_swarm_size) +
                       ": they are parts of different runs");
    const auto [it, fresh] = by_index.emplace(m.shard_index, p.path);
    if (!fresh)
      throw UsageError("merge: shard " + std::to_string(m.shard_index) + " is given twice: " + in_quotes(it->second) +
                       " and " + in_quotes(p.path));
  }
  std::vector<int> missing;
  for (int k = 0; k < m0.shard_count; ++k)
    if (!by_index.count(k)) missing.push_back(k);
  if (!missing.empty())
    throw UsageError("merge: shards " + joined(missing) + " of " + std::to_string(m0.shard_count) +
                     " are missing; pass every shard's run file (train --shard k/" + std::to_string(m0.shard_count) + ")");
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.file.meta.shard_index < b.file.meta.shard_index; });
  int next = m0.shard_swarm_first;
  for (const Part& p : parts) {
    if (p.file.meta.first_member != next)
      throw UsageError("merge: " + in_quotes(p.path) + " holds members from " + std::to_string(p.file.meta.first_member) +
                       ", expected " + std::to_string(next) + ": its shard was trained with another swarm");
    next += p.file.meta.swarm_size;
  }
  if (next != m0.shard_swarm_first + m0.shard_swarm_size)
    throw UsageError("merge: the shards hold members up to " + std::to_string(next - 1) + " of a swarm ending at " +
                     std::to_string(m0.shard_swarm_first + m0.shard_swarm_size - 1));
  return parts;
}

// The parts were trained from one configuration, apart from their members and file paths, and
// on the same data (splits, normalization, names, encoding).
void check_same_run(const std::vector<Part>& parts) {
  const Part& a = parts.front();
  // A resumed job's parts may differ in what a resume may change, apart from train.epochs
  // (the data are compared below, by their contents).
  std::vector<std::string> may_differ = {"swarm.first_member", "swarm.size"};
  for (const std::string& key : resumable_keys())
    if (key != "train.epochs") may_differ.push_back(key);
  for (const Part& b : parts) {
    for (const std::string& key : config_text_differences(a.file.config_yaml, b.file.config_yaml))
      if (std::find(may_differ.begin(), may_differ.end(), key) == may_differ.end())
        throw UsageError("merge: " + in_quotes(a.path) + " and " + in_quotes(b.path) + " were trained with different " +
                         "configurations (" + key + " differs); every shard must train the same config");
    const RunFile &x = a.file, &y = b.file;
    bool same = x.splits.size() == y.splits.size() && x.data.feature_names == y.data.feature_names &&
                x.data.class_names == y.data.class_names && x.normalization.mean.data == y.normalization.mean.data &&
                x.normalization.std.data == y.normalization.std.data && x.encoding.categories == y.encoding.categories &&
                x.members.per_member == y.members.per_member;
    for (std::size_t i = 0; same && i < x.splits.size(); ++i)
      same = x.splits[i].name == y.splits[i].name && x.splits[i].rows == y.splits[i].rows;
    if (!same)
      throw UsageError("merge: " + in_quotes(a.path) + " and " + in_quotes(b.path) + " were trained on different data " +
                       "(splits, normalization or columns differ): was the data file changed between the shards?");
  }
}

// Arrays [S_k, ...] of the parts along the member axis; a part's history shorter than `cols`
// columns (its members all stopped early) is padded with NaN. Each part's array is freed once
// copied, so the merge holds about one copy of the run's arrays at a time.
Array stack(const std::vector<Array*>& arrays, std::uint64_t cols = 0) {
  Array r;
  if (arrays.front()->data.empty() && arrays.front()->shape.empty()) return r;
  r.shape = arrays.front()->shape;
  r.shape[0] = 0;
  if (cols > 0) r.shape[1] = cols;
  std::size_t total = 0;
  for (const Array* a : arrays) total += cols > 0 ? a->shape[0] * cols : a->data.size();
  r.data.reserve(total);
  for (Array* a : arrays) {
    r.shape[0] += a->shape[0];
    if (cols == 0 || a->shape[1] == cols) {
      r.data.insert(r.data.end(), a->data.begin(), a->data.end());
    } else {
      for (std::uint64_t s = 0; s < a->shape[0]; ++s) {
        const auto row = a->data.begin() + static_cast<std::ptrdiff_t>(s * a->shape[1]);
        r.data.insert(r.data.end(), row, row + static_cast<std::ptrdiff_t>(a->shape[1]));
        r.data.insert(r.data.end(), cols - a->shape[1], std::numeric_limits<float>::quiet_NaN());
      }
    }
    std::vector<float>().swap(a->data);
  }
  return r;
}

std::vector<LayerParams> stack_layers(std::vector<Part>& parts, std::vector<LayerParams> RunFile::*which) {
  std::vector<LayerParams> r;
  for (const LayerParams& layer : parts.front().file.*which) {  // names and shapes; the data follow
    r.emplace_back();
    for (const auto& [name, array] : layer.tensors) r.back().tensors.push_back({name, Array{array.shape, {}}});
  }
  for (std::size_t l = 0; l < r.size(); ++l)
    for (std::size_t t = 0; t < r[l].tensors.size(); ++t) {
      std::vector<Array*> a;
      for (Part& p : parts) {
        std::vector<LayerParams>& layers = p.file.*which;
        if (layers.size() != r.size() || layers[l].tensors.size() != r[l].tensors.size())
          throw UsageError("merge: " + in_quotes(p.path) + " holds another model than " + in_quotes(parts.front().path));
        a.push_back(&layers[l].tensors[t].second);
      }
      r[l].tensors[t].second = stack(a);
    }
  return r;
}

// Members of several architectures: each architecture's members and parameters of every part,
// joined per architecture (by name, in the order of their first member: the parts hold
// consecutive blocks in order), and each member's architecture index.
void merge_architectures(std::vector<Part>& parts, RunFile& r) {
  std::vector<std::string> names;
  for (const Part& p : parts)
    for (const ArchitectureParams& a : p.file.architectures)
      if (std::find(names.begin(), names.end(), a.name) == names.end()) names.push_back(a.name);
  for (const std::string& name : names) {
    ArchitectureParams m;
    m.name = name;
    std::vector<ArchitectureParams*> of;
    for (Part& p : parts)
      for (ArchitectureParams& a : p.file.architectures)
        if (a.name == name) {
          of.push_back(&a);
          m.members.insert(m.members.end(), a.members.begin(), a.members.end());
        }
    for (std::vector<LayerParams> ArchitectureParams::*which : {&ArchitectureParams::params, &ArchitectureParams::init_params}) {
      for (std::size_t l = 0; l < (of.front()->*which).size(); ++l) {
        LayerParams joined;
        for (std::size_t t = 0; t < (of.front()->*which)[l].tensors.size(); ++t) {
          std::vector<Array*> a;
          for (ArchitectureParams* x : of) {
            if ((x->*which).size() != (of.front()->*which).size())
              throw UsageError("merge: the parts hold architecture '" + name + "' with different layers");
            a.push_back(&(x->*which)[l].tensors[t].second);
          }
          joined.tensors.push_back({(of.front()->*which)[l].tensors[t].first, stack(a)});
        }
        (m.*which).push_back(std::move(joined));
      }
    }
    r.architectures.push_back(std::move(m));
  }
  r.members.architecture.assign(static_cast<std::size_t>(r.meta.swarm_size), 0);
  for (std::size_t a = 0; a < r.architectures.size(); ++a)
    for (int k : r.architectures[a].members) r.members.architecture[static_cast<std::size_t>(k - r.meta.first_member)] = static_cast<int>(a);
}

template <class T>
std::vector<T> concat(const std::vector<Part>& parts, const std::function<const std::vector<T>&(const RunFile&)>& of) {
  std::vector<T> r;
  for (const Part& p : parts) r.insert(r.end(), of(p.file).begin(), of(p.file).end());
  return r;
}

MemberData merge_members(const std::vector<Part>& parts) {
  MemberData m = parts.front().file.members;
  const auto ints = [&](std::vector<int> MemberData::*v) {
    return concat<int>(parts, [v](const RunFile& f) -> const std::vector<int>& { return f.members.*v; });
  };
  m.sample_count = ints(&MemberData::sample_count);
  m.set_rows = ints(&MemberData::set_rows);
  m.init_from = ints(&MemberData::init_from);
  m.group_names = concat<std::string>(parts, [](const RunFile& f) -> const std::vector<std::string>& { return f.members.group_names; });
  if (!m.set_offset.empty()) {  // [S + 1] starts of each member's rows in set_rows
    m.set_offset = {0};
    for (const Part& p : parts)
      for (std::size_t s = 1; s < p.file.members.set_offset.size(); ++s)
        m.set_offset.push_back(m.set_offset.back() + p.file.members.set_offset[s] - p.file.members.set_offset[s - 1]);
  }
  for (std::size_t k = 0; k < m.hparam_text.size(); ++k) {
    m.hparam_text[k].second.clear();
    for (const Part& p : parts) {
      const auto& hp = p.file.members.hparam_text;
      if (k >= hp.size() || hp[k].first != m.hparam_text[k].first)
        throw UsageError("merge: " + in_quotes(p.path) + " lacks the per-member values of " + m.hparam_text[k].first);
      m.hparam_text[k].second.insert(m.hparam_text[k].second.end(), hp[k].second.begin(), hp[k].second.end());
    }
  }
  for (std::size_t k = 0; k < m.hparams.size(); ++k) {
    m.hparams[k].second.clear();
    for (const Part& p : parts) {
      const auto& hp = p.file.members.hparams;
      if (k >= hp.size() || hp[k].first != m.hparams[k].first)
        throw UsageError("merge: " + in_quotes(p.path) + " lacks the per-member values of " + m.hparams[k].first);
      m.hparams[k].second.insert(m.hparams[k].second.end(), hp[k].second.begin(), hp[k].second.end());
    }
  }
  return m;
}

Combine combine_of(const std::string& name) {
  return name == "vote" ? Combine::Vote : Combine::MeanProb;  // "mean_prob", or "mean" (regression)
}

// group_by: each shard predicted its own members' samples (Predictions::sample says where they
// are in the split); put back in split order, they are evaluated as training evaluates them.
void merge_group_evaluation(const std::vector<Part>& parts, const Config& cfg, const Predictions& p0, RunFile& r) {
  const RunFile& f0 = parts.front().file;
  const int first = f0.meta.shard_swarm_first;
  const auto split = std::find_if(f0.splits.begin(), f0.splits.end(), [&](const DataSplit& d) { return d.name == p0.split; });
  if (split == f0.splits.end())
    throw UsageError("merge: " + in_quotes(parts.front().path) + " has predictions on the " + p0.split +
                     " split but no such split in /data/splits");
  const std::size_t N = split->rows.size(), O = p0.per_group.shape.size() == 2 ? p0.per_group.shape[1] : 0;
  const std::size_t wy = p0.targets.shape.size() == 2 ? p0.targets.shape[1] : 1;
  GroupPredictions p;
  p.S = f0.meta.shard_swarm_size;
  p.N = static_cast<int>(N);
  p.O = static_cast<int>(O);
  p.member.assign(N, -1);
  GroupTargets t;
  // Every per-sample array of the predictions, [N, width] in split order: from each part's
  // p0-shaped array (`of`) to its place in `to`.
  struct Column {
    std::vector<float>* to;
    std::function<const Array&(const Predictions&)> of;
    std::size_t width;
  };
  std::vector<Column> columns;
  const auto add = [&](std::vector<float>& to, std::function<const Array&(const Predictions&)> of, std::size_t w) {
    if (of(p0).data.empty()) return;
    to.assign(N * w, 0.0f);
    columns.push_back({&to, std::move(of), w});
  };
  add(p.outputs, [](const Predictions& q) -> const Array& { return q.per_group; }, O);
  add(t.y, [](const Predictions& q) -> const Array& { return q.targets; }, wy);
  add(p.outputs_original, [](const Predictions& q) -> const Array& { return q.per_group_original; }, O);
  add(t.y_original, [](const Predictions& q) -> const Array& { return q.targets_original; }, O);
  t.baselines.resize(p0.naive.size());
  for (std::size_t k = 0; k < p0.naive.size(); ++k) {  // every part has p0's kinds (checked below)
    t.baselines[k].kind = p0.naive[k].kind;
    add(t.baselines[k].values, [k](const Predictions& q) -> const Array& { return q.naive[k].values; }, O);
    add(t.baselines[k].original, [k](const Predictions& q) -> const Array& { return q.naive[k].original; }, O);
  }
  const auto same_kinds = [&](const Predictions& q) {
    return std::equal(q.naive.begin(), q.naive.end(), p0.naive.begin(), p0.naive.end(),
                      [](const Predictions::Naive& a, const Predictions::Naive& b) { return a.kind == b.kind; });
  };
  for (const Part& part : parts) {
    const Predictions* q = part.file.find_predictions(p0.split);
    const auto fits = [&](const Column& c) { return c.of(*q).data.size() == q->sample.size() * c.width; };
    if (!q || q->sample.size() != q->member.size() || !same_kinds(*q) || !std::all_of(columns.begin(), columns.end(), fits))
      throw UsageError("merge: " + in_quotes(part.path) + " has no predictions of its groups on the " + p0.split + " split");
    for (std::size_t j = 0; j < q->sample.size(); ++j) {
      const auto i = static_cast<std::size_t>(q->sample[j]);
      if (q->sample[j] < 0 || i >= N || p.member[i] >= 0)
        throw UsageError("merge: " + in_quotes(part.path) + " predicts sample " + std::to_string(q->sample[j]) +
                         " of the " + p0.split + " split, which another part predicts too or which is not in it");
      p.member[i] = q->member[j] - first;
      for (const Column& c : columns)
        std::copy_n(c.of(*q).data.begin() + static_cast<std::ptrdiff_t>(j * c.width), c.width,
                    c.to->begin() + static_cast<std::ptrdiff_t>(i * c.width));
    }
  }
  if (std::count(p.member.begin(), p.member.end(), -1) > 0)
    throw UsageError("merge: some samples of the " + p0.split + " split are predicted by no part");
  r.put(make_group_predictions(p0.split, p, t, first, is_classification(cfg.loss.type)));
  for (const EvalRecord& e0 : f0.evals)
    if (e0.split == p0.split && e0.per_group())
      r.put(make_group_eval_record(evaluate_per_group(p, cfg.loss.type, t), e0.split, e0.source, first, p.N));
}

// Parts that kept only their ensemble's predictions (output.predictions: ensemble): the whole
// swarm's ensemble mean is the parts' weighted by the members each used (those not left out
// as diverged, from its /eval/<split>), its spread the pooled population one.
Predictions merge_ensembles(const std::vector<Part>& parts, const Predictions& p0) {
  const std::size_t n = p0.ensemble_mean.data.size();
  std::vector<double> sum(n, 0.0), sq(n, 0.0);
  double used = 0;
  for (const Part& p : parts) {
    const Predictions* q = p.file.find_predictions(p0.split);
    if (!q || q->ensemble_mean.shape != p0.ensemble_mean.shape || q->ensemble_std.shape != p0.ensemble_mean.shape)
      throw UsageError("merge: " + in_quotes(p.path) + " has no ensemble predictions on the " + p0.split + " split like " +
                       in_quotes(parts.front().path));
    const auto e = std::find_if(p.file.evals.begin(), p.file.evals.end(), [&](const EvalRecord& x) { return x.split == p0.split; });
    const double w = e == p.file.evals.end() ? p.file.meta.swarm_size
                                             : static_cast<double>(e->member.size() - e->excluded.size());
    if (w <= 0) continue;  // every member of the part diverged: its mean is NaN
    for (std::size_t i = 0; i < n; ++i) {
      const double m = q->ensemble_mean.data[i], s = q->ensemble_std.data[i];
      sum[i] += w * m;
      sq[i] += w * (s * s + m * m);
    }
    used += w;
  }
  Predictions r;
  r.split = p0.split;
  r.targets = p0.targets;
  r.ensemble_mean = r.ensemble_std = p0.ensemble_mean;
  for (std::size_t i = 0; i < n; ++i) {
    const double m = sum[i] / used;
    r.ensemble_mean.data[i] = static_cast<float>(m);
    r.ensemble_std.data[i] = static_cast<float>(std::sqrt(std::max(0.0, sq[i] / used - m * m)));
  }
  return r;
}

// /predictions/<split> of every part side by side, and /eval/<split> computed again over the
// whole swarm as training computes it. Parts that kept only their ensembles' predictions, or
// none (output.predictions), give the merged ensemble's, or none, and no /eval: every member's
// metrics need its outputs, which `eval` computes again from the parameters.
void merge_evaluations(std::vector<Part>& parts, const Config& cfg, RunFile& r) {
  const bool classification = is_classification(cfg.loss.type);
  const int first = parts.front().file.meta.shard_swarm_first;
  if (cfg.output.predictions != "members")
    spdlog::warn("merge: the parts kept {} (output.predictions: {}), so the merged file has no /eval; run turbanet "
                 "eval on it for every member's metrics and the ensemble's", cfg.output.predictions == "none"
                 ? "no predictions" : "only their ensembles' predictions", cfg.output.predictions);
  for (const Predictions& p0 : parts.front().file.predictions) {
    if (!p0.member.empty()) {
      merge_group_evaluation(parts, cfg, p0, r);
      continue;
    }
    if (p0.members.data.empty()) {
      r.put(merge_ensembles(parts, p0));
      continue;
    }
    std::vector<Array*> members;
    for (Part& p : parts) {
      Predictions* q = p.file.find_predictions(p0.split);
      if (!q || q->members.shape.size() != 3 || q->members.shape[1] != p0.members.shape[1])
        throw UsageError("merge: " + in_quotes(p.path) + " has no predictions on the " + p0.split + " split like " +
                         in_quotes(parts.front().path));
      members.push_back(&q->members);
    }
    const Array all = stack(members);
    const SwarmPredictions sp{static_cast<int>(all.shape[0]), static_cast<int>(all.shape[1]),
                              static_cast<int>(all.shape[2]), all.data, {}};
    r.put(make_predictions(p0.split, sp, p0.targets.data, classification));
    for (const EvalRecord& e0 : parts.front().file.evals) {
      if (e0.split != p0.split) continue;
      if (e0.combine == "mean_logit") {  // logits are not stored
        spdlog::warn("merge: the {} evaluation combined with mean_logit is left out; run turbanet eval on the merged file",
                     e0.split);
        continue;
      }
      const Combine how = combine_of(e0.combine);
      r.put(make_eval_record(evaluate(sp, cfg.loss.type, p0.targets.data, how), e0.split, e0.source, how, first, sp.N));
    }
  }
}

}  // namespace

RunFile merge_shards(const std::vector<std::string>& paths, const std::string& out) {
  std::vector<Part> parts = read_parts(paths);
  check_same_run(parts);
  const RunFile& f0 = parts.front().file;
  const RunMeta& m0 = f0.meta;
  // The whole swarm's configuration (a shard stores it, run/shard.h) with the merged file's
  // paths, as one run writing `out` would have resolved and stored it.
  Config cfg = run_file_config(f0, parts.front().path);
  if (cfg.train.checkpoint.path == default_checkpoint_path(cfg.output.path))
    cfg.train.checkpoint.path = default_checkpoint_path(out);
  cfg.output.path = out;

  RunFile r;
  r.config_yaml = to_yaml(cfg);
  r.meta = m0;
  r.meta.swarm_size = m0.shard_swarm_size;
  r.meta.first_member = m0.shard_swarm_first;
  r.meta.shard_index = r.meta.shard_count = r.meta.shard_swarm_first = r.meta.shard_swarm_size = 0;
  r.meta.created = utc_now();
  for (const Part& p : parts) {
    const RunMeta& m = p.file.meta;
    // The shards ran side by side: the job's times are those of the slowest.
    r.meta.epochs = std::max(r.meta.epochs, m.epochs);
    r.meta.steps = std::max(r.meta.steps, m.steps);
    r.meta.wall_seconds = std::max(r.meta.wall_seconds, m.wall_seconds);
    r.meta.train_seconds = std::max(r.meta.train_seconds, m.train_seconds);
  }
  if (f0.architectures.empty()) {
    r.params = stack_layers(parts, &RunFile::params);
    r.init_params = stack_layers(parts, &RunFile::init_params);
  }
  const auto history = [&](Array RunFile::*h) {
    std::vector<Array*> a;
    for (Part& p : parts) a.push_back(&(p.file.*h));
    return stack(a, static_cast<std::uint64_t>(r.meta.epochs));
  };
  r.train_loss = history(&RunFile::train_loss);
  r.val_loss = history(&RunFile::val_loss);
  r.train_accuracy = history(&RunFile::train_accuracy);
  r.val_accuracy = history(&RunFile::val_accuracy);
  const auto per_member = [&](std::vector<int> RunFile::*v) {
    return concat<int>(parts, [v](const RunFile& f) -> const std::vector<int>& { return f.*v; });
  };
  r.diverged_epoch = per_member(&RunFile::diverged_epoch);
  r.stopped_epoch = per_member(&RunFile::stopped_epoch);
  r.best_epoch = per_member(&RunFile::best_epoch);
  r.members = merge_members(parts);
  if (!f0.architectures.empty()) merge_architectures(parts, r);
  r.splits = f0.splits;
  r.normalization = f0.normalization;
  // Per-member target statistics [S_k, T]: each part's members' rows, in member order.
  for (Array Normalization::*m : {&Normalization::member_target_mean, &Normalization::member_target_std}) {
    std::vector<Array*> a;
    for (Part& p : parts) a.push_back(&(p.file.normalization.*m));
    r.normalization.*m = stack(a);
  }
  r.data = f0.data;
  r.encoding = f0.encoding;
  merge_evaluations(parts, cfg, r);
  return r;
}

}  // namespace tn
