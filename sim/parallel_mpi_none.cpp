// MpiWorld without MPI (CMake SERVESIM_MPI off or MPI not found): one process, rank 0 of 1.
#include <cstdlib>

#include "sim/parallel_mpi.h"

namespace servesim {

MpiWorld::MpiWorld() = default;
MpiWorld::~MpiWorld() = default;

std::vector<std::string> MpiWorld::allgather(const std::string& mine) const { return {mine}; }
std::vector<std::string> MpiWorld::gather(const std::string& mine) const { return {mine}; }
void MpiWorld::abort(int code) const { std::exit(code); }
bool MpiWorld::compiled_in() { return false; }

}  // namespace servesim
