#!/usr/bin/env bash
# One command for a newcomer: install what is missing, build, and train the demo swarm on
# built-in data (configs/spirals.yaml -> runs/spirals.h5).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build/turbanet train configs/spirals.yaml --force "$@"
