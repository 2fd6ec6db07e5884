#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the doctest suite (ctest, build/),
# the same suite built with ASan+UBSan (scripts/test-sanitizers.sh, build-asan/), and 60 s of
# libFuzzer per input reader with a fixed seed (scripts/fuzz.sh, build-fuzz/). This is what CI
# runs (.ci/run).
#
#   scripts/test.sh           # everything (about 35 minutes on 2 cores from a fresh checkout)
#   scripts/test.sh --quick   # the doctest suite only (about 5 minutes)
#
# Further arguments go to the suite's ctest run (e.g. -R lanes).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
if ((quick)); then exit 0; fi
echo "=== the suite under ASan+UBSan ==="
scripts/test-sanitizers.sh "$@"
echo "=== fuzzing every input reader, 60 s each, fixed seed ==="
FUZZ_SEED=1 scripts/fuzz.sh 60
