#!/usr/bin/env bash
# `pip install .` works (docs/python.md#pip): a fresh venv of PYTHON3 that sees the system's
# packages (Debian's numpy, setuptools, wheel and pip), `pip install --no-build-isolation
# --no-index .` from the source tree (offline: setup.py drives CMake into build-pip-TAG/, which
# ccache and Ninja make quick the second time), then, from another folder, `import servesim`
# finds the installed module (not the build tree's) and its default run prints the README's table.
# Also checks what pip installed: the module and its dist-info, nothing else, at the version of
# CMakeLists.txt. Needs python3-venv's venv module and python3-pip (scripts/install-deps.sh).
# usage: pip_install_test.sh SOURCE_DIR WORK_DIR [PYTHON3]
set -uo pipefail
src="$1"; w="$2"; py="${3:-/usr/bin/python3}"
fail=0
err() { echo "FAIL: $*"; fail=1; }
rm -rf "$w"; mkdir -p "$w/elsewhere"
start=$SECONDS

# --without-pip: the venv runs the system's pip (python3-pip), which saves the seconds ensurepip
# takes to install a copy into every fresh venv.
if ! "$py" -m venv --system-site-packages --without-pip "$w/venv" >"$w/venv.log" 2>&1; then
  cat "$w/venv.log"; echo "FAIL: $py -m venv (Debian: apt-get install python3-venv)"; exit 1
fi
vpy="$w/venv/bin/python"
if ! "$vpy" -m pip --version >/dev/null 2>&1; then
  echo "FAIL: no pip for $py (Debian: apt-get install python3-pip)"; exit 1
fi
if ! (cd "$src" && "$vpy" -m pip install --no-build-isolation --no-index \
        --disable-pip-version-check . ) >"$w/pip.log" 2>&1; then
  tail -n 30 "$w/pip.log"; echo "FAIL: pip install --no-build-isolation ."; exit 1
fi
built=$SECONDS

# From a folder with nothing of the source or build tree, without PYTHONPATH.
(cd "$w/elsewhere" && env -u PYTHONPATH "$vpy" -c \
  'import servesim; print(servesim.__file__); print(servesim.__version__); print(servesim.run().table)') \
  >"$w/run.txt" 2>&1 || err "import servesim from the venv: $(tail -n 3 "$w/run.txt")"
file=$(sed -n 1p "$w/run.txt")
[[ "$file" == "$w/venv/"*"/site-packages/servesim"*.so ]] ||
  err "servesim was imported from $file, not from the venv's site-packages"
grep -q '^requests   200 finished, 0 rejected' "$w/run.txt" ||
  err "the default run's table: $(head -n 4 "$w/run.txt")"
grep -q '^TTFT  ' "$w/run.txt" || err "no TTFT row in the table"

want=$(sed -n 's/^project(servesim VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[[ "$(sed -n 2p "$w/run.txt")" == "$want" ]] || err "servesim.__version__ is not $want"
"$vpy" -m pip show -f servesim >"$w/show.txt" 2>&1 || err "pip show servesim"
grep -q "^Version: $want\$" "$w/show.txt" || err "pip show: version is not $want"
# The files pip installed (indented under "Files:"): the module and the dist-info, no more.
others=$(sed -n '/^Files:/,$p' "$w/show.txt" | sed 1d | sed 's/^ *//' |
         grep -v -E "^servesim\.cpython-[^/]*\.so$|^servesim-$want\.dist-info/" || true)
[[ -z "$others" ]] || err "pip installed more than the module: $others"
[[ $(grep -c -E '^ *servesim\.cpython-[^/]*\.so$' "$w/show.txt") == 1 ]] ||
  err "pip installed not exactly one module: $(grep '\.so' "$w/show.txt")"

if ((fail == 0)); then
  echo "pip install: built and installed in $((built - start)) s, imported from $file"
fi
exit $fail
