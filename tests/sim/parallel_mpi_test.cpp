// MpiWorld::launched_ranks (sim/parallel_mpi.h): the ranks an MPI launcher says it started, from
// its environment, which `servesim run` joins (with MPI) or refuses (without).
#include "sim/parallel_mpi.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

namespace t_sim_parallel_mpi_test {

using namespace servesim;

namespace {

/// Sets `name` to `value` for its scope (unset when null), and puts back what was there.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    m_had = std::getenv(name) != nullptr;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~EnvVar() {
    if (m_had) {
      setenv(m_name, m_old.c_str(), 1);
    } else {
      unsetenv(m_name);
    }
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* m_name;
  std::string m_old;
  bool m_had = false;
};

}  // namespace

TEST_CASE("parallel mpi: the launcher's environment gives the ranks", "[sim]") {
  EnvVar a("OMPI_COMM_WORLD_SIZE", nullptr), b("PMI_SIZE", nullptr),
      c("MV2_COMM_WORLD_SIZE", nullptr), d("SLURM_STEP_NUM_TASKS", nullptr);
  CHECK(MpiWorld::launched_ranks() == 1);
  {
    EnvVar n("OMPI_COMM_WORLD_SIZE", "4");
    CHECK(MpiWorld::launched_ranks() == 4);
  }
  {
    EnvVar n("SLURM_STEP_NUM_TASKS", "2");
    CHECK(MpiWorld::launched_ranks() == 2);
  }
  {
    EnvVar n("PMI_SIZE", "1");  // one rank: a plain process
    CHECK(MpiWorld::launched_ranks() == 1);
  }
}

TEST_CASE("parallel mpi: Open MPI's ranks on one node get the shared-memory pml", "[sim]") {
  EnvVar a("OMPI_COMM_WORLD_SIZE", "2"), b("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
      c("OMPI_MCA_pml", nullptr);
  CHECK(std::string(MpiWorld::one_node_pml() ? MpiWorld::one_node_pml() : "") == "ob1");
  {
    EnvVar n("OMPI_COMM_WORLD_LOCAL_SIZE", "1");  // two nodes of one rank: Open MPI's choice
    CHECK(MpiWorld::one_node_pml() == nullptr);
  }
  {
    EnvVar n("OMPI_MCA_pml", "ucx");  // the user's choice stands
    CHECK(MpiWorld::one_node_pml() == nullptr);
  }
  {
    EnvVar n("OMPI_COMM_WORLD_SIZE", "1"), m("OMPI_COMM_WORLD_LOCAL_SIZE", "1");  // one rank
    CHECK(MpiWorld::one_node_pml() == nullptr);
  }
  {
    EnvVar n("OMPI_COMM_WORLD_LOCAL_SIZE", nullptr);  // not said: Open MPI's choice
    CHECK(MpiWorld::one_node_pml() == nullptr);
  }
}

TEST_CASE("parallel mpi: a process started alone is rank 0 of 1", "[sim]") {
  EnvVar a("OMPI_COMM_WORLD_SIZE", nullptr), b("PMI_SIZE", nullptr),
      c("MV2_COMM_WORLD_SIZE", nullptr), d("SLURM_STEP_NUM_TASKS", nullptr);
  const MpiWorld world;  // no MPI_Init: nothing launched it
  CHECK(world.rank() == 0);
  CHECK(world.size() == 1);
  CHECK(world.allgather("x") == std::vector<std::string>{"x"});
  CHECK(world.gather("y") == std::vector<std::string>{"y"});
}

}  // namespace t_sim_parallel_mpi_test
