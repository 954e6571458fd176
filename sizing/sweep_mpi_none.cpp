// MpiRanks without MPI (CMake SERVESIM_MPI off or MPI not found): one process, rank 0 of 1.
#include "sizing/sweep_pool.h"

namespace servesim {

MpiRanks::MpiRanks() = default;
MpiRanks::~MpiRanks() = default;

std::vector<std::string> MpiRanks::gather(const std::vector<std::string>& mine) const {
  return mine;
}

bool MpiRanks::compiled_in() { return false; }

}  // namespace servesim
