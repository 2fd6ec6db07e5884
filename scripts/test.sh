#!/usr/bin/env bash
# Installs what is missing, builds, and runs the doctest suite and the Python package's pytest
# suite (ctest, build/; the module is built there with .venv-test's nanobind). With --full it
# then runs the same suite built with ASan+UBSan (scripts/test-sanitizers.sh, build-asan/), a
# fixed seed and input count of libFuzzer per input reader (scripts/fuzz.sh ci, build-fuzz/),
# and, when the time budget allows, the CPU kernel tests cross-compiled for aarch64 and run
# under qemu (scripts/test-aarch64.sh, build-aarch64/) and `pip install .` with the Python
# tests against the installed package (scripts/test-python-install.sh, build-pip/). CI runs
# --full (.ci/run).
#
#   scripts/test.sh           # build and the test suites (about 6 minutes from a fresh clone on 2 cores)
#   scripts/test.sh --full    # everything (aim: under 40 minutes on 2 cores from a fresh checkout; docs/install.md)
#
# Further arguments go to the suite's ctest run (e.g. -R lanes).
# Environment: TURBANET_TEST_BUDGET_MIN (default 90, CI's limit): the aarch64 step runs only if
# the steps before it left it the minutes it needs of that budget, the pip step only if they
# left it its minutes of TURBANET_TEST_AIM_MIN (default 40, the aim for the whole run); each
# says SKIPPED if not. TURBANET_AARCH64=0 and TURBANET_PIP=0 skip them, TURBANET_PIP=1 runs the
# pip step within the budget.
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
case "${1:-}" in
  --full) full=1; shift ;;
  --quick) shift ;;   # the default; kept so older command lines still work
esac
scripts/install-deps.sh
scripts/install-test-venv.sh   # onnxruntime for the export tests (PyPI)
# The Python package's module (python/, docs/python.md) is built in build/ with the venv's
# nanobind; its pytest suite is the ctest python_package.
venv="${TURBANET_TEST_VENV:-.venv-test}"
python_args=(-DTURBANET_PYTHON=ON "-DPython_EXECUTABLE=$(cd "$venv/bin" && pwd)/python")
# CI (--full) fails on any compiler warning in the main build; a plain run only shows them.
if ((full)); then scripts/build.sh -DTURBANET_WERROR=ON "${python_args[@]}"; else scripts/build.sh -DTURBANET_WERROR=OFF "${python_args[@]}"; fi
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
if ((!full)); then exit 0; fi
echo "=== the suite under ASan+UBSan ==="
scripts/test-sanitizers.sh "$@"
echo "=== fuzzing every input reader: a fixed seed and input count each (1 to 2 minutes) ==="
scripts/fuzz.sh ci
budget_min="${TURBANET_TEST_BUDGET_MIN:-90}"
# The whole run aims to stay under 40 minutes on 2 cores; a step that would take it past the
# aim runs only when asked for (its switch set to 1).
aim_min="${TURBANET_TEST_AIM_MIN:-40}"
# A step that runs only if the steps before it left it `minutes` of `limit` (the budget or the
# aim; else it says SKIPPED), and that the variable `switch` set to 0 skips and set to 1 runs
# within the budget: optional_step NAME MINUTES LIMIT SWITCH CMD...
optional_step() {
  local name="$1" minutes="$2" limit="$3" switch="$4"
  shift 4
  if [ "${!switch:-}" = "1" ]; then limit="$budget_min"; fi
  if [ "${!switch:-}" = "0" ]; then
    echo "=== ${name} SKIPPED: ${switch}=0 ==="
  elif ((SECONDS / 60 + minutes > limit)); then
    echo "=== ${name} SKIPPED: $((SECONDS / 60)) of ${limit} minutes used, it needs up to ${minutes}; ${switch}=1 runs it within ${budget_min} ==="
  else
    echo "=== ${name} ==="
    "$@"
  fi
}
# Measured on 2 busy cores: 5.3 minutes with its packages present (2 build, 3.2 test), 0.6 more
# to install them; 15 leaves room for a slow mirror and a slower machine.
optional_step "the CPU kernel tests on aarch64 (cross-compiled, under qemu-user)" 15 "$budget_min" TURBANET_AARCH64 \
  scripts/test-aarch64.sh
# `pip install .` compiles the whole core again (position-independent, in build-pip/; no ccache):
# minutes more (the core, as in the quick part's build), which the steps before leave only on a
# fast machine, so it runs within the 40-minute aim, or with TURBANET_PIP=1 within the budget. The package's code and tests run in
# every suite anyway (the ctest python_package, against build/'s module).
optional_step "pip install . into a fresh venv, and the Python tests against the installed package" 10 "$aim_min" \
  TURBANET_PIP scripts/test-python-install.sh
