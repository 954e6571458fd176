// The byte bookkeeping of the MPI exchange (sim/parallel_mpi.h: mpi_offsets, mpi_split), which
// runs the same with or without MPI compiled in: displacements worked by hand, the 2 GiB bound
// at its edge, and a split that gives each rank back exactly its bytes. The exchange itself
// needs several ranks: ctest run_mpi (tests/sim/run_mpi_test.sh).
#include <catch2/catch.hpp>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/parallel_mpi.h"

namespace t_sim_mpi_exchange_test {

using namespace servesim;

TEST_CASE("mpi exchange: each rank's bytes start where the ranks before it end", "[sim][mpi]") {
  size_t total = 99;  // overwritten, not added to
  CHECK(mpi_offsets({3, 0, 5, 2}, total) == std::vector<int>{0, 3, 3, 8});
  CHECK(total == 10);
  CHECK(mpi_offsets({7}, total) == std::vector<int>{0});
  CHECK(total == 7);
  CHECK(mpi_offsets({}, total).empty());
  CHECK(total == 0);
}

TEST_CASE("mpi exchange: up to an int's worth of bytes at once, not one more", "[sim][mpi]") {
  const int max = std::numeric_limits<int>::max();
  size_t total = 0;
  // Exactly INT_MAX bytes in all: MPI's counts and displacements still hold them.
  CHECK(mpi_offsets({max - 10, 10}, total) == std::vector<int>{0, max - 10});
  CHECK(total == static_cast<size_t>(max));
  CHECK_THROWS_WITH(mpi_offsets({max - 10, 11}, total),
                    "MPI: more than 2 GiB from the ranks at once");
  CHECK_THROWS_AS(mpi_offsets({max, max}, total), std::runtime_error);
}

TEST_CASE("mpi exchange: the gathered bytes split back into each rank's string", "[sim][mpi]") {
  const std::vector<std::string> mine{"rank0", "", "r2", "the third\n"};
  std::vector<int> lens;
  std::string all;
  for (const std::string& s : mine) {
    lens.push_back(static_cast<int>(s.size()));
    all += s;
  }
  size_t total = 0;
  const std::vector<int> at = mpi_offsets(lens, total);
  CHECK(total == all.size());
  CHECK(mpi_split(all, lens) == mine);
  for (size_t r = 0; r < mine.size(); ++r)
    CHECK(all.substr(static_cast<size_t>(at[r]), mine[r].size()) == mine[r]);
  CHECK(mpi_split("", {}).empty());
  CHECK(mpi_split("ab", {0, 2, 0}) == std::vector<std::string>{"", "ab", ""});
}

}  // namespace t_sim_mpi_exchange_test
