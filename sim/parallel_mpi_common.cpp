// MpiWorld::launched_ranks, the same with or without MPI compiled in.
#include <cstdlib>
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

}  // namespace servesim
