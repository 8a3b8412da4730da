#!/usr/bin/env bash
# README command 2 (and CI): build and run the whole test suite twice -- an optimised build, and
# one with AddressSanitizer and UndefinedBehaviorSanitizer -- installing missing packages first.
#   scripts/test.sh            both builds and their tests (README command 2)
#   scripts/test.sh --release  the optimised build and its tests alone: CI runs this on its own
#                              machine (with the CUDA toolkit, so the kernels compile), and both
#                              builds in a clean Debian root (fresh-machine-check.sh), whose
#                              sanitizer build is this one's: building it twice would add nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
release_only=0
case "${1:-}" in
  --release) release_only=1 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--release]" >&2; exit 2 ;;
esac

scripts/install-deps.sh
jobs="$(nproc)"

echo "== Release build and tests =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

[ "$release_only" -eq 1 ] && exit 0

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests =="
# CUDA stays off here: the sanitizers check host code, and CI has no GPU to run kernels on.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVSCOPE_SANITIZE=ON -DCONVSCOPE_WITH_CUDA=OFF
cmake --build build-sanitize -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize --output-on-failure -j "$jobs"
