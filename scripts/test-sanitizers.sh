#!/usr/bin/env bash
# Builds the whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer (gcc, into
# build-asan/, CPU only) and runs it. Every memory error, leak or undefined behaviour aborts the
# process that met it, so the test fails; the reports are kept in build-asan/reports/.
#
# One class of report is expected and not a failure: every run file is first parsed in a forked
# child process, because HDF5 1.10 itself overruns buffers on some damaged or crafted files
# (src/io/h5_file.cpp, read_in_child). The damaged-
# file tests feed it such files; the child's report names read_in_child and its death becomes
# exit 2 in the parent, which is what those tests check. Every other report fails this script.
#
#   scripts/test-sanitizers.sh            # every test
#   scripts/test-sanitizers.sh -R layers  # extra arguments go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTURBANET_SANITIZE=ON -DTURBANET_CUDA=OFF -DTURBANET_MPI=OFF >/dev/null
cmake --build build-asan -j"$(nproc)"

reports="$PWD/build-asan/reports"
rm -rf "$reports"
mkdir -p "$reports"
status=0
# tests/fuzz/lsan.supp: HDF5's own free lists, which it leaves behind on some damaged files
# (the fuzz regression inputs replayed by the suite include one).
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$reports/asan" \
  LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan" \
  ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "$@" || status=$?

guarded=0
unexpected=()
for r in "$reports"/*; do
  [ -e "$r" ] || continue
  if grep -q "read_in_child" "$r"; then
    guarded=$((guarded + 1))
  else
    unexpected+=("$r")
  fi
done
echo "sanitizers: $guarded report(s) from HDF5 inside the run-file reader's child process (expected)"
if ((${#unexpected[@]} > 0)); then
  echo "sanitizers: ${#unexpected[@]} unexpected report(s):" >&2
  for r in "${unexpected[@]}"; do
    echo "--- $r" >&2
    head -n 40 "$r" >&2
  done
  exit 1
fi
if ((status != 0)); then
  echo "sanitizers: tests failed (ctest exit $status)" >&2
  exit "$status"
fi
echo "sanitizers: every test passed under ASan+UBSan, no unexpected reports"
