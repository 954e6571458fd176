#!/usr/bin/env bash
# A registry (core/registry.h) is checked when it is compiled: a sorted list compiles, a list out
# of order or with a repeated name does not, and neither does one whose N is larger than its list.
# usage: registry_compile_test.sh CXX SOURCE_DIR
set -uo pipefail
cxx=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compile() {  # $1: the registry's declaration
  printf '#include "core/registry.h"\nint f() { return 1; }\nusing F = int (*)();\n%s\n' "$1" \
    >"$tmp/r.cpp"
  "$cxx" -std=c++20 -fsyntax-only -I"$src" "$tmp/r.cpp" 2>"$tmp/err"
}
status=0
expect() {  # $1: ok|fail, $2: what, $3: declaration
  if compile "$3"; then got=ok; else got=fail; fi
  if [[ $got != "$1" ]]; then
    echo "FAIL: $2 should $1 to compile"; cat "$tmp/err"; status=1
  else
    echo "ok: $2"
  fi
}
expect ok "a sorted registry" \
  'constexpr servesim::Registry<F, 2> k{{{{"a", &f}, {"b", &f}}}};'
expect fail "names out of order" \
  'constexpr servesim::Registry<F, 2> k{{{{"b", &f}, {"a", &f}}}};'
expect fail "a repeated name" \
  'constexpr servesim::Registry<F, 2> k{{{{"a", &f}, {"a", &f}}}};'
expect fail "N larger than the list" \
  'constexpr servesim::Registry<F, 3> k{{{{"a", &f}, {"b", &f}}}};'
exit $status
