// Real data end to end: the quick Fashion-MNIST ensemble (configs/fashion-mnist-quick.yaml)
// must reach 80% test accuracy, and the ensemble must do at least as well as its mean member.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "cli/commands/commands.h"
#include "io/run_file.h"

using namespace tn;
namespace fs = std::filesystem;

namespace {
double accuracy(const float* probs, const std::vector<float>& targets, int N, int O) {
  int right = 0;
  for (int i = 0; i < N; ++i) {
    int best = 0;
    for (int o = 1; o < O; ++o)
      if (probs[i * O + o] > probs[i * O + best]) best = o;
    right += best == static_cast<int>(targets[i]);
  }
  return static_cast<double>(right) / N;
}
}  // namespace

TEST_CASE("Fashion-MNIST quick ensemble reaches 80% test accuracy") {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    MESSAGE("SKIPPED: Debian's dataset-fashion-mnist is not installed (scripts/install-deps.sh installs it)");
    return;
  }
  const fs::path out = fs::temp_directory_path() / ("turbanet-fashion-" + std::to_string(::getpid()) + ".h5");
  TrainOptions o;
  o.config_path = std::string(TURBANET_SOURCE_DIR) + "/configs/fashion-mnist-quick.yaml";
  o.out = out.string();
  o.force = true;
  o.verbosity = Verbosity::Quiet;
  REQUIRE(run_train(o) == kExitOk);
  const RunFile r = read_run_file(out.string());
  fs::remove(out);
  const Predictions* found = r.find_predictions("test");
  REQUIRE(found != nullptr);
  const Predictions& p = *found;
  const int S = static_cast<int>(p.members.shape[0]), N = static_cast<int>(p.members.shape[1]),
            O = static_cast<int>(p.members.shape[2]);
  CHECK(N == 10000);
  double member_mean = 0;
  for (int s = 0; s < S; ++s) member_mean += accuracy(&p.members.data[static_cast<std::size_t>(s) * N * O], p.targets.data, N, O) / S;
  const double ensemble = accuracy(p.ensemble_mean.data.data(), p.targets.data, N, O);
  MESSAGE("Fashion-MNIST quick: member mean accuracy " << member_mean << ", ensemble " << ensemble);
  CHECK(ensemble >= 0.80);
  CHECK(ensemble >= member_mean - 0.005);
}
