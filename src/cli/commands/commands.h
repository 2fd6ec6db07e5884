// Subcommands as ordinary functions taking typed options and returning the exit code, so
// tests call them without a shell. Exit codes: 0 success; 1 an I/O failure (run file not
// written); 2 a user error (bad config, data, arguments or device; nothing written);
// 3 training finished and was saved but some members diverged.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "util/log.h"

namespace tn {

inline constexpr int kExitOk = 0, kExitIo = 1, kExitUsage = 2, kExitDiverged = 3;

struct TrainOptions {
  std::string config_path;
  std::vector<std::string> set;  // "key.path=value" overrides, in order
  std::optional<std::string> out;
  std::optional<int> swarm;
  std::optional<long long> seed;
  int threads = 0;  // 0 = all cores
  bool force = false;
  Verbosity verbosity = Verbosity::Normal;
};

int run_train(const TrainOptions& opt);

}  // namespace tn
