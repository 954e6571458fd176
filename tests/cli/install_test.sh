#!/usr/bin/env bash
# `cmake --install` into a temporary DESTDIR gives a servesim that runs on its own: --help, the
# default scenario, an installed example reading an installed trace, and (when it was built) the
# Python module imported from the installed path, the bash completion script and the man page
# (generated from the command table at build time). Also checks that the .deb's Depends names the
# Debian package of every shared library the binary links (cmake/packaging.cmake), and that
# CITATION.cff's version is the binary's. docs/packaging.md.
# With PYTHON_SITE_DIR (where the module goes under prefixes other than /usr), the Python module
# alone is also installed with --prefix /usr/local, and when PYTHON3 is Debian's (sys.prefix
# /usr) both folders must be on its sys.path: an installed module is found without PYTHONPATH.
# usage: install_test.sh CMAKE BUILD_DIR WORKDIR PYTHON_DIR [PYTHON3 [PYTHON_SITE_DIR]]
set -uo pipefail
cmake="$1"; build="$2"; w="$3"; pydir="$4"; py="${5:-}"; sitedir="${6:-}"
fail=0
err() { echo "FAIL: $*"; fail=1; }
rm -rf "$w"; mkdir -p "$w"
root="$w/root"; prefix=/usr
if ! DESTDIR="$root" "$cmake" --install "$build" --prefix "$prefix" >"$w/install.log" 2>&1; then
  tail -n 5 "$w/install.log"; echo "FAIL: cmake --install"; exit 1
fi
bin="$root$prefix/bin/servesim"
share="$root$prefix/share/servesim"
[[ -x "$bin" ]] || { echo "FAIL: no $bin"; exit 1; }

"$bin" --help >"$w/help.txt" 2>&1 || err "servesim --help exited $?"
grep -q 'servesim run' "$w/help.txt" || err "--help does not list 'servesim run'"

# From an empty folder, so nothing of the source or build tree is found by accident.
mkdir -p "$w/cwd"
(cd "$w/cwd" && "$bin" run --out "$w/default" --quiet) >"$w/default.log" 2>&1 ||
  err "installed 'servesim run' exited: $(tail -n 2 "$w/default.log")"
[[ -s "$w/default/summary.json" ]] || err "default run wrote no summary.json"

ex="$share/configs/examples/tiny-trace.yaml"
if [[ -f "$ex" ]]; then
  (cd "$w/cwd" && "$bin" run "$ex" --out "$w/example" --quiet) >"$w/example.log" 2>&1 ||
    err "installed example exited: $(tail -n 2 "$w/example.log")"
else
  err "no $ex"
fi
# An installed example and reproduction reading the installed data/ (gzipped operator tables, a
# layer profile, a measured run), cut short: what is checked is that the paths resolve.
for ex in examples/operator-llama-3.1-8b-h100-vllm reproductions/vllm-rtx4090-llama-3.1-8b; do
  cfg="$share/configs/$ex.yaml"
  [[ -f "$cfg" ]] || { err "no $cfg"; continue; }
  (cd "$w/cwd" && "$bin" run "$cfg" --out "$w/${ex//\//-}" --quiet --max-sim-time 10) \
    >"$w/${ex//\//-}.log" 2>&1 || err "installed $ex exited: $(tail -n 2 "$w/${ex//\//-}.log")"
done
for f in timings/aiconfigurator/LICENSE timings/aiconfigurator/SOURCES.md \
         timings/llmservingsim/LICENSE timings/splitwise/perf_model.csv.gz README.md; do
  [[ -f "$share/data/$f" ]] || err "share/servesim/data/$f not installed"
done
for f in LICENSE README.md CITATION.cff uPlot-LICENSE docs/packaging.md; do
  [[ -f "$root$prefix/share/doc/servesim/$f" ]] || err "share/doc/servesim/$f not installed"
done

# The completion script and the man page, as the installed binary generates them.
comp="$root$prefix/share/bash-completion/completions/servesim"
man1="$root$prefix/share/man/man1/servesim.1"
if [[ -f "$comp" ]]; then
  bash -n "$comp" || err "the installed completion script is not valid bash"
  cmp -s "$comp" <("$bin" completion bash) || err "$comp differs from 'servesim completion bash'"
else
  err "share/bash-completion/completions/servesim not installed"
fi
if [[ -f "$man1" ]]; then
  cmp -s "$man1" <("$bin" man) || err "$man1 differs from 'servesim man'"
  grep -q '^\.TH SERVESIM 1 ' "$man1" || err "$man1 has no .TH line"
else
  err "share/man/man1/servesim.1 not installed"
fi

# CITATION.cff's version is the one the binary reports.
version=$("$bin" --version 2>&1 | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1)
cff=$(sed -n 's/^version: *//p' "$root$prefix/share/doc/servesim/CITATION.cff")
[[ -n "$version" && "$version" == "$cff" ]] || err "CITATION.cff version '$cff', servesim --version '$version'"

if [[ -n "$py" ]]; then
  mods=("$root$prefix/$pydir"/servesim*.so)
  [[ -f "${mods[0]}" ]] || err "no Python module in $prefix/$pydir"
  (cd "$w/cwd" && PYTHONPATH="$root$prefix/$pydir" "$py" -c \
    'import servesim, sys; r = servesim.run(); sys.exit(0 if r.summary else 1)') \
    >"$w/python.log" 2>&1 || err "installed Python module: $(tail -n 2 "$w/python.log")"
  if [[ -n "$sitedir" ]]; then
    local_root="$w/local-root"
    DESTDIR="$local_root" "$cmake" --install "$build" --prefix /usr/local --component python \
      >"$w/install-local.log" 2>&1 || err "cmake --install --prefix /usr/local --component python"
    mods=("$local_root/usr/local/$sitedir"/servesim*.so)
    [[ -f "${mods[0]}" ]] || err "--prefix /usr/local: no Python module in /usr/local/$sitedir"
    # Only Debian's python3 (sys.prefix /usr) searches both prefixes; one call for both folders.
    missing=$("$py" -c 'import sys
if sys.prefix == "/usr": print(" ".join(d for d in sys.argv[1:] if d not in sys.path))' \
      "/usr/$pydir" "/usr/local/$sitedir")
    [[ -z "$missing" ]] || err "$py does not search $missing, where cmake --install puts the module"
  fi
fi

# Every shared library an installed file links directly (readelf's NEEDED; theirs come with
# their packages), other than the loader, belongs to a package in the .deb's Depends.
deps_file="$build/servesim-deb-depends.txt"
check_depends() {  # FILE WHAT
  command -v dpkg >/dev/null && command -v ldd >/dev/null && [[ -f "$deps_file" ]] || return 0
  local deps soname lib pkg
  deps=" $(tr -d ',' <"$deps_file") "
  while read -r soname; do
    lib=$(ldd "$1" | awk -v s="$soname" '$1 == s {print $3}')
    [[ -n "$lib" ]] || continue
    pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null)
    pkg=${pkg%%:*}
    [[ -z "$pkg" || "$deps" == *" $pkg "* ]] || err "$2's $soname is in $pkg, not in Depends"
  done < <(readelf -d "$1" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
}
check_depends "$bin" servesim
# The MPI plugin (built with MPI) is installed where the installed servesim looks for it.
plugin_file="$build/servesim-mpi-plugin.txt"
if [[ -f "$plugin_file" ]]; then
  plugin="$root$prefix/$(cat "$plugin_file")"
  if [[ -f "$plugin" ]]; then
    check_depends "$plugin" "the MPI plugin"
  else
    err "no MPI plugin at $plugin"
  fi
fi

if ((fail == 0)); then echo "install: bin, share and doc installed under $root$prefix; runs"; fi
exit $fail
