// Shards of a swarm: parsing k/K, the balanced member blocks, and the shard's config.
#include "run/shard.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <set>
#include <vector>

#include "io/run_file.h"
#include "run/errors.h"

namespace tn {
namespace {

bool whole(std::string_view s, int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty() && s.front() != '-' && s.front() != '+';
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  Shard s;
  if (slash == std::string::npos || !whole(std::string_view(text).substr(0, slash), s.index) ||
      !whole(std::string_view(text).substr(slash + 1), s.count) || s.count < 1 || s.index >= s.count)
    throw UsageError("--shard: expected k/K with whole numbers 0 <= k < K (shard k of K, counted from 0, as "
                     "SLURM_ARRAY_TASK_ID with --array=0-(K-1)), got '" + text + "'");
  return s;
}

std::pair<int, int> shard_block(const MemberSets& sets, int S, Shard shard) {
  if (shard.count > S)
    throw ConfigError("--shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) + ": the swarm has " +
                      std::to_string(S) + " members, fewer than " + std::to_string(shard.count) +
                      " shards; use at most " + std::to_string(S) + " shards");
  // Prefix sums of the members' work; block k ends at the first member whose prefix reaches
  // (k + 1)/K of the total, keeping at least one member for every block before and after.
  std::vector<std::uint64_t> prefix(static_cast<std::size_t>(S) + 1, 0);
  for (int s = 0; s < S; ++s) prefix[s + 1] = prefix[s] + std::max<std::uint32_t>(1, sets.size(s));
  const auto boundary = [&](int k) {
    if (k <= 0) return 0;
    if (k >= shard.count) return S;
    const std::uint64_t target = prefix[S] * static_cast<std::uint64_t>(k) / static_cast<std::uint64_t>(shard.count);
    int m = 0;
    while (m < S && prefix[m] < target) ++m;
    return std::clamp(m, k, S - (shard.count - k));  // room for one member per block
  };
  return {boundary(shard.index), boundary(shard.index + 1)};
}

void set_shard_paths(Config& cfg, Shard shard) {
  if (!shard.enabled()) return;
  const bool default_checkpoint = cfg.train.checkpoint.path == default_checkpoint_path(cfg.output.path);
  cfg.output.path = shard_output_path(cfg.output.path, shard);
  cfg.train.checkpoint.path = default_checkpoint ? default_checkpoint_path(cfg.output.path)
                                                 : shard_output_path(cfg.train.checkpoint.path, shard);
}

std::pair<int, int> restrict_to_shard(Config& cfg, MemberSets& sets, Shard shard) {
  if (!shard.enabled()) return {0, cfg.swarm.size};
  const auto [m0, m1] = shard_block(sets, cfg.swarm.size, shard);
  sets = slice_member_sets(sets, m0, m1);
  cfg = sub_swarm(cfg, m0, m1);
  return {m0, m1};
}

std::string shard_output_path(const std::string& output, Shard shard) {
  return run_file_stem(output) + ".shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count) + ".h5";
}

Config shard_paths(const Config& whole, Shard shard) {
  Config c = whole;
  set_shard_paths(c, shard);
  return c;
}

std::set<int> job_shard_counts(const Config& whole) {
  namespace fs = std::filesystem;
  // Shard counts K named by files that are this run's shard k of K (its run file or checkpoint).
  std::set<int> counts;
  const std::regex named(R"(\.shard-([0-9]{1,7})-of-([0-9]{1,7})\.)");
  for (const std::string& p : {whole.output.path, whole.train.checkpoint.path}) {
    const fs::path dir = fs::path(p).parent_path().empty() ? fs::path(".") : fs::path(p).parent_path();
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::smatch m;
      if (!std::regex_search(name, m, named)) continue;
      const Shard s{std::stoi(m[1]), std::stoi(m[2])};
      if (s.index >= s.count) continue;
      const Config c = shard_paths(whole, s);
      if (fs::path(c.output.path).filename() == name || fs::path(c.train.checkpoint.path).filename() == name)
        counts.insert(s.count);
    }
  }
  return counts;
}

std::vector<ShardProgress> job_shards(const Config& whole, int rank, int ranks) {
  namespace fs = std::filesystem;
  const std::set<int> counts = job_shard_counts(whole);
  if (counts.empty())
    throw UsageError("no such file, and no shard of a job writing '" + whole.output.path + "' is there (" +
                     shard_output_path(whole.output.path, Shard{0, 2}) + " and the like, or their checkpoints); "
                     "name a checkpoint or interrupted run file to resume one process's run");
  if (counts.size() > 1) {
    std::string ks;
    for (int K : counts) ks += (ks.empty() ? "" : ", ") + std::to_string(K);
    throw UsageError("shards of jobs of " + ks + " shards write '" + whole.output.path +
                     "'; remove the files of the jobs that are not to be resumed");
  }
  const int K = *counts.begin();
  std::vector<ShardProgress> progress;
  for (int k = 0; k < K; ++k) {
    ShardProgress p{Shard{k, K}, false, ""};
    progress.push_back(p);
    if (k % ranks != rank) continue;
    const Config c = shard_paths(whole, p.shard);
    const std::string &out = c.output.path, &ck = c.train.checkpoint.path;
    bool extend = false;
    if (fs::exists(out)) {
      const RunHead h = read_run_head(out);
      const bool finished = !h.meta.interrupted && h.meta.shard_index == k && h.meta.shard_count == K;
      const int trained_for = finished ? parse_stored_config(h.config_yaml, out).train.epochs : 0;
      extend = finished && trained_for != whole.train.epochs;
      if (extend && !fs::exists(ck))
        throw UsageError("shard " + std::to_string(k) + " of " + std::to_string(K) + " ('" + out + "') finished its " +
                         std::to_string(trained_for) + " epochs and has no checkpoint to continue from to " +
                         std::to_string(whole.train.epochs) + "; keep train.epochs at " + std::to_string(trained_for) +
                         " (a run is extended from the checkpoint train.checkpoint.every_epochs writes)");
      progress.back().done = finished && !extend;
      if (h.meta.interrupted) progress.back().resume_from = out;
    }
    if (!progress.back().done && fs::exists(ck)) progress.back().resume_from = ck;  // written with the run file, or later
  }
  return progress;
}

}  // namespace tn
