// The host memory this process may still allocate, and sizes in messages: shared by the
// checks that refuse work before it would exhaust memory (the training run's estimate in
// train/memory_plan.h, the one-hot width of categorical columns in data/encode.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace tn {

// Memory this process may still allocate: MemAvailable from /proc/meminfo in bytes, 0 when it
// cannot be read; or the value set by override_available_memory (tests).
std::uint64_t available_memory();
// Makes available_memory() return `bytes` (nullopt: read /proc/meminfo again).
void override_available_memory(std::optional<std::uint64_t> bytes);

// "1.5 GiB", "12.0 MiB", "512 B": sizes in messages ("more than 8 EiB" when saturated, i.e.
// at the largest std::int64_t, kSaturated of math/saturate.h).
std::string format_bytes(std::int64_t bytes);

}  // namespace tn
