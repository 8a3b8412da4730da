#!/usr/bin/env bash
# Installs every Debian package ConvScope needs to build, test and run. This is the only list.
# Safe to run again: it only calls apt-get when something is missing.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake pkg-config ccache
  # core: ONNX protobuf classes, gzip, BLAS, JSON
  libonnx-dev libprotobuf-dev zlib1g-dev libopenblas-dev nlohmann-json3-dev
  # the cpu-onednn variant: oneDNN, and the OpenCL loader its CMake package requires
  libdnnl-dev ocl-icd-opencl-dev
  # image files
  libopencv-imgcodecs-dev libopencv-imgproc-dev libopencv-core-dev libopencv-videoio-dev
  # the desktop window: Qt 6 Widgets (+ PrintSupport, Test, the xcb and offscreen platforms),
  # QCustomPlot for the charts, QScintilla for the kernel editor, and a font so offscreen
  # renderings (tests, --screenshot) have text
  qt6-base-dev libqcustomplot-dev libqcustomplot2.1-qt6 libqscintilla2-qt6-dev fonts-dejavu-core
  # the .deb (cpack in build/): CPack finds the programs with file, their libraries' packages with
  # dpkg-shlibdeps (dpkg-dev, part of build-essential)
  file
  # tests, the source format check (scripts/check-format.sh), and python3 for the tests of the
  # scripts that make docs/performance.md's tables
  libgtest-dev clang-format python3
  # data: the Fashion-MNIST IDX files and the ONNX operator conformance cases
  dataset-fashion-mnist libonnx-testdata
  # real photos (scikit-image's chelsea, coffee, astronaut, rocket) for the pretrained model's tests:
  # they are in python3-skimage, not in python3-skimage-lib (its compiled half)
  python3-skimage
  # a one-node Slurm cluster for the class-mode tests (scripts/slurm-local.sh)
  slurm-wlm munge
)

# Optional groups, on request only: --fuzz adds clang and libFuzzer for scripts/fuzz.sh.
for argument in "$@"; do
  case "$argument" in
    --fuzz) PACKAGES+=(clang-14 libclang-rt-14-dev libomp-14-dev) ;;
    *) echo "install-deps: unknown option '$argument' (known: --fuzz)" >&2; exit 2 ;;
  esac
done

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
