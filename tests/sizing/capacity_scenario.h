// The capacity tests' hand-worked scenario, shared by tests/sizing/capacity_test.cpp,
// tests/cli/sim_options_test.cpp and tests/cli/interrupt_test.cpp.
#pragma once

#include <string>

namespace servesim::test {

// 100 requests at a fixed interval of 0.1 s (10 requests/s), each with one prompt token and one
// output token, so each is one prefill step; every step takes 10 ms (linear, base_ms) and one
// request runs at a time (max_num_seqs 1). Scaling the rate by s makes the gap 100/s ms.
//   gap >= 10 ms (s <= 10): each request starts on arrival, TTFT = 10 ms exactly (at s = 10 a
//     step ends at the instant the next request arrives; step ends run first).
//   gap < 10 ms (s > 10): request i waits i x (10 - gap) ms, so the p99 of TTFT (between the
//     two largest of 100) is above 10 ms.
// With slo.ttft_ms 10 the capacity is s = 10: 100 requests/s. The search probes 1, 2, 4, 8 (meet),
// 16 (fails), then bisects: 12 fails, 10 meets, 11, 10.5, 10.25, 10.125, 10.0625 fail; the bracket
// [10, 10.0625] is within 1% of 10.
inline const std::string k_capacity_scenario = R"(workload:
  synthetic:
    requests: 100
    arrival: {kind: fixed, rate_per_s: 10}
    prompt_tokens: {kind: fixed, value: 1}
    output_tokens: {kind: fixed, value: 1}
step_time: {kind: linear, base_ms: 10}
scheduler: {kind: continuous, max_num_seqs: 1}
kv: {policy: paged, capacity_tokens: 1000, block_size: 1}
slo: {ttft_ms: 10}
)";

}  // namespace servesim::test
