// MpiWorld with MPI (CMake SERVESIM_MPI): byte strings between the ranks of one run.
#include "sim/parallel_mpi.h"

#include <mpi.h>

#include <cstdlib>
#include <stdexcept>

namespace servesim {
namespace {

void mpi_ok(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

}  // namespace

MpiWorld::MpiWorld() {
  if (launched_ranks() <= 1) return;  // a process started alone stays one (no MPI_Init)
  int already = 0;
  mpi_ok(MPI_Initialized(&already), "MPI_Initialized");
  if (!already) {
    // All ranks on one node: shared memory, without the 0.2 s of UCX's start (read by MPI_Init).
    if (const char* pml = one_node_pml()) setenv("OMPI_MCA_pml", pml, 0);
    mpi_ok(MPI_Init(nullptr, nullptr), "MPI_Init");
    m_initialized_here = true;
  }
  mpi_ok(MPI_Comm_rank(MPI_COMM_WORLD, &m_rank), "MPI_Comm_rank");
  mpi_ok(MPI_Comm_size(MPI_COMM_WORLD, &m_size), "MPI_Comm_size");
}

MpiWorld::~MpiWorld() {
  if (m_initialized_here) MPI_Finalize();
}

std::vector<std::string> MpiWorld::allgather(const std::string& mine) const {
  if (m_size == 1) return {mine};
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(m_size));
  mpi_ok(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  size_t total = 0;
  const std::vector<int> at = mpi_offsets(lens, total);
  std::string all(total, '\0');
  mpi_ok(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR,
                        MPI_COMM_WORLD),
         "MPI_Allgatherv");
  return mpi_split(all, lens);
}

std::vector<std::string> MpiWorld::gather(const std::string& mine) const {
  if (m_size == 1) return {mine};
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(m_size));
  mpi_ok(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  size_t total = 0;
  const std::vector<int> at = mpi_offsets(lens, total);
  std::string all(m_rank == 0 ? total : 0, '\0');
  mpi_ok(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, 0,
                     MPI_COMM_WORLD),
         "MPI_Gatherv");
  if (m_rank != 0) return {};
  return mpi_split(all, lens);
}

void MpiWorld::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

bool MpiWorld::compiled_in() { return true; }

}  // namespace servesim
