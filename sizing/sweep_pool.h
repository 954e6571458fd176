#pragma once
// Running a sweep's points on a pool of threads, and splitting them over MPI ranks.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "sizing/sweep.h"
#include "sizing/sweep_run.h"

namespace servesim {

/// Evaluates the points `indices` of `spec` on `jobs` threads (at least 1; at most one per point).
/// Returns the rows in the order of `indices`, whatever order they finish in, so the result does
/// not depend on `jobs`. `on_done(n)` is called with the count finished so far after each point,
/// from the worker threads (it must be thread-safe). An exception that is not bad input (a bug,
/// or Interrupted once `limits.interrupt` is set) stops the workers and is rethrown here.
[[nodiscard]] std::vector<PointResult> evaluate_points(const SweepSpec& spec,
                                                       const std::vector<size_t>& indices,
                                                       unsigned jobs,
                                                       const std::function<void(size_t)>& on_done,
                                                       const RunLimits& limits = {});

/// The processes of an MPI launch (`mpirun -np N servesim size ...`), or one process alone.
/// With MPI compiled in (CMake SERVESIM_MPI) and the process started by an MPI launcher
/// (mpirun, srun: it sets OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), the constructor calls
/// MPI_Init and the destructor MPI_Finalize; otherwise rank 0 of 1. One per process at a time.
class MpiRanks {
 public:
  MpiRanks();
  ~MpiRanks();
  MpiRanks(const MpiRanks&) = delete;
  MpiRanks& operator=(const MpiRanks&) = delete;

  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int size() const { return m_size; }
  /// Collective: every rank passes its strings; rank 0 gets all of them, rank 0's first, then
  /// rank 1's...; the other ranks get an empty list.
  [[nodiscard]] std::vector<std::string> gather(const std::vector<std::string>& mine) const;
  /// Whether this build can use MPI at all ("servesim --version" style reporting, tests).
  [[nodiscard]] static bool compiled_in();

 private:
  int m_rank = 0;
  int m_size = 1;
  bool m_initialized_here = false;
};

}  // namespace servesim
