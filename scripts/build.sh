#!/usr/bin/env bash
# Configures and builds turbanet (Release) into build/. Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/configure.sh build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$(nproc)"
