#!/usr/bin/env bash
# Builds everything for the lent GPU machine here -- kernels for its H100 (sm_90a), the CLI, the
# window and every test -- and packs what it needs to run there into .deps/device-bundle.tar.xz:
# the programs, CTest's files, and every shared library they load that is not part of the C
# runtime or of the CUDA toolkit the GPU machine has (Qt 6, QCustomPlot, OpenBLAS, protobuf...),
# Qt's offscreen platform plugin and the DejaVu fonts. OpenCV stays out: Debian's imgcodecs pulls
# in GDAL, codecs and their libraries (about 150 MB), over the device call's 64 MiB, and image
# files are not what the GPU machine tests (their tests skip there, saying so). That machine has no Qt, no
# OpenCV and no package registry; building here means it needs nothing but the bundle.
#   scripts/device-bundle.sh     then the device call: carry .deps/device-bundle.tar.xz and .data,
#                                command scripts/device.sh (see there)
#   scripts/device-bundle.sh --without-qt
#                                only the programs that load no Qt (the CLI and the core's and the
#                                GPU's tests; not the window and its tests): about half the size,
#                                for calls that also carry a large working tree. Their tests are
#                                chosen with TESTS there; the window's would not run.
#   scripts/device-bundle.sh --only REGEX
#                                only the programs whose names match REGEX (an extended regular
#                                expression), and the CLI, built and packed with the libraries
#                                they load (the others are not built): the window's
#                                tests with Qt beside a whole working tree (--only 'test_ui_class_tab').
#                                The other tests there are Not Run.
set -euo pipefail
cd "$(dirname "$0")/.."
without_qt=0
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --without-qt) without_qt=1 ;;
    --only) only="${2:?--only needs a regular expression}"; shift ;;
    *) echo "usage: scripts/device-bundle.sh [--without-qt] [--only REGEX]" >&2; exit 2 ;;
  esac
  shift
done
repo="$PWD"
build="$repo/build-device"
stage="$repo/.deps/device-bundle"
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")" .deps
grep -qx '/.deps/' "$exclude" 2>/dev/null || echo '/.deps/' >>"$exclude"

scripts/install-deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCONVSCOPE_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a-real \
  -DCONVSCOPE_WITH_GUI=ON -DCONVSCOPE_WITH_OPENCV=OFF ${CMAKE_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_LAUNCHER -DCMAKE_CUDA_COMPILER_LAUNCHER=$CMAKE_LAUNCHER} \
  >"$repo/.deps/device-configure.log"
grep "ConvScope:" "$repo/.deps/device-configure.log"
if [ -n "$only" ]; then
  # Only the programs asked for, and the CLI: building every test is half an hour on 2 cores.
  targets=$(cmake --build "$build" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p' |
    grep -E -- "$only|^convscope-cli$" | grep -v -E '(_autogen|/fast|\.o|\.i|\.s)$' || true)
  [ -n "$targets" ] || { echo "device-bundle: no build target matches --only '$only'" >&2; exit 2; }
  # shellcheck disable=SC2086  # one target a word
  cmake --build "$build" -j "$(nproc)" --target $targets
else
  cmake --build "$build" -j "$(nproc)"
fi

rm -rf "$stage"
mkdir -p "$stage/lib" "$stage/plugins/platforms" "$stage/fonts"
# Programs and CTest's files keep their paths under build-device (CTest's files name them by
# absolute path; device.sh links this repository's path there to the copy it runs in).
# Not the ONNX conformance cases: their data (a Debian package) does not travel, so device.sh
# leaves them out, and the call carries 64 MiB.
programs=$(find "$build" -type f -perm -u+x ! -path '*/CMakeFiles/*' ! -name test_onnx_conformance \
  -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)
if [ -n "$only" ]; then
  programs=$(for p in $programs; do
    name=$(basename "$p")
    if [[ "$name" == convscope-cli || "$name" =~ $only ]]; then echo "$p"; fi
  done)
fi
if [ "$without_qt" -eq 1 ]; then
  # A program ldd cannot read is left out too (it would bring an unknown set of libraries).
  # (An if, not a chain of &&: under set -e a loop whose last test fails would end the script.)
  programs=$(for p in $programs; do
    if deps=$(ldd "$p" 2>&1) && ! grep -q 'libQt6' <<<"$deps"; then echo "$p"; fi
  done)
fi
(cd "$repo" && find build-device ! -path '*/CMakeFiles/*' \( -name 'CTestTestfile.cmake' -o -name '*_tests.cmake' -o -name '*_include.cmake' \) \
  -print; for p in $programs; do echo "${p#"$repo"/}"; done) >"$stage/files.txt"

qt_plugins=$(dirname "$(dirname "$(find /usr/lib -path '*qt6/plugins/platforms/libqoffscreen.so' | head -1)")")
[ "$without_qt" -eq 1 ] ||
  cp "$qt_plugins/platforms/libqoffscreen.so" "$qt_plugins/platforms/libqminimal.so" "$stage/plugins/platforms/"
# Shared libraries: everything ldd resolves, less the C runtime (the GPU machine's own, newer
# glibc and libstdc++ serve) and the CUDA toolkit's (the GPU machine's toolkit and driver serve).
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcudnn|libnvrtc|libnvJitLink)'
for f in $programs $(find "$stage/plugins/platforms" -name '*.so'); do ldd "$f"; done | awk '/=> \// {print $1, $3}' | sort -u |
  while read -r name path; do
    [[ "$name" =~ $skip ]] || cp -L "$path" "$stage/lib/$name"
  done
# The four faces the window draws with (fonts-dejavu-core's Sans and Sans Mono, regular and bold):
# a machine with fonts-dejavu-extra has 22 more, 6 MB the call's 64 MiB cannot spare.
[ "$without_qt" -eq 1 ] || for face in DejaVuSans DejaVuSans-Bold DejaVuSansMono DejaVuSansMono-Bold; do
  cp "/usr/share/fonts/truetype/dejavu/$face.ttf" "$stage/fonts/"
done
echo "$repo" >"$stage/source-dir.txt"

# Symbol tables are of no use there and a third of the programs' size: the call carries 64 MiB.
strip --strip-unneeded $programs 2>/dev/null || true
# xz's x86 filter first: machine code packs 4 % smaller (one window test with Qt, no fonts: 35.4 MB,
# not 37.0), which is what let that bundle travel beside the working tree and the test set.
tar -C "$repo" -cf - -T "$stage/files.txt" \
  -C "$repo/.deps" device-bundle/lib device-bundle/plugins device-bundle/fonts device-bundle/source-dir.txt |
  xz --x86 --lzma2=preset=9e -T2 >"$repo/.deps/device-bundle.tar.xz"

# The Fashion-MNIST test set (the Debian package is not there either).
grep -qx '/.data/' "$exclude" || echo '/.data/' >>"$exclude"
mkdir -p .data/fashion-mnist
cp /usr/share/datasets/fashion-mnist/t10k-* .data/fashion-mnist/
echo "device-bundle: $(wc -l <"$stage/files.txt") build files, $(ls "$stage/lib" | wc -l) libraries," \
  "$(du -h "$repo/.deps/device-bundle.tar.xz" | cut -f1) packed in .deps/device-bundle.tar.xz"
