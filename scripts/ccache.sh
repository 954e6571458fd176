# Sourced by the build scripts: compile through ccache when it is installed, with paths taken
# relative to the repository root, so that another clone of the same sources (CI's fresh clone
# after a session on the same machine) reuses the objects. Sets SERVESIM_LAUNCHER (an array of
# CMake arguments, empty without ccache). SERVESIM_NO_CCACHE=1 turns it off.
SERVESIM_LAUNCHER=()
if [[ -z "${SERVESIM_NO_CCACHE:-}" ]] && command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$PWD"
  # -g builds (the sanitizer build) would otherwise hash the working directory into every object.
  export CCACHE_NOHASHDIR=1
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
  SERVESIM_LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
