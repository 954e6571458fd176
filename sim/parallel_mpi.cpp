// MpiWorld with MPI (CMake SERVESIM_MPI): byte strings between the ranks of one run, through
// the MPI plugin (sim/mpi_library.h), loaded only when a launcher started several ranks.
#include "sim/parallel_mpi.h"

#include <cstdlib>
#include <stdexcept>

#include "sim/mpi_library.h"
#include "sim/mpi_plugin.h"

namespace servesim {
namespace {

void mpi_ok(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

}  // namespace

MpiWorld::MpiWorld() {
  if (launched_ranks() <= 1) return;  // a process started alone stays one (no MPI_Init)
  const servesim_mpi_api& mpi = mpi_library();
  // All ranks on one node: shared memory, without the 0.2 s of UCX's start (read by MPI_Init).
  if (const char* pml = one_node_pml()) setenv("OMPI_MCA_pml", pml, 0);
  int here = 0;
  mpi_ok(mpi.init(&here, &m_rank, &m_size), "MPI_Init");
  m_initialized_here = here != 0;
}

MpiWorld::~MpiWorld() {
  if (m_initialized_here) mpi_library().finalize();
}

std::vector<std::string> MpiWorld::allgather(const std::string& mine) const {
  if (m_size == 1) return {mine};
  const servesim_mpi_api& mpi = mpi_library();
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(m_size));
  mpi_ok(mpi.allgather_int(len, lens.data()), "MPI_Allgather");
  size_t total = 0;
  const std::vector<int> at = mpi_offsets(lens, total);
  std::string all(total, '\0');
  mpi_ok(mpi.allgatherv_bytes(mine.data(), len, all.data(), lens.data(), at.data()),
         "MPI_Allgatherv");
  return mpi_split(all, lens);
}

std::vector<std::string> MpiWorld::gather(const std::string& mine) const {
  if (m_size == 1) return {mine};
  const servesim_mpi_api& mpi = mpi_library();
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(m_size));
  mpi_ok(mpi.gather_int(len, lens.data(), 0), "MPI_Gather");
  size_t total = 0;
  const std::vector<int> at = mpi_offsets(lens, total);
  std::string all(m_rank == 0 ? total : 0, '\0');
  mpi_ok(mpi.gatherv_bytes(mine.data(), len, all.data(), lens.data(), at.data(), 0), "MPI_Gatherv");
  if (m_rank != 0) return {};
  return mpi_split(all, lens);
}

void MpiWorld::abort(int code) const {
  if (m_size > 1) mpi_library().abort_all(code);
  std::exit(code);
}

bool MpiWorld::compiled_in() { return true; }

}  // namespace servesim
