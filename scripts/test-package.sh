#!/usr/bin/env bash
# Builds the .deb packages of a built tree with cpack and checks them as a user would meet them:
# apt resolves every dependency they name (`apt-get install --simulate`; packages installed on
# this machine count as resolved), and the files extracted from them (`dpkg-deb -x`, nothing
# installed) run `turbanet --version` and a tiny training with nothing else on PATH, find the
# CUDA module in their own lib/turbanet/, and carry the man pages and completion scripts.
# The ctest `package.deb` (label package) runs it on build/; about 20 s on 2 cores.
#
#   scripts/test-package.sh [BUILD_DIR]    # default build/
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
repo=$PWD
tmp=$(mktemp -d /tmp/turbanet-package.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-package: FAILED: $*" >&2; exit 1; }

(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log" >&2; fail "cpack"; }
debs=("$tmp"/out/turbanet_*.deb)
[ -f "${debs[0]}" ] || fail "cpack made no turbanet_*.deb: $(ls "$tmp/out")"
cuda_debs=("$tmp"/out/turbanet-cuda_*.deb)
echo "test-package: built $(cd "$tmp/out" && ls ./*.deb | tr '\n' ' ')"

depends=$(dpkg-deb -f "${debs[0]}" Depends)
echo "test-package: Depends: $depends"
for lib in libyaml-cpp libspdlog libfmt libopenblas0-openmp libhwy libc6; do
  [[ "$depends" == *"$lib"* ]] || fail "Depends names no $lib package: $depends"
done
[[ "$depends" != *cuda* && "$depends" != *cublas* ]] || fail "the main package depends on CUDA: $depends"

# Every dependency resolves (what is installed here counts as resolved).
apt-get install --simulate "${debs[0]}" >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log" >&2; fail "apt-get --simulate"; }
grep -q "^Inst turbanet " "$tmp/apt.log" || { cat "$tmp/apt.log" >&2; fail "apt would not install turbanet"; }

root="$tmp/root"
dpkg-deb -x "${debs[0]}" "$root"
if [ -f "${cuda_debs[0]:-}" ]; then dpkg-deb -x "${cuda_debs[0]}" "$root"; fi
files=(usr/bin/turbanet usr/share/bash-completion/completions/turbanet usr/share/zsh/vendor-completions/_turbanet
       usr/share/fish/vendor_completions.d/turbanet.fish)
# (a build without help2man has no man pages, and says so)
if [ -f "$build/man/turbanet.1" ]; then files+=(usr/share/man/man1/turbanet.1 usr/share/man/man1/turbanet-train.1); fi
for f in "${files[@]}"; do
  [ -f "$root/$f" ] || fail "the package has no /$f"
done

# The extracted binary on its own: an empty environment, its own directory as the only PATH.
run() { env -i HOME="$tmp" PATH="$root/usr/bin" "$@"; }
version=$(cd "$tmp" && run turbanet --version) || fail "turbanet --version"
echo "$version" | sed 's/^/test-package:   /'
[[ "$version" == "turbanet "* && "$version" == *"CPU targets built in: "* ]] || fail "--version: $version"
if [ -f "${cuda_debs[0]:-}" ]; then
  [[ "$version" == *"module $root/usr/lib/turbanet/libturbanet_cuda.so"* ]] ||
    fail "the extracted binary did not find the extracted CUDA module: $version"
fi
(cd "$tmp" && run turbanet train "$repo/configs/spirals-small.yaml" --set train.epochs=1 --swarm 2 \
   --out "$tmp/run.h5" -q) || fail "a tiny training with the extracted binary"
[ -s "$tmp/run.h5" ] || fail "the tiny training wrote no run file"
(cd "$tmp" && run turbanet eval "$tmp/run.h5" --json >/dev/null) || fail "eval of the tiny run"
echo "test-package: ok"
