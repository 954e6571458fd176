#pragma once
// The MPI plugin (sim/mpi_plugin.h), loaded when first asked for: a run or a sweep that an MPI
// launcher started. The executable itself does not link MPI, so that every other run starts
// without loading Open MPI's seven shared objects (docs/performance.md, branch mpi49).
#include <string>
#include <vector>

struct servesim_mpi_api;

namespace servesim {

/// The plugin's table, loaded once for the process (thread-safe). Throws InputError (exit
/// status 2) naming every place it looked, and why each failed, when no usable plugin is found.
[[nodiscard]] const servesim_mpi_api& mpi_library();

/// The plugin at `path`, or null with the reason appended to `why` ("\n  PATH: reason"): no
/// such file, dlopen's error, not a plugin, or a plugin of another interface version. A plugin
/// that loads stays loaded for the process.
[[nodiscard]] const servesim_mpi_api* open_mpi_plugin(const std::string& path, std::string& why);

/// Where mpi_library looks, in order: the path in SERVESIM_MPI_PLUGIN alone when that is set;
/// otherwise libservesim_mpi.so beside the executable (a build folder), in the installed
/// layout's lib/servesim relative to the executable's folder, and in the build folder this
/// servesim was compiled in.
[[nodiscard]] std::vector<std::string> mpi_library_candidates();

}  // namespace servesim
