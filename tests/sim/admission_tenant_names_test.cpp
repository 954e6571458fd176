// admission.rate_limit.tenants (sim/admission.cpp): a tenant name that is not valid is echoed in
// the refusal cut to its first 80 characters, then "...".
#include <catch2/catch.hpp>
#include <string>

#include "tests/support.h"

namespace t_sim_admission_tenant_names_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("admission: a bad tenant name is echoed cut to 80 characters", "[sim][admission]") {
  const auto error = [](const std::string& name) {
    return input_error_of(
        "workload: {synthetic: {requests: 2, arrival: {kind: fixed, rate_per_s: 10},\n"
        "  prompt_tokens: {kind: fixed, value: 8}, output_tokens: {kind: fixed, value: 2}}}\n"
        "step_time: {kind: linear, base_ms: 1}\n"
        "scheduler: {kind: continuous, max_num_seqs: 4}\n"
        "kv: {policy: paged, capacity_tokens: 4096}\n"
        "admission: {rate_limit: {tenants: {" +
        name + ": {rate_per_s: 1, burst: 1}}}}\n");
  };
  // 90 characters: too long for a tenant name (1 to 64), shown as its first 80 and "...".
  const std::string long_name(90, 'x');
  CHECK_THAT(error(long_name),
             Catch::Contains("\"" + std::string(80, 'x') + "...\": a tenant name must be"));
  // 80 exactly: too long all the same, shown whole.
  CHECK_THAT(error(std::string(80, 'y')),
             Catch::Contains("\"" + std::string(80, 'y') + "\": a tenant name must be"));
}

}  // namespace t_sim_admission_tenant_names_test
