#!/usr/bin/env bash
# The bash completion script (`servesim completion bash`, generated from the command table) is
# valid bash and completes what it should in a scripted COMP_WORDS run: subcommands, trace's
# two, each command's options, list's groups, folders after --out. The man page (`servesim man`)
# renders without warnings where groff is installed. docs/cli.md#completion-and-man-page.
# usage: completion_test.sh SERVESIM WORK_DIR
set -uo pipefail
bin=$(readlink -f "$1"); w="$2"
fail=0
err() { echo "FAIL: $*"; fail=1; }
rm -rf "$w"; mkdir -p "$w/cwd/results-a" "$w/cwd/results-b"
"$bin" completion bash >"$w/servesim.bash" || { echo "FAIL: servesim completion bash exited $?"; exit 1; }
bash -n "$w/servesim.bash" || err "the completion script is not valid bash"
# shellcheck source=/dev/null
source "$w/servesim.bash"
complete -p servesim >/dev/null 2>&1 || err "the script registers no completion for servesim"

# COMPREPLY for a command line whose last word is being completed, sorted, one line.
comp() {
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
  _servesim
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() {  # expect "WANT" WORDS...
  local want="$1"; shift
  local got; got=$(comp "$@")
  [[ "$got" == "$want" ]] || err "complete '$*': got '$got', want '$want'"
}
cd "$w/cwd" || exit 1
expect "run" servesim ru
expect "calibrate capacity completion" servesim c
expect "trace" servesim tr
expect "--help gen stats" servesim trace ""
expect "stats" servesim trace s
expect "--window-s" servesim trace stats t.csv --wi
expect "--no-progress --no-requests-csv" servesim run --no-
expect "--json" servesim size s.yaml --js
# The shared simulation options on size and capacity; renamed options by their new names only.
expect "--max-queued --max-sim-time --max-wall-time" servesim size s.yaml --max-
expect "--seed --set" servesim capacity c.yaml --se
expect "--source-hardware --source-model --source-tp" servesim calibrate m.csv --source-
expect "" servesim calibrate m.csv --format
expect "--input-format" servesim trace stats t.csv --inp
expect "schedulers" servesim list sch
expect "bash" servesim completion b
expect "results-a results-b" servesim report x --out res
expect "results-a results-b" servesim run -o res
expect "--help --version" servesim --

# Every option of every command's --help completes after its command.
commands=0
while read -r words; do
  read -ra cmd <<<"$words"
  while read -r opt; do
    got=$(comp servesim "${cmd[@]}" "$opt")
    [[ " $got " == *" $opt "* ]] || err "servesim $words $opt: not completed (got '$got')"
  done < <("$bin" "${cmd[@]}" --help | grep -oE '^  (-[a-z], )?--[a-z-]+|^      --[a-z-]+' | grep -oE -- '--[a-z-]+')
  ((++commands))
done < <("$bin" --help | sed -n 's/^  servesim \([a-z]\+\)\( \([a-z]\+\)\)\? .*/\1 \3/p')
((commands == 11)) || err "$commands commands in servesim --help's usage lines, not 11"

# The man page: roff that groff renders without a warning (where groff is installed).
"$bin" man >"$w/servesim.1" || err "servesim man exited $?"
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$w/servesim.1" 2>&1)
  [[ -z "$warnings" ]] || err "groff: $warnings"
fi

if ((fail == 0)); then echo "completion: script valid, completes commands, options and groups"; fi
exit $fail
