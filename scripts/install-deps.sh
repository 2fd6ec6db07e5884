#!/usr/bin/env bash
# Installs the Debian packages turbanet needs to build and test (idempotent: installs only
# what is missing). Runs apt-get as root, or through sudo.
set -euo pipefail
PACKAGES=(
  build-essential cmake pkg-config   # compiler and build system
  libcli11-dev                       # command-line parsing
  libyaml-cpp-dev                    # configuration files
  libspdlog-dev libfmt-dev           # logging and formatting
  nlohmann-json3-dev                 # eval --json output; the tests read the metric fixture
  doctest-dev                        # unit tests
  libhdf5-dev zlib1g-dev             # run files (HDF5), gzip data files
  libdeflate-dev                     # fast deflate of run-file chunks (same format as zlib)
  libopenblas-openmp-dev             # large per-member GEMMs (one thread per call: the threads are ours)
  libcsv-dev                         # CSV parsing (RFC 4180 quoting)
  libhwy-dev                         # SIMD kernels compiled per CPU target, chosen at run time
  libonnx-dev libprotobuf-dev        # export --format onnx: the ONNX project's protobuf classes
  libzip-dev                         # export --format npz: NumPy archives are zip files
  protobuf-compiler                  # train.tensorboard: protoc compiles proto/tensorboard/*.proto at build time
  libboost-dev                       # train.tensorboard: CRC-32C of the event files' records (Boost.CRC, header-only)
  libopenmpi-dev openmpi-bin         # mpirun -np P turbanet train: ranks train shards of the swarm
  python3-venv                       # the export tests' onnxruntime environment (scripts/install-test-venv.sh)
  python3-torch                      # the export tests load a member with scripts/to_torch.py
  python3 python3-h5py python3-numpy # the tests check that h5py reads run files
  python3-sklearn                    # stratified split counts are checked against train_test_split
  python3-statsmodels                # scripts/forecast_macro.py: real quarterly series (macrodata)
  python3-yaml                       # scripts/check_member.py reads /config
  python3-matplotlib                 # scripts/plot_sweep.py draws sweep timings
  chromium chromium-driver           # the report tests open each report in headless Chromium (scripts/check_report.py)
  python3-selenium python3-pil       # ... driven through Selenium; Pillow decodes the section screenshots
  python3-dev                        # the Python package's extension module (Python.h; python/, pyproject.toml)
  python3-pytest                     # the Python package's tests (python/tests/, the ctest python_package)
  dataset-fashion-mnist              # real data: configs/fashion-mnist-*.yaml and its test
  help2man                           # man pages from the --help texts, made at build time
  zsh fish                           # the tests check the zsh and fish completion scripts parse
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
