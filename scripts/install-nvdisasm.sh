#!/usr/bin/env bash
# nvdisasm turns a kernel's cubin into SASS (convscope-cli kernel sass, the Your kernel tab's SASS
# pane). The CUDA toolkit usually has it; where it does not (a toolkit without the binary
# utilities, as on the development machine), this puts NVIDIA's PyPI copy into the project:
# .deps/nvdisasm/nvidia/cu13/bin/nvdisasm, where ConvScope looks. Safe to run again; never fatal:
# without nvdisasm ConvScope still builds and says why it shows no SASS.
set -uo pipefail
cd "$(dirname "$0")/.."

# 13.2.51 is the oldest CUDA 13 nvdisasm on PyPI (none of 13.0.x is published); it reads the
# cubins of NVRTC 13.0.
VERSION=13.2.51
TARGET=.deps/nvdisasm
BINARY=$TARGET/nvidia/cu13/bin/nvdisasm

for found in "$(command -v nvdisasm 2>/dev/null)" /usr/local/cuda/bin/nvdisasm "$BINARY"; do
  if [ -n "$found" ] && [ -x "$found" ]; then
    echo "install-nvdisasm: $found"
    exit 0
  fi
done
PIP=()
if command -v pip3 >/dev/null; then PIP=(pip3); elif command -v python3 >/dev/null; then PIP=(python3 -m pip); fi
if [ ${#PIP[@]} -eq 0 ]; then
  echo "install-nvdisasm: no pip here (Debian package python3-pip), so no nvdisasm: kernel sass will say so" >&2
  exit 0
fi
if "${PIP[@]}" install --quiet --no-deps --target "$TARGET" "nvidia-cuda-nvdisasm==$VERSION" && [ -x "$BINARY" ]; then
  echo "install-nvdisasm: $BINARY"
else
  echo "install-nvdisasm: could not install nvidia-cuda-nvdisasm==$VERSION: kernel sass will say so" >&2
fi
exit 0
