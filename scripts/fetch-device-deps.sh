#!/usr/bin/env bash
# Prepares what scripts/device.sh needs on the GPU machine, which has no package registry:
# the Debian packages of the core's libraries (downloaded, not installed) and the Fashion-MNIST
# IDX files, in folders .git/info/exclude keeps out of git. Name both in the device call's carry.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.deps/' .git/info/exclude 2>/dev/null || echo '/.deps/' >>.git/info/exclude
grep -qx '/.data/' .git/info/exclude 2>/dev/null || echo '/.data/' >>.git/info/exclude
mkdir -p .deps/debs .data
(cd .deps/debs && apt-get download libonnx-dev libonnx1 libonnxifi libprotobuf-dev libprotobuf32 libgtest-dev \
  nlohmann-json3-dev zlib1g-dev)
cp -r /usr/share/datasets/fashion-mnist .data/
du -sh .deps .data
