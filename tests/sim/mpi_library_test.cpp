// Loading the MPI plugin (sim/mpi_library.h): where it is looked for, and what is said when a
// path holds no usable plugin. A real load and MPI_Init are tested under mpirun (run_mpi,
// size_mpi_np2/3 in tests/CMakeLists.txt); this test program does not initialise MPI.
#include "sim/mpi_library.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/errors.h"

namespace t_sim_mpi_library_test {

using namespace servesim;

TEST_CASE("mpi library: SERVESIM_MPI_PLUGIN alone, else beside and above the executable", "[sim]") {
  const char* old = std::getenv("SERVESIM_MPI_PLUGIN");
  const std::string kept = old != nullptr ? old : "";
  setenv("SERVESIM_MPI_PLUGIN", "/opt/x/libservesim_mpi.so", 1);
  CHECK(mpi_library_candidates() == std::vector<std::string>{"/opt/x/libservesim_mpi.so"});
  unsetenv("SERVESIM_MPI_PLUGIN");
  const std::vector<std::string> c = mpi_library_candidates();
  REQUIRE(c.size() >= 2);
  for (const std::string& p : c) {
    CHECK(p.size() > 19);
    CHECK(p.substr(p.size() - 19) == "/libservesim_mpi.so");
  }
  CHECK(c[1].find("/servesim/libservesim_mpi.so") != std::string::npos);  // the installed layout
  if (old != nullptr) setenv("SERVESIM_MPI_PLUGIN", kept.c_str(), 1);
}

TEST_CASE("mpi library: a path without a usable plugin is named with the reason", "[sim]") {
  std::string why;
  CHECK(open_mpi_plugin("/nonexistent/libservesim_mpi.so", why) == nullptr);
  CHECK(why == "\n  /nonexistent/libservesim_mpi.so: no such file");
  // A file that is not a shared object: dlopen's own message follows the path.
  const std::string text = "mpi_library_test_not_elf.so";
  std::ofstream(text) << "not an ELF file\n";
  why.clear();
  CHECK(open_mpi_plugin(text, why) == nullptr);
  CHECK(why.rfind("\n  " + text + ": ", 0) == 0);
  CHECK(why.size() > text.size() + 6);
  std::remove(text.c_str());
}

TEST_CASE("mpi library: no plugin found is an input error naming where it looked", "[sim]") {
  const char* old = std::getenv("SERVESIM_MPI_PLUGIN");
  const std::string kept = old != nullptr ? old : "";
  setenv("SERVESIM_MPI_PLUGIN", "/nonexistent/plugin.so", 1);
  try {
    (void)mpi_library();
    FAIL("loaded a plugin that does not exist");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.find("/nonexistent/plugin.so: no such file") != std::string::npos);
    CHECK(m.find("SERVESIM_MPI_PLUGIN") != std::string::npos);
  }
  if (old != nullptr) {
    setenv("SERVESIM_MPI_PLUGIN", kept.c_str(), 1);
  } else {
    unsetenv("SERVESIM_MPI_PLUGIN");
  }
}

}  // namespace t_sim_mpi_library_test
