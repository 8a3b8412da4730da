#!/usr/bin/env bash
# README command 1: install what is missing, build ConvScope, and start its window.
# Where there is no display (a server, a container, ssh without -X) it says how to get one, then
# runs the headless demo instead: classify the Fashion-MNIST test set with the shipped
# course-high model, course style, and render the window into a PNG to look at.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/install-nvdisasm.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"

GUI=build/app/gui/convscope
CLI=build/app/cli/convscope-cli

if [ ! -x "$GUI" ]; then
  echo
  echo "setup: the desktop window was not built (configured with -DCONVSCOPE_WITH_GUI=OFF); running the headless demo."
elif [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  echo
  echo "== Starting ConvScope ($GUI) =="
  exec "$GUI"
else
  cat <<MESSAGE

== No display ==
\$DISPLAY and \$WAYLAND_DISPLAY are empty, so the ConvScope window cannot open here. To see it:
  - on a desktop (or over 'ssh -X'), run:   $GUI
  - on a server, under a virtual display:   xvfb-run -s '-screen 0 1600x1000x24' $GUI
    (Debian package xvfb; add xauth if it asks for it)
  - or render it without a display:         $GUI --screenshot shot.png --index 42 --tab explore
Meanwhile, the headless demo:
MESSAGE
fi

echo
echo "== Headless demo: course-high on the 10,000 Fashion-MNIST test images =="
"$CLI" classify --model data/models/course-high.onnx
if [ -x "$GUI" ]; then
  echo
  echo "== The window, rendered offscreen =="
  "$GUI" --screenshot build/convscope-window.png --index 0 --tab explore
  echo "Look at build/convscope-window.png"
fi
echo
echo "Next: $CLI --help   (info, classify, variants, bench, profile)"
