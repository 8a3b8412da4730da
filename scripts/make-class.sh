#!/usr/bin/env bash
# A made-up class for convscope-cli grade (docs/class-mode.md): N submissions in OUT, drawn in turn
# from the project's templates and test kernels, so that a class holds every status:
#   correct      examples/kernels/naive_conv.cu and tiled_conv.cu, with block and tile sizes varied
#   wrong        tests/data/kernels: forgets_left_padding, ignores_stride, leaves_rows_unwritten,
#                off_by_one_halo
#   not compiling, breaking the contract: syntax_error, wrong_signature
#   (with --runtime) faulting, spinning, printing and asserting kernels, which only a GPU tells apart
# Submission i is OUT/student-NNN.cu, or every third one a folder OUT/student-NNN/ holding its .cu,
# as students hand them in. The mix repeats, so any N >= 12 (17 with --runtime) holds each kind (N = 8
# holds every status, but only two of the four ways of being wrong).
#
#   scripts/make-class.sh N OUT [--runtime]
set -euo pipefail
usage() { echo "usage: scripts/make-class.sh N OUT [--runtime]" >&2; exit 2; }
[ $# -ge 2 ] || usage
count="$1"
out="$2"
runtime="${3:-}"
if ! [[ "$count" =~ ^[0-9]+$ ]] || [ "$count" -lt 1 ]; then
  echo "make-class.sh: N must be a whole number >= 1, not '$count'" >&2
  exit 2
fi
[ -z "$runtime" ] || [ "$runtime" = "--runtime" ] || usage
repo="$(cd "$(dirname "$0")/.." && pwd)"
templates="$repo/examples/kernels"
tests="$repo/tests/data/kernels"
mkdir -p "$out"

# Block and tile sizes (one output per thread: the tile is the block) the correct ones take in turn.
sizes=("16 16" "8 8" "32 8" "16 8" "8 16" "32 4")
kinds=(naive tiled forgets_left_padding tiled ignores_stride syntax_error naive wrong_signature
  leaves_rows_unwritten tiled off_by_one_halo naive)
[ -z "$runtime" ] || kinds+=(traps endless_loop out_of_bounds_write prints_every_output asserts)

resize() {  # FILE X Y: the file's block and tile set to X by Y
  sed -i -E "s/^#define CONVSCOPE_BLOCK_X .*/#define CONVSCOPE_BLOCK_X $2/; s/^#define CONVSCOPE_BLOCK_Y .*/#define CONVSCOPE_BLOCK_Y $3/;
    s/^#define CONVSCOPE_TILE_WIDTH .*/#define CONVSCOPE_TILE_WIDTH $2/; s/^#define CONVSCOPE_TILE_HEIGHT .*/#define CONVSCOPE_TILE_HEIGHT $3/" "$1"
}

for ((i = 0; i < count; i++)); do
  id=$(printf "student-%03d" "$i")
  kind="${kinds[i % ${#kinds[@]}]}"
  if ((i % 3 == 2)); then
    mkdir -p "$out/$id"
    file="$out/$id/conv.cu"
  else
    file="$out/$id.cu"
  fi
  case "$kind" in
    naive | tiled)
      cp "$templates/${kind}_conv.cu" "$file"
      read -r x y <<<"${sizes[i % ${#sizes[@]}]}"
      resize "$file" "$x" "$y"
      ;;
    *) cp "$tests/$kind.cu" "$file" ;;
  esac
done
echo "make-class.sh: $count submissions in $out"
