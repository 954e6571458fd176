#!/usr/bin/env bash
# Fails when a tracked C or C++ source or header differs from what clang-format (the root's
# .clang-format; Debian 12's clang-format 14) makes of it, and names each such file.
# Fix with: git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format -i
# CMake templates (*.cpp.in) are left out: clang-format would split their @VARIABLE@ markers.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed" >&2; exit 2; }
bad=()
while IFS= read -r f; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cpp' '*.h' '*.c')
if ((${#bad[@]})); then
  echo "check_format: ${#bad[@]} file(s) differ from clang-format's layout:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix with: clang-format -i ${bad[*]}" >&2
  exit 1
fi
echo "check_format: $(git ls-files '*.cpp' '*.h' '*.c' | wc -l) files formatted"
