#!/usr/bin/env bash
# Fails when a C++ or CUDA source differs from what .clang-format makes of it, listing the files;
# `scripts/check-format.sh --fix` rewrites them. Run by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
# Not the adversarial class: its files are attacks on the grader byte for byte (a trigraph, a lone
# CR, a backslash followed by a space), which formatting would change.
mapfile -t sources < <(git ls-files -- 'app/*' 'gpu/*' 'ui/*' 'tests/*' 'examples/*' | grep -E '\.(h|cpp|cu|cuh)$' |
  grep -v '^tests/data/adversarial-class/')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${sources[@]}"
  exit 0
fi
unformatted=()
for file in "${sources[@]}"; do
  [[ -f "$file" ]] || continue
  if ! clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then unformatted+=("$file"); fi
done
if ((${#unformatted[@]})); then
  echo "check-format: ${#unformatted[@]} file(s) differ from .clang-format (fix: scripts/check-format.sh --fix):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "check-format: ${#sources[@]} files follow .clang-format ($(clang-format --version | head -1))"
