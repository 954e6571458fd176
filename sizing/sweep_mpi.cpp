// MpiRanks with MPI (CMake SERVESIM_MPI): ranks gather serialized rows on rank 0, through the
// MPI plugin (sim/mpi_library.h), loaded only when a launcher started the process.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "sim/mpi_library.h"
#include "sim/mpi_plugin.h"
#include "sizing/sweep_pool.h"

namespace servesim {
namespace {

// An MPI launcher sets one of these; a process started alone does not call MPI_Init, so a
// build with MPI still runs as a plain program (no singleton start-up, no launcher needed).
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

}  // namespace

MpiRanks::MpiRanks() {
  if (!launched_by_mpi()) return;
  int here = 0;
  check(mpi_library().init(&here, &m_rank, &m_size), "MPI_Init");
  m_initialized_here = here != 0;
}

MpiRanks::~MpiRanks() {
  if (m_initialized_here) mpi_library().finalize();
}

std::vector<std::string> MpiRanks::gather(const std::vector<std::string>& mine) const {
  if (m_size == 1) return mine;
  // One buffer per rank: each string as its length (8 bytes) and its bytes.
  std::string buf;
  for (const auto& s : mine) {
    const uint64_t n = s.size();
    buf.append(reinterpret_cast<const char*>(&n), sizeof n);
    buf += s;
  }
  const int len = static_cast<int>(buf.size());
  std::vector<int> lens(static_cast<size_t>(m_size));
  const servesim_mpi_api& mpi = mpi_library();
  check(mpi.gather_int(len, lens.data(), 0), "MPI_Gather");
  std::vector<int> offsets(lens.size());
  std::string all;
  if (m_rank == 0) {
    int total = 0;
    for (size_t r = 0; r < lens.size(); ++r) {
      offsets[r] = total;
      total += lens[r];
    }
    all.resize(static_cast<size_t>(total));
  }
  check(mpi.gatherv_bytes(buf.data(), len, all.data(), lens.data(), offsets.data(), 0),
        "MPI_Gatherv");
  std::vector<std::string> out;
  for (size_t p = 0; p < all.size();) {
    uint64_t n = 0;
    std::copy_n(all.data() + p, sizeof n, reinterpret_cast<char*>(&n));
    p += sizeof n;
    out.push_back(all.substr(p, n));
    p += n;
  }
  return out;
}

bool MpiRanks::compiled_in() { return true; }

}  // namespace servesim
