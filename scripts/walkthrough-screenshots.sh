#!/usr/bin/env bash
# A teacher's walkthrough as pictures (issue "a class demo without surprises"): every tab of the
# window with the H100's benchmark open, at 1024x700 (a classroom projector) and 1440x900, and in
# presentation mode at 1440x900 and 1920x1080, rendered offscreen by the built window. Look at
# them before a class. (tests/ui/test_layout.cpp checks the same sizes for text that does not fit.)
#
#   scripts/walkthrough-screenshots.sh [OUT] [BENCH.json]
# OUT defaults to docs/images/walkthrough; BENCH to the committed H100 benchmark with the most
# variants, its device figures (the Roofline's roofs) and its PyTorch peer beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/images/walkthrough}"
bench="${2:-docs/results/2026-11-26-end-to-end-peer/bench.json}"
window=build/app/gui/convscope
[ -x "$window" ] || { echo "walkthrough-screenshots: build the window first ($window)" >&2; exit 1; }
[ -f "$bench" ] || { echo "walkthrough-screenshots: no benchmark file $bench" >&2; exit 1; }
mkdir -p "$out"
tabs=(explore draw timing profile model kernel arithmetic weights confusion gpu-mapping roofline staircase class)
for setting in 1024x700 1440x900 1440x900-presentation 1920x1080-presentation; do
  size=${setting%-presentation}
  mode=()
  [ "$setting" = "$size" ] || mode=(--presentation)
  for tab in "${tabs[@]}"; do
    file="$out/$setting-$tab.png"
    QT_QPA_PLATFORM=offscreen timeout 120 "$window" --screenshot "$file" --size "$size" --tab "$tab" --index 0 \
      --bench "$bench" "${mode[@]}" >/dev/null 2>&1 || { echo "walkthrough-screenshots: $tab at $size failed" >&2; exit 1; }
  done
  echo "walkthrough-screenshots: ${#tabs[@]} tabs at $size${mode:+ (presentation)} in $out"
done
