#pragma once
// The MPI ranks one run is split over (`mpirun -n R servesim run CONFIG --threads T`): the
// parallel engine's replicas are shared out by rank, then by thread (docs/cluster.md#parallel).
// Built with MPI (CMake SERVESIM_MPI: sim/parallel_mpi.cpp) a process started by an MPI
// launcher joins the launch; built without (sim/parallel_mpi_none.cpp) it is rank 0 of 1, and
// launched_ranks() lets the command line refuse a launch of several.
#include <cstddef>
#include <string>
#include <vector>

namespace servesim {

class MpiWorld {
 public:
  /// Joins the launch (MPI_Init) when MPI is compiled in and the process was started by an MPI
  /// launcher; otherwise rank 0 of 1. At most one at a time, for the run's span.
  MpiWorld();
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int size() const { return m_size; }
  /// Every rank's `mine`, in rank order, on every rank. Collective.
  [[nodiscard]] std::vector<std::string> allgather(const std::string& mine) const;
  /// Every rank's `mine`, in rank order, on rank 0 (the others get nothing). Collective.
  [[nodiscard]] std::vector<std::string> gather(const std::string& mine) const;
  /// Ends the whole launch with `code` (a rank that failed while the others wait for it).
  [[noreturn]] void abort(int code) const;

  [[nodiscard]] static bool compiled_in();
  /// The ranks an MPI launcher started, from its environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE,
  /// MV2_COMM_WORLD_SIZE, or srun's SLURM_STEP_NUM_TASKS): 1 when none did.
  [[nodiscard]] static int launched_ranks();
  /// Open MPI's point-to-point layer for a launch whose ranks all share one node (Open MPI's
  /// OMPI_COMM_WORLD_LOCAL_SIZE equal to OMPI_COMM_WORLD_SIZE): "ob1" (shared memory), which
  /// starts in about 0.02 s where the default UCX layer's probing of the network takes 0.2 s
  /// (docs/performance.md, branch par46). Null, leaving Open MPI's choice, for a launch over
  /// several nodes, another launcher's, or when OMPI_MCA_pml already says which.
  [[nodiscard]] static const char* one_node_pml();

 private:
  int m_rank = 0, m_size = 1;
  bool m_initialized_here = false;
};

/// The exchange's bookkeeping (sim/parallel_mpi_common.cpp): each rank's byte count `lens` as
/// MPI displacements (rank r's bytes start at the sum of the counts before it), their sum in
/// `total`. Throws std::runtime_error when the sum exceeds an int (MPI's count type).
[[nodiscard]] std::vector<int> mpi_offsets(const std::vector<int>& lens, size_t& total);
/// `all`, the ranks' bytes back to back, cut into one string a rank by `lens`.
[[nodiscard]] std::vector<std::string> mpi_split(const std::string& all,
                                                 const std::vector<int>& lens);

}  // namespace servesim
