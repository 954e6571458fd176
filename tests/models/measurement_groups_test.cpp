// A Splitwise-format file of several model/hardware/tp groups read without a selection
// (models/measurements.h): the message names at most 10 groups, and says how many more there
// are, at the edge: 10 groups are all named, 11 name 10 and "1 more".
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "models/measurements.h"
#include "tests/support.h"

namespace t_models_measurement_groups_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string message_of_groups(int n) {
  std::string rows =
      "model,hardware,tensor_parallel,prompt_size,batch_size,token_size,prompt_time,token_time\n";
  for (int i = 0; i < n; ++i) rows += fmt::format("m{:02},h100,1,128,1,16,10.5,20.25\n", i);
  const std::string path = write_temp("groups.csv", rows);
  try {
    (void)read_splitwise(path, {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("measurements: ten groups are all named, an eleventh is counted as one more",
          "[models][fit]") {
  const std::string ten = message_of_groups(10);
  CHECK_THAT(ten, Catch::Contains("several model/hardware/tp groups"));
  CHECK_THAT(ten, Catch::Contains("--source-model m09 --source-hardware h100 --source-tp 1"));
  CHECK_THAT(ten, !Catch::Contains("more)"));
  const std::string eleven = message_of_groups(11);
  CHECK_THAT(eleven, Catch::Contains("--source-model m09 "));
  CHECK_THAT(eleven, !Catch::Contains("--source-model m10 "));
  CHECK_THAT(eleven, Catch::EndsWith("; ... (1 more)"));
  // One group is no choice to make: it is read.
  CHECK(message_of_groups(1) == "(no error)");
}

}  // namespace t_models_measurement_groups_test
