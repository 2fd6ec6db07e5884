// Class weights (cross_entropy) and pos_weight (bce): the CPU loss op against PyTorch's
// CrossEntropyLoss(weight=w) and BCEWithLogitsLoss(pos_weight=p) on the same numbers, the
// `balanced` weights against scikit-learn's compute_class_weight, and the config keys.
// (Finite-difference gradients: tests/test_dense_grad.cpp; every backend: the op table.)
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "config/config.h"
#include "config_test_util.h"
#include "data/dataset.h"
#include "python_test_util.h"
#include "train/loss_weights.h"

using namespace tn;
using namespace tn::test;

namespace {

std::string list(const std::vector<float>& v) {
  std::ostringstream os;
  os.precision(9);
  os << "[";
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str() + "]";
}

std::vector<double> numbers(const std::string& text) {
  std::istringstream in(text);
  std::vector<double> v;
  for (double x; in >> x;) v.push_back(x);
  return v;
}

// Our loss (the per-member loss sum / rows) and dL/dZ for one member of B rows and O outputs.
std::vector<double> ours(LossType type, int B, int O, const std::vector<float>& Z, const std::vector<float>& Y,
                         const std::vector<float>& w) {
  CpuBackend be(1);
  LossConfig cfg;
  cfg.type = type;
  cfg.weights = w.data();
  std::vector<float> dZ(Z.size());
  double loss = 0, correct = 0;
  be.loss_backward(cfg, 1, B, O, Z.data(), B * O, Y.data(), static_cast<std::int64_t>(Y.size()), dZ.data(), &loss,
                   &correct, nullptr);
  std::vector<double> r{loss / B};
  r.insert(r.end(), dZ.begin(), dZ.end());
  return r;
}

}  // namespace

TEST_CASE("class weights and pos_weight match PyTorch's losses and gradients") {
  const std::string py = "/usr/bin/python3";
  if (std::system((py + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0) {
    MESSAGE("SKIPPED: no PyTorch for " << py);
    return;
  }
  const int B = 5, O = 3;
  const std::vector<float> Z = {0.3f, -1.2f, 2.0f, 1.5f, 0.1f, -0.4f, -2.0f, 0.7f, 0.2f,
                                0.0f, 0.0f, 1.0f, 3.1f, -0.6f, 0.9f};
  const std::vector<float> labels = {2, 0, 1, 2, 0}, cw = {0.5f, 3.0f, 1.25f};
  const std::vector<float> targets = {1, 0, 0.3f, 0, 1, 1, 0.5f, 0, 1, 1, 1, 0, 0, 0, 0}, pw = {4.0f, 0.25f, 1.0f};
  const std::string script =
      "import torch\n"
      "z = torch.tensor(" + list(Z) + ", dtype=torch.float64).reshape(5, 3).requires_grad_()\n"
      "l = torch.nn.functional.cross_entropy(z, torch.tensor(" + list(labels) + ").long(), weight=torch.tensor(" +
      list(cw) + ", dtype=torch.float64))\n"
      "l.backward()\n"
      "print(l.item(), *z.grad.flatten().tolist())\n"
      "z.grad = None\n"
      "l = torch.nn.functional.binary_cross_entropy_with_logits(z, torch.tensor(" + list(targets) +
      ", dtype=torch.float64).reshape(5, 3), pos_weight=torch.tensor(" + list(pw) + ", dtype=torch.float64))\n"
      "l.backward()\n"
      "print(l.item(), *z.grad.flatten().tolist())\n";
  const std::vector<double> torch = numbers(run_command(py + " -c '" + script + "' 2>&1"));
  REQUIRE(torch.size() == 2 * (1 + B * O));
  const std::vector<double> xent = ours(LossType::CrossEntropy, B, O, Z, labels, cw);
  const std::vector<double> bce = ours(LossType::Bce, B, O, Z, targets, pw);
  double worst = 0;
  for (int i = 0; i < 1 + B * O; ++i) {
    CHECK(xent[i] == doctest::Approx(torch[i]).epsilon(1e-5));
    CHECK(bce[i] == doctest::Approx(torch[1 + B * O + i]).epsilon(1e-5));
    worst = std::max({worst, std::fabs(xent[i] - torch[i]), std::fabs(bce[i] - torch[1 + B * O + i])});
  }
  MESSAGE("largest difference from PyTorch (loss and dL/dz): " << worst);
}

TEST_CASE("class_weights: balanced is n / (classes · count) on the training split, as scikit-learn computes it") {
  SplitData train;
  train.y = {0, 0, 0, 1, 2, 2, 0, 2};
  train.n = static_cast<int>(train.y.size());
  LossConfig loss;
  loss.balanced = true;
  const std::vector<float> w = resolve_loss_weights(loss, train, 3);
  REQUIRE(w.size() == 3);
  CHECK(w[0] == doctest::Approx(8.0 / (3 * 4)));
  CHECK(w[1] == doctest::Approx(8.0 / (3 * 1)));
  CHECK(w[2] == doctest::Approx(8.0 / (3 * 3)));
  const std::string py = "/usr/bin/python3";
  if (std::system((py + " -c 'import sklearn' >/dev/null 2>&1").c_str()) == 0) {
    const std::vector<double> sk = numbers(run_command(
        py + " -c 'from sklearn.utils.class_weight import compute_class_weight as c; import numpy as np; "
             "print(*c(\"balanced\", classes=np.arange(3), y=np.array([0, 0, 0, 1, 2, 2, 0, 2])))'"));
    REQUIRE(sk.size() == 3);
    for (int c = 0; c < 3; ++c) CHECK(w[c] == doctest::Approx(sk[c]).epsilon(1e-6));
  } else {
    MESSAGE("SKIPPED the scikit-learn comparison: no scikit-learn");
  }
  // A class absent from the training split has no balanced weight (scikit-learn refuses too).
  CHECK_THROWS_AS(resolve_loss_weights(loss, train, 4), DataError);
  // Unweighted losses resolve to nothing; pos_weight given once is every output's.
  CHECK(resolve_loss_weights(LossConfig{}, train, 3).empty());
  LossConfig bce;
  bce.type = LossType::Bce;
  bce.pos_weight = {2.5};
  CHECK(resolve_loss_weights(bce, train, 3) == std::vector<float>{2.5f, 2.5f, 2.5f});
}

TEST_CASE("config: loss.class_weights and loss.pos_weight are read, checked and written back") {
  const std::string model = "model:\n  layers:\n    - {units: 3}\ndata:\n  source: spirals\n";
  const Config a = parse(model + "loss: {type: cross_entropy, class_weights: balanced}\n");
  CHECK(a.loss.balanced);
  const Config b = parse(model + "loss: {type: cross_entropy, class_weights: [1, 0.5, 2]}\n");
  CHECK(b.loss.class_weights == std::vector<double>{1, 0.5, 2});
  const Config c = parse(model + "loss: {type: bce, pos_weight: 3}\n");
  CHECK(c.loss.pos_weight == std::vector<double>{3});
  const Config d = parse(model + "loss: {type: bce, pos_weight: [1, 2, 3]}\n");
  for (const Config* x : {&a, &b, &c, &d}) {
    const std::string text = to_yaml(*x);
    INFO(text);
    CHECK(to_yaml(parse_config(text, "again")) == text);
    CHECK(config_differences(parse_config(text, "again"), *x).empty());
  }
  CHECK(to_yaml(a).find("class_weights: balanced") != std::string::npos);
  CHECK(to_yaml(parse(model)).find("class_weights") == std::string::npos);  // unweighted runs write nothing new
  CHECK_HAS(error_of(model + "loss: {type: cross_entropy, class_weights: [1, 2]}\n"), "one weight per class");
  CHECK_HAS(error_of(model + "loss: {type: cross_entropy, class_weights: [0, 0, 0]}\n"), "at least one weight > 0");
  CHECK_HAS(error_of(model + "loss: {type: cross_entropy, class_weights: [1, -1, 0]}\n"), ">= 0");
  CHECK_HAS(error_of(model + "loss: {type: cross_entropy, class_weights: heavy}\n"), "balanced");
  CHECK_HAS(error_of(model + "loss: {type: mse, class_weights: balanced}\n"), "class_weights");
  CHECK_HAS(error_of(model + "loss: {type: cross_entropy, pos_weight: 2}\n"), "pos_weight");
  CHECK_HAS(error_of(model + "loss: {type: bce, pos_weight: [1, 2]}\n"), "one per output");
}
