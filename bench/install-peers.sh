#!/usr/bin/env bash
# Installs what bench/compare.py and bench/peers/ need; idempotent (installs only what is
# missing, so a second run changes nothing and needs no network).
#   - Debian packages: PyTorch 1.13 (the two PyTorch peers), matplotlib (the plot), h5py and
#     NumPy (run files), venv (the JAX peer's environment), the Fashion-MNIST data (W3).
#   - bench/.venv-peers: the original TurbaNet library (PyPI turbanet==0.3.1) with JAX, Flax
#     and Optax at the versions pinned in bench/peers/requirements-jax.txt.
# turbanet 0.3.1's wheel declares Requires-Python >=3.12 but uses no 3.12 syntax or API; on
# Debian 12's Python 3.11 it is installed unmodified with --ignore-requires-python --no-deps
# (its one dependency, flax, comes from the requirements file).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${PEERS_VENV:-$HERE/.venv-peers}"   # PEERS_VENV: another place, e.g. to test this script
PY=/usr/bin/python3
PACKAGES=(
  python3 python3-numpy python3-h5py   # run files
  python3-torch                        # peers pytorch-loop and pytorch-vmap (PyTorch 1.13)
  python3-matplotlib                   # compare.png
  python3-venv                         # bench/.venv-peers for the JAX peer
  dataset-fashion-mnist                # W3's data
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-peers: all ${#PACKAGES[@]} Debian packages present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "install-peers: installing ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The JAX peer's environment: checked by importing the pinned versions.
check='
import importlib.metadata as m, sys
want = {"turbanet": "0.3.1", "jax": "0.10.2", "jaxlib": "0.10.2", "flax": "0.12.8", "optax": "0.2.8"}
bad = {k: v for k, v in want.items() if m.version(k) != v}
import turbanet, jax, flax, optax, h5py  # noqa
sys.exit(1 if bad else 0)
'
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "$check" 2>/dev/null; then
  echo "install-peers: $VENV has turbanet 0.3.1, jax 0.10.2, flax 0.12.8, optax 0.2.8"
  exit 0
fi
echo "install-peers: setting up $VENV"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -r "$HERE/peers/requirements-jax.txt"
"$VENV/bin/python" -m pip install --quiet --no-deps --ignore-requires-python turbanet==0.3.1
"$VENV/bin/python" -c "$check"
echo "install-peers: $VENV ready"
