// Stratified splits and stratified bootstrap: per-class counts against scikit-learn's
// train_test_split(stratify=y), and per-member draws that stay within each class.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "python_test_util.h"
#include "train/trainer.h"
#include "train_test_util.h"

using namespace tn;

namespace {

// Labels: counts[k] samples of class k, interleaved (row i has class i % K until a class runs out).
Dataset classes(const std::vector<int>& counts) {
  Dataset d;
  d.features = 1;
  d.num_classes = static_cast<int>(counts.size());
  d.origin = "classes";
  std::vector<int> left = counts;
  for (bool any = true; any;) {
    any = false;
    for (std::size_t k = 0; k < counts.size(); ++k)
      if (left[k] > 0) {
        --left[k];
        any = true;
        d.X.push_back(static_cast<float>(d.n));
        d.y.push_back(static_cast<float>(k));
        ++d.n;
      }
  }
  return d;
}

std::vector<int> per_class(const SplitData& s, int K) {
  std::vector<int> c(K, 0);
  for (float y : s.y) ++c[static_cast<int>(y)];
  return c;
}

std::string joined(const std::vector<int>& v, const char* sep = " ") {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
  return s;
}

// Per-class counts of train, val and test from scikit-learn for each case (class counts, n_val,
// n_test): test split off first (test_size = n_test), then val from the rest (test_size =
// n_val); "train\nval\ntest\n" per case. One Python process for all (importing scikit-learn
// takes seconds).
struct SplitCase {
  std::vector<int> counts;
  int n_val, n_test;
};
std::vector<std::string> sklearn_counts(const std::string& py, const std::vector<SplitCase>& cases) {
  std::ostringstream s;
  s << py << " -c '\n"
    << "import numpy as np\nfrom sklearn.model_selection import train_test_split\n"
    << "def counts(cs, n_val, n_test):\n"
    << "  y = np.concatenate([np.full(c, k) for k, c in enumerate(cs)])\n"
    << "  c = lambda a: \" \".join(str(int((a == k).sum())) for k in range(len(cs)))\n"
    << "  rest = y\n"
    << "  if n_test: rest, te = train_test_split(y, test_size=n_test, stratify=y, random_state=0)\n"
    << "  else: te = y[:0]\n"
    << "  if n_val: tr, va = train_test_split(rest, test_size=n_val, stratify=rest, random_state=0)\n"
    << "  else: tr, va = rest, rest[:0]\n"
    << "  print(c(tr)); print(c(va)); print(c(te)); print(\"--\")\n";
  for (const SplitCase& c : cases) s << "counts([" << joined(c.counts, ",") << "], " << c.n_val << ", " << c.n_test << ")\n";
  s << "'";
  const std::string out = test::run_command(s.str() + " 2>&1");
  std::vector<std::string> blocks(1);
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line == "--") blocks.emplace_back();
    else blocks.back() += line + "\n";
  }
  blocks.pop_back();  // after the last "--"
  return blocks;
}

}  // namespace

TEST_CASE("stratified splits have scikit-learn's per-class counts") {
  const std::string py = test::python_with_sklearn();
  if (py.empty()) {
    MESSAGE("skipped: no python3 with scikit-learn (apt-get install python3-sklearn)");
    return;
  }
  struct Case {
    std::vector<int> counts;
    double val, test;
  };
  // (Cases without ties between the classes' remainders, which scikit-learn breaks at random.)
  const std::vector<Case> cases = {Case{{53, 29, 15, 3}, 0.15, 0.2}, Case{{47, 33, 13, 7}, 0.15, 0.2},
                                   Case{{61, 39}, 0.0, 0.25},         Case{{70, 20, 10}, 0.1, 0.0},
                                   Case{{333, 101, 47, 19}, 0.2, 0.1}, Case{{12, 9, 8}, 0.2, 0.3}};
  std::vector<std::string> ours;
  std::vector<SplitCase> asked;
  for (const Case& c : cases) {
    DataConfig cfg;
    cfg.split = {1 - c.val - c.test, c.val, c.test, 7, true};
    const Dataset d = classes(c.counts);
    const PreparedData p = prepare_data(d, cfg);
    const int K = static_cast<int>(c.counts.size());
    ours.push_back(joined(per_class(p.train, K)) + "\n" + joined(per_class(p.val, K)) + "\n" +
                   joined(per_class(p.test, K)) + "\n");
    asked.push_back({c.counts, p.val.n, p.test.n});
    // Every sample lands in exactly one split, and each split keeps file order.
    std::vector<int> seen(d.n, 0);
    for (const SplitData* s : {&p.train, &p.val, &p.test}) {
      for (std::size_t i = 0; i < s->rows.size(); ++i) {
        ++seen[s->rows[i]];
        if (i) CHECK(s->rows[i - 1] < s->rows[i]);
        CHECK(s->y[i] == d.y[s->rows[i]]);
      }
    }
    CHECK(std::count(seen.begin(), seen.end(), 1) == d.n);
  }
  const std::vector<std::string> theirs = sklearn_counts(py, asked);
  REQUIRE(theirs.size() == cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k) {
    INFO("classes " << joined(cases[k].counts) << ", val " << cases[k].val << ", test " << cases[k].test);
    CHECK(ours[k] == theirs[k]);
  }
}

TEST_CASE("a stratified split depends on the split seed and needs class labels") {
  DataConfig cfg;
  cfg.split = {0.6, 0.2, 0.2, 1, true};
  const PreparedData a = prepare_data(classes({40, 20}), cfg);
  cfg.split.seed = 2;
  const PreparedData b = prepare_data(classes({40, 20}), cfg);
  CHECK(per_class(a.test, 2) == per_class(b.test, 2));
  CHECK(per_class(a.test, 2) == std::vector<int>{8, 4});
  CHECK(a.test.rows != b.test.rows);
  Dataset regression = classes({10, 10});
  regression.num_classes = 0;
  CHECK_THROWS_WITH_AS(prepare_data(regression, cfg), doctest::Contains("data.split.stratify"), DataError);
}

TEST_CASE("stratify is refused for regression losses and sequence data") {
  const std::string base = "model: {layers: [{units: 1}]}\nloss: mse\ndata:\n  source: {type: sine, n: 50}\n";
  CHECK_THROWS_WITH_AS(parse_config(base + "  split: {train: 0.8, test: 0.2, stratify: true}\n", "c.yaml"),
                       doctest::Contains("c.yaml:5"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_config(base + "  per_member: {bootstrap: {stratify: true}}\n", "c.yaml"),
                       doctest::Contains("data.per_member.bootstrap.stratify"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_config(base + "  per_member: {subsample: {stratify: true}}\n", "c.yaml"),
                       doctest::Contains("only applies to bootstrap"), ConfigError);
  const Config c = parse_config(
      "model: {layers: [{units: 2}]}\nloss: cross_entropy\ndata:\n  source: {type: spirals, n: 50}\n"
      "  split: {train: 0.8, test: 0.2, stratify: true}\n  per_member: {bootstrap: {stratify: true}}\n",
      "c.yaml");
  CHECK(c.data.split.stratify);
  CHECK(c.data.bootstrap_stratify);
  CHECK(parse_config(to_yaml(c), "again").data.bootstrap_stratify);
  CHECK(parse_config(to_yaml(c), "again").data.split.stratify);
}

TEST_CASE("stratified bootstrap: each member draws round(fraction * n_c) of every class, independent of the swarm") {
  Config c = parse_config("seed: 3\nswarm: {size: 4}\nmodel: {layers: [{units: 4, activation: tanh}, {units: 2}]}\n"
                          "data:\n  source: {type: spirals, n: 60}\n  per_member: {bootstrap: {fraction: 0.5, stratify: true}}\n"
                          "train: {epochs: 3, batch_size: 8}\n",
                          "c.yaml");
  const PreparedData data = prepare_data(classes({40, 20}), c.data);
  const MemberSets sets = make_member_sets(c, data);
  REQUIRE(sets.mode == SampleMode::Sets);
  for (int s = 0; s < 4; ++s) {
    std::vector<int> count(2, 0);
    for (std::uint32_t i = sets.offset[s]; i < sets.offset[s + 1]; ++i) ++count[static_cast<int>(data.train.y[sets.rows[i]])];
    CHECK(count == std::vector<int>{20, 10});
  }
  CHECK(!std::equal(sets.rows.begin(), sets.rows.begin() + 30, sets.rows.begin() + 30));
  Config alone = c;
  alone.swarm = {1, 2, {}};
  const MemberSets one = make_member_sets(alone, data);
  CHECK(std::equal(one.rows.begin(), one.rows.end(), sets.rows.begin() + sets.offset[2]));
  // Member k trained alone equals member k in the swarm.
  CpuBackend be(2);
  const PreparedData spirals_data = prepare_data(load_dataset(c.data, true), c.data);
  const TrainOutput a = train_swarm(c, spirals_data, be, nullptr);
  const TrainOutput b = train_swarm(alone, spirals_data, be, nullptr);
  CHECK(test::member_params(a, 2) == test::member_params(b, 0));
}
