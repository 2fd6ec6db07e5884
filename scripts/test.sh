#!/usr/bin/env bash
# Installs what is missing, builds, and runs the doctest suite (ctest, build/). With --full it
# then runs the same suite built with ASan+UBSan (scripts/test-sanitizers.sh, build-asan/), a
# fixed seed and input count of libFuzzer per input reader (scripts/fuzz.sh ci, build-fuzz/),
# and the CPU kernel tests cross-compiled for aarch64 and run under qemu
# (scripts/test-aarch64.sh, build-aarch64/) when the time budget allows. CI runs --full (.ci/run).
#
#   scripts/test.sh           # build and the doctest suite
#   scripts/test.sh --full    # everything (about 45 minutes on 2 cores from a fresh checkout)
#
# Further arguments go to the suite's ctest run (e.g. -R lanes).
# Environment: TURBANET_TEST_BUDGET_MIN (default 90, CI's limit): the aarch64 step runs only
# if the steps before it left it AARCH64_MIN minutes of that budget, and says SKIPPED if not;
# TURBANET_AARCH64=0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
case "${1:-}" in
  --full) full=1; shift ;;
  --quick) shift ;;   # the default; kept so older command lines still work
esac
scripts/install-deps.sh
scripts/install-test-venv.sh   # onnxruntime for the export tests (PyPI)
# CI (--full) fails on any compiler warning in the main build; a plain run only shows them.
if ((full)); then scripts/build.sh -DTURBANET_WERROR=ON; else scripts/build.sh -DTURBANET_WERROR=OFF; fi
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
if ((!full)); then exit 0; fi
echo "=== the suite under ASan+UBSan ==="
scripts/test-sanitizers.sh "$@"
echo "=== fuzzing every input reader: a fixed seed and input count each (1 to 2 minutes) ==="
scripts/fuzz.sh ci
# Measured on 2 busy cores: 5.3 minutes with its packages present (2 build, 3.2 test), 0.6 more
# to install them; 15 leaves room for a slow mirror and a slower machine.
AARCH64_MIN=15
budget_min="${TURBANET_TEST_BUDGET_MIN:-90}"
if [ "${TURBANET_AARCH64:-1}" = "0" ]; then
  echo "=== aarch64 kernel tests SKIPPED: TURBANET_AARCH64=0 ==="
elif ((SECONDS / 60 + AARCH64_MIN > budget_min)); then
  echo "=== aarch64 kernel tests SKIPPED: $((SECONDS / 60)) of ${budget_min} minutes used, they need up to ${AARCH64_MIN} ==="
else
  echo "=== the CPU kernel tests on aarch64 (cross-compiled, under qemu-user) ==="
  scripts/test-aarch64.sh
fi
