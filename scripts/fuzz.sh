#!/usr/bin/env bash
# Fuzzes every input reader: builds the libFuzzer harnesses of tests/fuzz/ with clang 14 and
# ASan+UBSan into build-fuzz/ and runs each for SECONDS_PER_HARNESS (default 60) on a copy of
# its seed corpus (tests/fuzz/corpus/<harness>/) plus its recorded crashes
# (tests/fuzz/regressions/<harness>/). Prints libFuzzer's final statistics per harness and
# exits non-zero when any harness finds a crash, a sanitizer report, an unexpected exception,
# a timeout or a memory blow-up; the input that caused it is kept in build-fuzz/findings/.
#
#   scripts/fuzz.sh          # 60 s per harness
#   scripts/fuzz.sh 3600     # a long run: an hour per harness
#   scripts/fuzz.sh ci       # what scripts/test.sh --full (CI) runs: seed 1 and a fixed number of
#                            # inputs per harness (1 to 2 minutes each on 2 cores)
#
# CI fuzzes by input count, not by time: with a fixed seed and count libFuzzer tries the same
# inputs on every machine however loaded it is, so a CI result depends on the change, not on
# chance or the machine's speed, and `scripts/fuzz.sh ci` here shows what CI will find.
# (A timed run stops after however many inputs the machine managed, so the same seed explored
# further on a faster machine.) The count is capped at 240 s per harness, which only a machine
# several times slower than CI's reaches; the summary says so when it does.
#
# Environment: FUZZ_HARNESSES="csv npy" runs only those; FUZZ_ARGS adds libFuzzer flags;
# FUZZ_SEED fixes libFuzzer's random seed for a timed run. Without it every timed run explores
# anew: do such runs, long ones, after changing a reader.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_HARNESS="${1:-60}"
HARNESSES=(${FUZZ_HARNESSES:-config csv npy idx run_file})
# Inputs per harness in ci mode: 60 to 130 s each at the rates measured on 2 cores (config
# 1800-3800/s, csv 1000-1900/s, npy 350-530/s, idx 105-150/s, run_file 9-20/s: each input is
# sealed again, so HDF5 parses it, in a child process first).
declare -A CI_RUNS=([config]=200000 [csv]=100000 [npy]=30000 [idx]=9000 [run_file]=1200)
ci=0
if [ "$SECONDS_PER_HARNESS" = "ci" ]; then
  ci=1
  SECONDS_PER_HARNESS=240
  FUZZ_SEED=1
fi

# clang 14 with libFuzzer and the sanitizer runtimes (libclang-rt-14-dev) and its OpenMP
# runtime (the project needs OpenMP), installed only when missing. The project's own libraries
# come from install-deps.sh.
scripts/install-deps.sh
PACKAGES=(clang-14 libclang-rt-14-dev libomp-14-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "fuzz: installing ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DTURBANET_FUZZ=ON -DTURBANET_TESTS=OFF -DTURBANET_CUDA=OFF -DTURBANET_MPI=OFF >/dev/null
targets=()
for h in "${HARNESSES[@]}"; do targets+=("fuzz_$h"); done
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"

# Scratch space: the growing corpora and the readers' temporary files; the repository's
# corpus is only read.
scratch="$(mktemp -d "${TMPDIR:-/tmp}/turbanet-fuzz.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
root="$PWD"
findings_dir="$root/build-fuzz/findings"
failed=()
summary=()
for h in "${HARNESSES[@]}"; do
  work="$scratch/$h"
  rm -rf "$findings_dir/$h"  # findings of an earlier run
  mkdir -p "$work/corpus" "$work/tmp" "$work/artifacts"
  cp tests/fuzz/corpus/"$h"/* "$work/corpus/"
  # The recorded crashes (a harness without any has no directory in git). Those that hung a
  # reader (timeout-*) are run once, not mutated: the run-file reader stops HDF5 only after
  # 5 s in its child process, most of their mutants hang too, and a child's coverage never
  # reaches the fuzzer (such mutants made the run_file harness 5 times slower).
  mkdir -p "$work/regressions" "$work/once"
  cp tests/fuzz/regressions/"$h"/* "$work/regressions/" 2>/dev/null || true
  mv "$work/regressions"/timeout-* "$work/once/" 2>/dev/null || true
  budget=(-max_total_time="$SECONDS_PER_HARNESS")
  if ((ci)); then budget+=(-runs="${CI_RUNS[$h]}"); fi
  # A harness's dictionary (tokens libFuzzer inserts), when it has one: tests/fuzz/<harness>.dict.
  if [ -f "tests/fuzz/$h.dict" ]; then budget+=(-dict="$root/tests/fuzz/$h.dict"); fi
  echo "=== fuzz_$h: ${budget[*]}, seeds: $(ls tests/fuzz/corpus/"$h" | wc -l) ==="
  # -timeout: one input may take at most 30 s (the run-file reader alone allows a file 5 s in
  # its child process). -rss_limit_mb: 4 GB, also the largest single allocation.
  fuzz() {
    (cd "$work" && TMPDIR="$work/tmp" ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
      LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0" \
      UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
      "$root/build-fuzz/fuzz_$h" -timeout=30 -rss_limit_mb=4096 -artifact_prefix="$work/artifacts/" "$@")
  }
  status=0
  if ls "$work/once"/* >/dev/null 2>&1; then fuzz "$work/once"/* >"$work/once.log" 2>&1 || status=$?; fi
  # shellcheck disable=SC2086  # FUZZ_ARGS: several flags
  fuzz "${budget[@]}" -print_final_stats=1 ${FUZZ_SEED:+-seed=$FUZZ_SEED} ${FUZZ_ARGS:-} corpus regressions \
    >"$work/log" 2>&1 || status=$?
  grep -v "^#[0-9]" "$work/log" | tail -n 60 || true
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)"
  added="$(sed -n 's/^stat::new_units_added: *//p' "$work/log" | tail -n 1)"
  cov="$(grep -o 'cov: [0-9]*' "$work/log" | tail -n 1 | cut -d' ' -f2)"
  # Inputs on which HDF5 crashed inside the run-file reader's child process (see
  # tests/fuzz/fuzz_main.cpp): each became exit 2 in the parent, as intended.
  guarded="$(find "$work/tmp" -maxdepth 1 -name 'child-report.*' | wc -l)"
  result="ok"
  if ((ci)) && [ "${execs:-0}" -lt "${CI_RUNS[$h]}" ]; then
    result="ok (stopped at ${SECONDS_PER_HARNESS} s before ${CI_RUNS[$h]} inputs: CI explores further)"
  fi
  if ((status != 0)) || ls "$work/artifacts"/* >/dev/null 2>&1; then
    result="FINDING (exit $status)"
    failed+=("$h")
    mkdir -p "$findings_dir/$h"
    cp "$work/artifacts"/* "$findings_dir/$h/" 2>/dev/null || true
    cp "$work/log" "$findings_dir/$h/fuzz.log"
    cp "$work/once.log" "$findings_dir/$h/" 2>/dev/null || true
    echo "fuzz_$h: FINDING; input and log in build-fuzz/findings/$h/. Keep the input in"
    echo "  tests/fuzz/regressions/$h/ (replayed by the doctest suite) and fix the reader."
  fi
  summary+=("$(printf '%-9s %10s execs %7s/s  cov %5s  +%-5s corpus  %4s guarded HDF5 crashes  %s' "$h" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${added:-?}" "$guarded" "$result")")
done

echo "=== fuzz summary ($( ((ci)) && echo "fixed input counts, seed 1" || echo "${SECONDS_PER_HARNESS} s per harness, seed ${FUZZ_SEED:-random}")) ==="
printf '%s\n' "${summary[@]}"
if ((${#failed[@]} > 0)); then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
