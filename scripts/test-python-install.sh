#!/usr/bin/env bash
# `pip install .` as a user runs it, into a fresh venv (build-pip/venv, with Debian's numpy,
# h5py, scikit-learn and pytest from the system site packages), then the Python package's tests
# (python/tests/) against the installed package rather than the build tree's. The build
# backend's packages (scikit-build-core, nanobind) are installed first at the versions
# scripts/requirements-test.txt pins (PyPI), and the build uses them (no build isolation).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/build-pip/venv"
rm -rf "$VENV"
/usr/bin/python3 -m venv --system-site-packages "$VENV"
"$VENV/bin/pip" install --quiet $(grep -E '^(nanobind|scikit-build-core)==' scripts/requirements-test.txt)
CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$VENV/bin/pip" install --no-build-isolation --no-deps "$ROOT"
cd /tmp  # away from the checkout: `import turbaswarm` must find the installed package
TURBANET_SOURCE_DIR="$ROOT" TURBANET_BINARY="$ROOT/build/turbanet" \
  "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$ROOT/python/tests"
