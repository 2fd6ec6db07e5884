#!/usr/bin/env bash
# Tests the CPU kernels on aarch64 without an Arm machine: cross-compiles them and their unit
# tests (TURBANET_KERNELS_ONLY, cmake/kernel_tests.cmake) with Debian's g++-aarch64-linux-gnu
# into build-aarch64/ and runs them under qemu-user, which emulates NEON and the FPCR
# flush-to-zero bit. Every kernel test runs on both aarch64 targets, neon and generic. Installs
# what is missing (the cross compiler, qemu-user and the arm64 libraries the kernels link,
# through Debian multiarch). Exits non-zero when a test fails; prints doctest's summary.
#
#   scripts/test-aarch64.sh              # every kernel test (what scripts/test.sh --full runs)
#   scripts/test-aarch64.sh -tc='*gemm*' # extra arguments go to the doctest executable
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "test-aarch64: adding the arm64 architecture to dpkg (multiarch)"
  $SUDO dpkg --add-architecture arm64
fi
PACKAGES=(
  g++-aarch64-linux-gnu        # the cross compiler
  qemu-user                    # runs the aarch64 test executable here
  libhwy-dev:arm64             # SIMD targets and dispatch
  libopenblas-openmp-dev:arm64 # large GEMMs (the OpenMP build, as on x86-64)
  libspdlog-dev:arm64 libfmt-dev:arm64  # logging
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "test-aarch64: installing ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Release, the flags of the binary users run: a NEON miscompile at -O3 must show here.
start=$SECONDS
cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DTURBANET_KERNELS_ONLY=ON -DTURBANET_MPI=OFF \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-aarch64 -j"$(nproc)"
built=$SECONDS

# qemu-aarch64 runs the arm64 dynamic loader and libraries multiarch installed
# (/lib/ld-linux-aarch64.so.1, /usr/lib/aarch64-linux-gnu).
echo "=== the CPU kernel tests on aarch64 under $(qemu-aarch64 --version | head -n 1) ==="
status=0
qemu-aarch64 build-aarch64/turbanet_kernel_tests "$@" || status=$?
echo "test-aarch64: built in $((built - start)) s, tests ran in $((SECONDS - built)) s under qemu"
exit "$status"
