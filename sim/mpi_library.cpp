// Loading the MPI plugin (sim/mpi_library.h) with dlopen.
#include "sim/mpi_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "core/errors.h"
#include "sim/mpi_plugin.h"

#ifndef SERVESIM_MPI_PLUGIN_NAME
#define SERVESIM_MPI_PLUGIN_NAME "libservesim_mpi.so"
#endif
// The installed plugin's folder relative to the installed executable's (bin/ -> lib/servesim).
#ifndef SERVESIM_MPI_PLUGIN_FROM_BIN
#define SERVESIM_MPI_PLUGIN_FROM_BIN "../lib/servesim"
#endif
// The build folder's plugin: test programs run from other folders of the build.
#ifndef SERVESIM_MPI_PLUGIN_BUILD_PATH
#define SERVESIM_MPI_PLUGIN_BUILD_PATH ""
#endif

namespace servesim {
namespace {

std::filesystem::path plugin_exe_folder() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

const servesim_mpi_api* load_plugin() {
  std::string why;
  for (const std::string& path : mpi_library_candidates())
    if (const servesim_mpi_api* api = open_mpi_plugin(path, why)) return api;
  throw InputError(
      "MPI: cannot load servesim's MPI plugin " SERVESIM_MPI_PLUGIN_NAME
      " (it links MPI for runs and sweeps over ranks; docs/cluster.md#parallel). Looked in:" +
      why + "\nSet SERVESIM_MPI_PLUGIN to its path, or reinstall servesim with it.");
}

}  // namespace

const servesim_mpi_api* open_mpi_plugin(const std::string& path, std::string& why) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    why += "\n  " + path + ": no such file";
    return nullptr;
  }
  // RTLD_GLOBAL: Open MPI loads its own components later, and they look MPI's symbols up in
  // the global scope.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    why += "\n  " + path + ": " + (e != nullptr ? e : "dlopen failed");
    return nullptr;
  }
  using Entry = const servesim_mpi_api* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "servesim_mpi_plugin"));
  const servesim_mpi_api* api = entry != nullptr ? entry() : nullptr;
  if (api == nullptr) {
    why += "\n  " + path + ": not a servesim MPI plugin (no servesim_mpi_plugin)";
  } else if (api->version != SERVESIM_MPI_PLUGIN_VERSION) {
    why += "\n  " + path + ": a plugin of another servesim version (interface " +
           std::to_string(api->version) + ", this servesim needs " +
           std::to_string(SERVESIM_MPI_PLUGIN_VERSION) + ")";
  } else {
    return api;  // kept loaded for the process
  }
  dlclose(handle);
  return nullptr;
}

std::vector<std::string> mpi_library_candidates() {
  if (const char* p = std::getenv("SERVESIM_MPI_PLUGIN"); p != nullptr && *p != '\0') return {p};
  std::vector<std::string> out;
  if (const std::filesystem::path dir = plugin_exe_folder(); !dir.empty()) {
    out.push_back((dir / SERVESIM_MPI_PLUGIN_NAME).string());
    out.push_back((dir / SERVESIM_MPI_PLUGIN_FROM_BIN / SERVESIM_MPI_PLUGIN_NAME)
                      .lexically_normal()
                      .string());
  }
  if (const std::string built = SERVESIM_MPI_PLUGIN_BUILD_PATH; !built.empty()) {
    bool seen = false;
    for (const std::string& p : out) seen = seen || p == built;
    if (!seen) out.push_back(built);
  }
  return out;
}

const servesim_mpi_api& mpi_library() {
  // A failed load throws from call_once and is tried again on the next call.
  static std::once_flag once;
  static const servesim_mpi_api* api = nullptr;
  std::call_once(once, [] { api = load_plugin(); });
  return *api;
}

}  // namespace servesim
