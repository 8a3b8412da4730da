#!/usr/bin/env bash
# README command 2 (and CI): build and run the whole test suite twice -- an optimised build, and
# one with AddressSanitizer and UndefinedBehaviorSanitizer -- installing missing packages first.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
jobs="$(nproc)"

echo "== Release build and tests =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests =="
# CUDA stays off here: the sanitizers check host code, and CI has no GPU to run kernels on.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVSCOPE_SANITIZE=ON -DCONVSCOPE_WITH_CUDA=OFF
cmake --build build-sanitize -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize --output-on-failure -j "$jobs"
