// Stored swarm → ONNX graph (onnx_model.h). Our gate layouts (math/recurrent_cells.h) are PyTorch's:
// LSTM [i, f, g, o], GRU [r, z, n] with the reset gate applied after the recurrent projection;
// ONNX wants LSTM [i, o, f, c] and GRU [z, r, h] (linear_before_reset = 1 is our GRU), and
// weights transposed: W [1, G·H, in], R [1, G·H, H], B [1, 2·G·H] (input then recurrent bias).
#include "export/onnx_model.h"

#include <algorithm>

#include "export/member_tensors.h"
#include "export/onnx_graph.h"

namespace tn {
namespace {

using onnx_export::Attr;
using onnx_export::Dim;
using onnx_export::Elem;
using onnx_export::Graph;
using I64 = std::int64_t;

constexpr int kOpset = 17;

// ONNX gate g takes our gate kLstmGate[g] / kGruGate[g].
constexpr int kLstmGate[4] = {0, 3, 1, 2};  // i, o, f, c ← i, f, g, o
constexpr int kGruGate[3] = {1, 0, 2};      // z, r, h ← r, z, n

// Windows of a sequence run (/data@seq_len), whether the model is recurrent or dense.
bool sequence_run(const StoredSwarm& run) { return run.file.data.seq_len > 0; }

// Values per sample of the input statistics: step features for sequences, else features.
int stat_width(const StoredSwarm& run) {
  return sequence_run(run) ? run.file.data.step_features : run.shape.inputs();
}

std::vector<Dim> input_dims(const StoredSwarm& run) {
  if (sequence_run(run)) return {"N", run.file.data.seq_len, run.file.data.step_features};
  return {"N", run.shape.inputs()};
}

// Outputs t of a non-sequence run with data.normalize_target in original units, as predict
// gives them: t · target_std + target_mean per target column (float32, as predict computes it),
// then Exp − 1 for log1p; t itself otherwise. t is one member's [N, T] (`members` = {s}) or the
// members' [S, N, T]: per-member statistics (/data/normalization/member_target_*) take each
// member's own row, [S, 1, T] for a stack; per-group ones row members[0] (as the input's; a
// group_by run exports no ensemble); shared [T] ones serve every member.
std::string in_original_units(Graph& g, const StoredSwarm& run, const std::string& t, const std::vector<int>& members) {
  const Normalization& n = run.file.normalization;
  const Normalize method = run.cfg.data.normalize_target;
  const bool own = !n.member_target_mean.data.empty();
  if (sequence_run(run) || (n.target_mean.data.empty() && !own) || method == Normalize::None) return t;
  const auto T = static_cast<std::size_t>(run.shape.outputs());
  const std::vector<float> mean = own ? stats_rows(n.member_target_mean.data, T, members)
                                      : stats_row(n.target_mean.data, T, members.front());
  const std::vector<float> sd = own ? stats_rows(n.member_target_std.data, T, members)
                                    : stats_row(n.target_std.data, T, members.front());
  const auto w = static_cast<I64>(T);
  const std::vector<I64> dims = own && members.size() > 1 ? std::vector<I64>{static_cast<I64>(members.size()), 1, w}
                                                          : std::vector<I64>{static_cast<I64>(mean.size())};
  const std::string scaled = g.op("Mul", {t, g.constant("target_std", dims, sd)});
  const std::string y = g.op("Add", {scaled, g.constant("target_mean", dims, mean)}, {},
                             method == Normalize::Log1p ? "log1p_units" : "original_units");
  if (method != Normalize::Log1p) return y;
  return g.op("Sub", {g.op("Exp", {y}), g.constant("one", {}, {1.0f})}, {}, "original_units");
}

// "input" normalized with the stored statistics (row `row` of per-group ones): x' = (x − mean) / std.
std::string normalized_input(Graph& g, const StoredSwarm& run, int row) {
  std::string x = g.input("input", input_dims(run));
  const Normalization& n = run.file.normalization;
  if (n.mean.data.empty()) return x;
  const std::size_t F = static_cast<std::size_t>(stat_width(run));
  const I64 w = static_cast<I64>(F);
  const std::string mean = g.constant("norm_mean", {w}, stats_row(n.mean.data, F, row));
  const std::string sd = g.constant("norm_std", {w}, stats_row(n.std.data, F, row));
  return g.op("Div", {g.op("Sub", {x, mean}, {}, "centered"), sd}, {}, "normalized");
}

// Our [in, G·H] gate-major weights → ONNX's [G·H, in] in ONNX's gate order.
std::vector<float> onnx_gates(const std::vector<float>& w, int rows, int H, const int* gate_of, int G) {
  std::vector<float> out(static_cast<std::size_t>(rows) * G * H);
  for (int og = 0; og < G; ++og)
    for (int j = 0; j < H; ++j)
      for (int k = 0; k < rows; ++k)
        out[(static_cast<std::size_t>(og) * H + j) * rows + k] = w[static_cast<std::size_t>(k) * G * H + gate_of[og] * H + j];
  return out;
}

// Recurrent layers of member s on x [N, T, F] (normalized): returns the top layer's last state [N, H].
std::string recurrent_stack(Graph& g, const StoredSwarm& run, int s, const std::string& x) {
  std::string seq = g.op("Transpose", {x}, {{"perm", std::vector<I64>{1, 0, 2}}}, "time_major");  // [T, N, F]
  const auto& layers = run.shape.recurrent;
  for (std::size_t r = 0; r < layers.size(); ++r) {
    const RecurrentLayer& l = layers[r];
    const bool lstm = l.cell == CellType::Lstm;
    const int H = l.units, G = l.gates(), t0 = run.shape.recurrent_tensor(static_cast<int>(r));
    const int* gate_of = lstm ? kLstmGate : kGruGate;
    const std::string p = std::string("m").append(std::to_string(s)).append("_rnn").append(std::to_string(r)).append("_");
    const std::string W = g.constant(p + "W", {1, G * H, l.in}, onnx_gates(member_tensor(run, t0, s), l.in, H, gate_of, G));
    const std::string R = g.constant(p + "R", {1, G * H, H}, onnx_gates(member_tensor(run, t0 + 1, s), H, H, gate_of, G));
    // B = [input bias, recurrent bias]: ours has no recurrent bias for the LSTM (zeros).
    std::vector<float> B(static_cast<std::size_t>(2) * G * H, 0.0f);
    const std::vector<float> bx = onnx_gates(member_tensor(run, t0 + 2, s), 1, H, gate_of, G);
    std::copy(bx.begin(), bx.end(), B.begin());
    if (!lstm) {
      const std::vector<float> bh = onnx_gates(member_tensor(run, t0 + 3, s), 1, H, gate_of, G);
      std::copy(bh.begin(), bh.end(), B.begin() + G * H);
    }
    std::vector<Attr> attrs{{"hidden_size", static_cast<I64>(H)}};
    if (!lstm) attrs.push_back({"linear_before_reset", I64{1}});
    // Y [T, 1, N, H] every step's state, Y_h [1, N, H] the last.
    const std::vector<std::string> out =
        g.node(lstm ? "LSTM" : "GRU", {seq, W, R, g.constant(p + "B", {1, 2 * G * H}, B)}, attrs, p + "Y", 2);
    if (r + 1 < layers.size()) seq = g.op("Squeeze", {out[0], g.constant_i64("axis1", {1}, {1})}, {}, p + "seq");
    else return g.op("Squeeze", {out[1], g.constant_i64("axis0", {1}, {0})}, {}, p + "last");  // [N, H]
  }
  return seq;
}

std::string activation(Graph& g, const DenseLayer& l, const std::string& z) {
  switch (l.act) {
    case Activation::Identity: return z;
    case Activation::Relu: return g.op("Relu", {z});
    case Activation::LeakyRelu: return g.op("LeakyRelu", {z}, {{"alpha", l.slope}});
    case Activation::Tanh: return g.op("Tanh", {z});
    case Activation::Sigmoid: return g.op("Sigmoid", {z});
    case Activation::Gelu: {  // 0.5·z·(1 + erf(z/√2)), the exact form (opset 17 has no Gelu)
      const std::string e = g.op("Erf", {g.op("Mul", {z, g.constant("inv_sqrt2", {}, {0.70710678118654752f})})});
      const std::string one_plus = g.op("Add", {e, g.constant("one", {}, {1.0f})});
      return g.op("Mul", {g.op("Mul", {z, g.constant("half", {}, {0.5f})}), one_plus}, {}, "gelu");
    }
  }
  return z;
}

// Softmax, sigmoid or nothing, by loss: logits → the outputs predict reports.
std::string output_activation(Graph& g, const StoredSwarm& run, const std::string& logits) {
  if (run.cfg.loss.type == LossType::CrossEntropy) return g.op("Softmax", {logits}, {{"axis", I64{-1}}}, "probs");
  if (run.cfg.loss.type == LossType::Bce) return g.op("Sigmoid", {logits}, {}, "probs");
  return logits;
}

// Class probabilities [..., K] of the outputs: themselves, or (1 − p, p) for bce.
std::string class_probabilities(Graph& g, const StoredSwarm& run, const std::string& out) {
  if (run.cfg.loss.type != LossType::Bce) return out;
  const std::string q = g.op("Sub", {g.constant("one", {}, {1.0f}), out}, {}, "p0");
  return g.op("Concat", {q, out}, {{"axis", I64{-1}}}, "class_probs");
}

// Σ_k −p ln p over `axis` (0·ln 0 = 0), the axis removed.
std::string entropy(Graph& g, const std::string& p, I64 axis) {
  const std::string zero = g.constant("zero", {}, {0.0f});
  const std::string plogp = g.op("Mul", {p, g.op("Log", {p})});
  const std::string terms = g.op("Where", {g.op("Greater", {p, zero}), plogp, zero});
  return g.op("Neg", {g.op("ReduceSum", {terms, g.constant_i64("axes", {1}, {axis})}, {{"keepdims", I64{0}}})},
              {}, "entropy");
}

std::string member_name(const StoredSwarm& run) { return run.cfg.name.empty() ? "turbanet" : run.cfg.name; }

std::string member_list(const StoredSwarm& run, const std::vector<int>& members) {
  std::string text;
  for (int s : members) {
    if (!text.empty()) text += ',';
    text += std::to_string(run.first_member + s);
  }
  return text;
}

void describe(Graph& g, const StoredSwarm& run, const std::vector<int>& members) {
  g.metadata("turbanet.run", run.path);
  g.metadata("turbanet.members", member_list(run, members));
  g.metadata("turbanet.task", run.classification ? "classification" : "regression");
  g.metadata("turbanet.loss", to_string(run.cfg.loss.type));
  if (!run.file.data.feature_names.empty()) {
    std::string names;
    for (const std::string& n : run.file.data.feature_names) names += (names.empty() ? "" : ",") + n;
    g.metadata("turbanet.feature_names", names);
  }
  if (run.classification) {
    std::string names;
    for (const std::string& n : run.class_names) names += (names.empty() ? "" : ",") + n;
    g.metadata("turbanet.class_names", names);
  }
}

}  // namespace

std::string onnx_member_model(const StoredSwarm& run, int s) {
  if (!run.architectures.empty()) {  // the member's architecture alone, numbered so that j is member s
    const auto [a, j] = architecture_of(run, s);
    StoredSwarm view = architecture_view(run, a);
    view.first_member = run.first_member + s - j;
    return onnx_member_model(view, j);
  }
  Graph g(member_name(run) + "_member_" + std::to_string(run.first_member + s), kOpset);
  describe(g, run, {s});
  std::string x = normalized_input(g, run, s);
  if (!run.shape.recurrent.empty()) x = recurrent_stack(g, run, s, x);
  else if (sequence_run(run)) x = g.op("Flatten", {x}, {{"axis", I64{1}}}, "window");  // [N, T·F]
  for (std::size_t li = 0; li < run.shape.layers.size(); ++li) {
    const DenseLayer& l = run.shape.layers[li];
    const int t = run.shape.dense_tensor(static_cast<int>(li));
    const std::string p = "dense" + std::to_string(li) + "_";
    const std::string W = g.constant(p + "W", {l.in, l.out}, member_tensor(run, t, s));
    const std::string b = g.constant(p + "b", {l.out}, member_tensor(run, t + 1, s));
    x = activation(g, l, g.op("Gemm", {x, W, b}, {}, p + "z"));  // [N, out]
  }
  const I64 O = run.shape.outputs();
  const std::string out = in_original_units(g, run, output_activation(g, run, x), {s});
  g.output("output", out, Elem::Float, {"N", O});
  g.output("logits", x, Elem::Float, {"N", O});
  if (run.classification) {
    const std::string p = class_probabilities(g, run, out);
    g.output("label", g.op("ArgMax", {p}, {{"axis", I64{1}}, {"keepdims", I64{0}}}), Elem::Int64, {"N"});
  }
  const Normalization& n = run.file.normalization;
  // y = y' · target_std + target_mean; a transformed or window-scaled target needs the window's
  // last value and statistics, which the graph does not take (docs/export.md).
  const bool affine = run.file.data.transform == "none" && run.file.data.scale == "series";
  if (sequence_run(run) && affine && !n.target_mean.data.empty()) {
    const std::vector<float> m = stats_row(n.target_mean.data, 1, s), sd = stats_row(n.target_std.data, 1, s);
    const std::string scaled = g.op("Mul", {out, g.constant("target_std", {}, sd)});
    g.output("output_original", g.op("Add", {scaled, g.constant("target_mean", {}, m)}), Elem::Float, {"N", O});
  }
  return g.serialize();
}

namespace {

// The outputs [S, N, O] of `members` (local, one architecture: `run` is a swarm of one) on
// the normalized input x.
std::string stacked_outputs(Graph& g, const StoredSwarm& run, const std::vector<int>& members, std::string x) {
  const I64 S = static_cast<I64>(members.size());
  if (!run.shape.recurrent.empty()) {
    // One LSTM/GRU node per member (ONNX has no batched recurrent op), stacked to [S, N, H].
    std::vector<std::string> last;
    for (int s : members)
      last.push_back(g.op("Unsqueeze", {recurrent_stack(g, run, s, x), g.constant_i64("axis0", {1}, {0})}));
    x = members.size() == 1 ? last.front() : g.op("Concat", last, {{"axis", I64{0}}}, "states");
  } else if (sequence_run(run)) {
    x = g.op("Flatten", {x}, {{"axis", I64{1}}}, "window");  // [N, T·F]
  }
  // x is [N, in] (broadcast over the members by the first MatMul) or [S, N, in].
  for (std::size_t li = 0; li < run.shape.layers.size(); ++li) {
    const DenseLayer& l = run.shape.layers[li];
    const int t = run.shape.dense_tensor(static_cast<int>(li));
    const std::string p = "dense" + std::to_string(li) + "_";
    const std::string W = g.constant(p + "W", {S, l.in, l.out}, stacked_tensor(run, t, members));
    const std::string b = g.constant(p + "b", {S, 1, l.out}, stacked_tensor(run, t + 1, members));
    x = activation(g, l, g.op("Add", {g.op("MatMul", {x, W}), b}, {}, p + "z"));  // [S, N, out]
  }
  return output_activation(g, run, x);
}

// Members of several architectures: each architecture's members stacked as above, then put
// in member order, [S, N, O].
std::string mixed_outputs(Graph& g, const StoredSwarm& run, const std::vector<int>& members, const std::string& x) {
  std::vector<std::string> parts;
  std::vector<int> order;  // the member of each row of the concatenation
  const std::vector<ArchitectureMembers> split = split_by_architecture(run, members);
  for (std::size_t a = 0; a < split.size(); ++a) {
    if (split[a].members.empty()) continue;
    order.insert(order.end(), split[a].members.begin(), split[a].members.end());
    parts.push_back(stacked_outputs(g, architecture_view(run, a), split[a].local, x));
  }
  const std::string all = parts.size() == 1 ? parts.front() : g.op("Concat", parts, {{"axis", I64{0}}}, "architectures");
  std::vector<I64> rows;  // member order: row i of the result is the concatenation's row of members[i]
  for (int s : members) rows.push_back(std::find(order.begin(), order.end(), s) - order.begin());
  return g.op("Gather", {all, g.constant_i64("member_rows", {static_cast<I64>(rows.size())}, rows)}, {{"axis", I64{0}}},
              "members_in_order");
}

}  // namespace

namespace {

// The mean over the member axis (0) of t, of `rank` dimensions: ReduceMean, or with weights
// [S] the sum of t times the weights (shaped [S, 1, ...] to broadcast).
std::string member_mean(Graph& g, const std::string& t, int rank, const std::vector<double>& weights) {
  if (weights.empty()) return g.op("ReduceMean", {t}, {{"axes", std::vector<I64>{0}}, {"keepdims", I64{0}}});
  std::vector<I64> dims(static_cast<std::size_t>(rank), 1);
  dims[0] = static_cast<I64>(weights.size());
  const std::string w = g.constant("member_weight", dims, std::vector<float>(weights.begin(), weights.end()));
  // Opset 13 on, ReduceSum takes its axes as an input (ReduceMean still as an attribute at 17).
  return g.op("ReduceSum", {g.op("Mul", {t, w}), g.constant_i64("axes", {1}, {0})}, {{"keepdims", I64{0}}});
}

}  // namespace

std::string onnx_ensemble_model(const StoredSwarm& run, const std::vector<int>& members,
                                const std::vector<double>& weights) {
  const I64 S = static_cast<I64>(members.size()), O = run.shape.outputs();
  Graph g(member_name(run) + "_ensemble", kOpset);
  describe(g, run, members);
  g.doc("turbanet ensemble of members " + member_list(run, members) +
        (weights.empty() ? " (mean of the member probabilities)" : " (weighted mean of the member probabilities, "
                                                                   "weights in member_weight)") +
        (run.architectures.empty() ? "" : ", of several architectures"));
  const std::string x = normalized_input(g, run, 0);
  // Each member in original units before the mean (per-member statistics: its own row).
  const std::string members_out = in_original_units(
      g, run, run.architectures.empty() ? stacked_outputs(g, run, members, x) : mixed_outputs(g, run, members, x),
      members);
  g.output("members", members_out, Elem::Float, {S, "N", O});
  const std::string mean = member_mean(g, members_out, 3, weights);
  const std::string dev = g.op("Sub", {members_out, mean});
  const std::string var = member_mean(g, g.op("Mul", {dev, dev}), 3, weights);
  g.output("ensemble_std", g.op("Sqrt", {var}), Elem::Float, {"N", O});
  if (!run.classification) {
    g.output("ensemble", mean, Elem::Float, {"N", O});
    return g.serialize();
  }
  const I64 K = run.K;
  const std::string probs = class_probabilities(g, run, members_out);  // [S, N, K]
  const std::string p_bar = member_mean(g, probs, 3, weights);
  const std::string label = g.op("ArgMax", {p_bar}, {{"axis", I64{1}}, {"keepdims", I64{0}}}, "label");  // [N]
  g.output("ensemble", p_bar, Elem::Float, {"N", K});
  g.output("label", label, Elem::Int64, {"N"});
  const std::string h = entropy(g, p_bar, 1);  // [N]
  const std::string member_h = member_mean(g, entropy(g, probs, 2), 2, weights);
  g.output("entropy", h, Elem::Float, {"N"});
  g.output("mutual_information", g.op("Relu", {g.op("Sub", {h, member_h})}), Elem::Float, {"N"});
  // Fraction of members whose class (first argmax) differs from the ensemble's (weighted).
  const std::string member_class = g.op("ArgMax", {probs}, {{"axis", I64{2}}, {"keepdims", I64{0}}});  // [S, N]
  const std::string differs = g.op("Not", {g.op("Equal", {member_class, label})});
  const std::string frac = member_mean(g, g.op("Cast", {differs}, {{"to", I64{1}}}), 2, weights);  // 1 = FLOAT
  g.output("disagreement", frac, Elem::Float, {"N"});
  return g.serialize();
}

}  // namespace tn
