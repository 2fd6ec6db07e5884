// GPU tests on a machine without a GPU: one visible line saying why, then the test passes
// without running (every test case whose name starts with "cuda" begins with this).
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "backend/device_choice.h"

inline bool skip_without_gpu() {
  static const std::string why = [] {
    std::string w;
    if (!tn::list_gpus(&w).empty()) return std::string();
    return w.empty() ? std::string("no reason given") : w;
  }();
  if (!why.empty()) MESSAGE("SKIPPED: no CUDA device (" << why << ")");
  return !why.empty();
}
