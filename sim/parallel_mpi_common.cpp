// MpiWorld::launched_ranks and the exchange's byte bookkeeping, the same with or without MPI
// compiled in (so the one-process test suite runs them).
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/parallel_mpi.h"

namespace servesim {

int MpiWorld::launched_ranks() {
  // Open MPI's mpirun, MPICH's and Intel's (PMI), MVAPICH's, and Slurm's srun (a job step's
  // tasks, whatever PMI it uses).
  for (const char* v :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"})
    if (const char* s = std::getenv(v); s != nullptr) {
      const int n = std::atoi(s);
      return n > 1 ? n : 1;
    }
  return 1;
}

const char* MpiWorld::one_node_pml() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (size == nullptr || local == nullptr || std::getenv("OMPI_MCA_pml") != nullptr) return nullptr;
  const int n = std::atoi(size);
  return n > 1 && std::atoi(local) == n ? "ob1" : nullptr;
}

std::vector<int> mpi_offsets(const std::vector<int>& lens, size_t& total) {
  std::vector<int> at(lens.size());
  total = 0;
  for (size_t r = 0; r < lens.size(); ++r) {
    at[r] = static_cast<int>(total);
    total += static_cast<size_t>(lens[r]);
  }
  if (total > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("MPI: more than 2 GiB from the ranks at once");
  return at;
}

std::vector<std::string> mpi_split(const std::string& all, const std::vector<int>& lens) {
  std::vector<std::string> out;
  size_t at = 0;
  for (const int n : lens) {
    out.push_back(all.substr(at, static_cast<size_t>(n)));
    at += static_cast<size_t>(n);
  }
  return out;
}

}  // namespace servesim
