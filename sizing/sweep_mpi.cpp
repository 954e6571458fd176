// MpiRanks with MPI (CMake SERVESIM_MPI): ranks gather serialized rows on rank 0.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

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
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

}  // namespace

MpiRanks::MpiRanks() {
  if (!launched_by_mpi()) return;
  int already = 0;
  check(MPI_Initialized(&already), "MPI_Initialized");
  if (!already) {
    check(MPI_Init(nullptr, nullptr), "MPI_Init");
    m_initialized_here = true;
  }
  check(MPI_Comm_rank(MPI_COMM_WORLD, &m_rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &m_size), "MPI_Comm_size");
}

MpiRanks::~MpiRanks() {
  if (m_initialized_here) MPI_Finalize();
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
  check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
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
  check(MPI_Gatherv(buf.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD),
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
