#!/usr/bin/env bash
# Train and export the ConvScope demo models on a CUDA machine.
#
# Usage (from the repository root, with the four Fashion-MNIST .gz files in
# .data/fashion-mnist/):  OUT=out scripts/device_train.sh
# Results land in $OUT: results.tar (models/ + fixtures/), export_report.txt,
# train.log.  See docs/training.md.
set -euo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
OUT="${OUT:-out}"
mkdir -p "$OUT"
python3 scripts/train_models.py --data .data/fashion-mnist --out "$OUT" 2>&1 | tee "$OUT/train.log"
