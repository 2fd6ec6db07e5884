#!/usr/bin/env bash
# Makes .venv-test (or $TURBANET_TEST_VENV) with the Python packages of
# scripts/requirements-test.txt, from PyPI: what tests/test_export.cpp runs
# scripts/check_export.py with, tensorboard for scripts/check_tensorboard.py, and nanobind for the Python package's module. Idempotent: with the pinned versions present it changes nothing
# and needs no network. Needs python3-venv (scripts/install-deps.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${TURBANET_TEST_VENV:-$ROOT/.venv-test}"
REQ="$ROOT/scripts/requirements-test.txt"
check='
import importlib.metadata as m, sys
want = dict(l.split("==") for l in open(sys.argv[1]).read().split("\n") if l and not l.startswith("#"))
bad = {k: v for k, v in want.items() if m.version(k) != v}
import numpy, h5py, onnx, onnxruntime, optuna, nanobind, scikit_build_core, tensorboard  # noqa
sys.exit(1 if bad else 0)
'
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "$check" "$REQ" 2>/dev/null; then
  echo "install-test-venv: $VENV is ready"
  exit 0
fi
echo "install-test-venv: setting up $VENV"
[ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet -r "$REQ"
"$VENV/bin/python" -c "$check" "$REQ"
echo "install-test-venv: $VENV ready"
