// Host memory available to this process, and sizes in messages (util/host_memory.h).
#include "util/host_memory.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace tn {

std::string format_bytes(std::int64_t bytes) {
  if (bytes == std::numeric_limits<std::int64_t>::max()) return "more than 8 EiB";
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= (1ll << 50)) std::snprintf(buf, sizeof buf, "%.1f PiB", b / static_cast<double>(1ll << 50));
  else if (bytes >= (1ll << 40)) std::snprintf(buf, sizeof buf, "%.1f TiB", b / static_cast<double>(1ll << 40));
  else if (bytes >= (1ll << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1ll << 30));
  else if (bytes >= (1ll << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1ll << 20));
  else if (bytes >= (1ll << 10)) std::snprintf(buf, sizeof buf, "%.1f KiB", b / (1ll << 10));
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

namespace {
std::atomic<std::int64_t> g_available_override{-1};  // -1: read /proc/meminfo
}  // namespace

std::uint64_t available_memory() {
  if (const std::int64_t o = g_available_override.load(); o >= 0) return static_cast<std::uint64_t>(o);
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB") return kib * 1024;
    return 0;
  }
  return 0;
}

void override_available_memory(std::optional<std::uint64_t> bytes) {
  constexpr std::uint64_t kMost = std::numeric_limits<std::int64_t>::max();
  g_available_override.store(bytes ? static_cast<std::int64_t>(std::min(*bytes, kMost)) : -1);
}

}  // namespace tn
