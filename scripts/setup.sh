#!/usr/bin/env bash
# README command 1: install what is missing, build ConvScope, and run it.
# Until the desktop window lands, "run" is the headless demo: classify the Fashion-MNIST test
# set with the shipped course-high model and print op times and accuracy, course style.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"

echo
echo "== Headless demo: course-high on the 10,000 Fashion-MNIST test images =="
build/app/cli/convscope-cli classify --model data/models/course-high.onnx
echo
echo "Next: build/app/cli/convscope-cli --help   (info, classify, variants)"
