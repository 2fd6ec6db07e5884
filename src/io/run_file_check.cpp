// Checks a run file's in-memory form before any I/O, so that a bad record never leaves a
// half-written file.
#include "io/run_file_check.h"

#include <algorithm>

#include "io/run_file_error.h"
#include "io/run_layout.h"

namespace tn::io {
namespace {

struct Validator {
  const std::string& path;

  void fail(const std::string& why) const {
    throw RunFileError("cannot write run file '" + path + "': " + why);
  }
  void array(const Array& a, const std::string& name, bool required) const {
    if (a.shape.empty() && a.data.empty() && !required) return;
    if (a.shape.empty()) fail(name + " has no shape");
    if (a.size() != a.data.size()) {
      fail(name + " has shape " + shape_text(a.shape) + " (" + std::to_string(a.size()) +
           " values) but holds " + std::to_string(a.data.size()) + " values");
    }
  }
  void layers(const std::vector<LayerParams>& layers, const std::string& root) const {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (layers[i].tensors.empty()) fail(layer_name(root, i) + " has no tensors");
      for (const auto& [name, a] : layers[i].tensors) {
        if (std::find(layer_tensor_order().begin(), layer_tensor_order().end(), name) == layer_tensor_order().end())
          fail(layer_name(root, i) + "/" + name + " is not a parameter tensor name");
        array(a, layer_name(root, i) + "/" + name, true);
      }
    }
  }
  void split_name(const std::string& split, const char* what) const {
    if (split.empty() || split == "." || split.find('/') != std::string::npos)
      fail(std::string(what) + " split '" + split + "' is not a valid group name");
  }
  void predictions(const Predictions& p) const {
    split_name(p.split, "prediction");
    const std::string g = "/predictions/" + p.split;
    array(p.members, g + "/members", false);
    array(p.ensemble_mean, g + "/ensemble_mean", false);
    array(p.ensemble_std, g + "/ensemble_std", false);
    array(p.targets, g + "/targets", false);
    array(p.per_group, g + "/own", false);
    array(p.per_group_original, g + "/own_original", false);
    array(p.targets_original, g + "/targets_original", false);
    for (const Predictions::Naive& n : p.naive) {
      array(n.values, g + "/" + n.kind, false);
      array(n.original, g + "/" + n.kind + "_original", false);
    }
    if (!p.member.empty() && p.per_group.shape.size() == 2 && p.per_group.shape[0] != p.member.size())
      fail(g + "/member has " + std::to_string(p.member.size()) + " entries but /own has " +
           std::to_string(p.per_group.shape[0]) + " samples");
    if (!p.sample.empty() && p.sample.size() != p.member.size())
      fail(g + "/sample has " + std::to_string(p.sample.size()) + " entries but /member has " +
           std::to_string(p.member.size()));
  }
  void scores(const ScoreRecord& r, std::size_t S, std::size_t M, const std::string& name) const {
    if (r.empty()) return;
    if (r.members.size() != S * M || r.pooled.size() != M || r.quantiles.size() != M * 7)
      fail(name + ": scores do not match " + std::to_string(M) + " metrics and " + std::to_string(S) + " members");
  }
  void eval(const EvalRecord& e) const {
    split_name(e.split, "evaluation");
    const std::string g = "/eval/" + e.split;
    const std::size_t M = e.metrics.size();
    if (e.members.size() != e.member.size() * M || e.member_mean.size() != M ||
        e.member_std.size() != M || e.ensemble.size() != (e.per_group() ? 0 : M))
      fail(g + ": metric values do not match " + std::to_string(M) + " metrics and " +
           std::to_string(e.member.size()) + " members");
    array(e.member_confusion, g + "/members/confusion", false);
    array(e.member_mean_confusion, g + "/member_mean/confusion", false);
    array(e.ensemble_confusion, g + "/ensemble/confusion", false);
    array(e.ensemble_prediction, g + "/per_sample/ensemble", false);
    array(e.entropy, g + "/per_sample/entropy", false);
    array(e.mutual_information, g + "/per_sample/mutual_information", false);
    array(e.disagreement, g + "/per_sample/disagreement", false);
    if (!e.per_group()) return;
    const std::size_t S = e.member.size();
    scores({e.members, e.pooled, e.quantiles}, S, M, g);
    if (e.member_samples.size() != S) fail(g + "/members/n_samples does not have one entry per member");
    scores(e.original, S, M, g + "/original");
    for (const EvalRecord::Baseline& b : e.baselines) {
      scores(b.scores, S, M, g + "/" + b.kind + " baseline");
      scores(b.original, S, M, g + "/original/" + b.kind + " baseline");
    }
  }
  void run(const RunFile& r) const {
    if (r.params.empty() && r.architectures.empty()) fail("the run has no parameters (/params/layer_0)");
    layers(r.params, "/params");
    layers(r.init_params, "/init_params");
    for (std::size_t a = 0; a < r.architectures.size(); ++a) {
      const std::string g = "/architectures/arch_" + std::to_string(a);
      if (r.architectures[a].params.empty()) fail(g + " has no parameters");
      layers(r.architectures[a].params, g + "/params");
      layers(r.architectures[a].init_params, g + "/init_params");
    }
    layers(r.state.params, "/train_state/params");
    layers(r.state.opt1, "/train_state/opt1");
    layers(r.state.opt2, "/train_state/opt2");
    layers(r.state.best_params, "/train_state/best_params");
    for (std::size_t a = 0; a < r.state.architectures.size(); ++a) {
      const TrainState& st = r.state.architectures[a];
      const std::string g = "/train_state/arch_" + std::to_string(a);
      if (st.opt1.empty() || st.opt2.empty()) fail(g + " has no optimizer state");
      layers(st.params, g + "/params");
      layers(st.opt1, g + "/opt1");
      layers(st.opt2, g + "/opt2");
      layers(st.best_params, g + "/best_params");
    }
    if (!r.state.architectures.empty() && r.state.architectures.size() != r.architectures.size())
      fail("/train_state has " + std::to_string(r.state.architectures.size()) + " architectures' states for " +
           std::to_string(r.architectures.size()) + " architectures");
    array(r.train_loss, "/history/train_loss", false);
    array(r.val_loss, "/history/val_loss", false);
    array(r.train_accuracy, "/history/train_accuracy", false);
    array(r.val_accuracy, "/history/val_accuracy", false);
    array(r.normalization.mean, "/data/normalization/mean", false);
    array(r.normalization.std, "/data/normalization/std", false);
    array(r.normalization.target_mean, "/data/normalization/target_mean", false);
    array(r.normalization.target_std, "/data/normalization/target_std", false);
    array(r.normalization.member_target_mean, "/data/normalization/member_target_mean", false);
    array(r.normalization.member_target_std, "/data/normalization/member_target_std", false);
    for (const Predictions& p : r.predictions) predictions(p);
    for (const EvalRecord& e : r.evals) eval(e);
  }
};

}  // namespace

void check_run_file(const std::string& path, const RunFile& run) { Validator{path}.run(run); }

}  // namespace tn::io
