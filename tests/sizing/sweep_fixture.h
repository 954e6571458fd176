#pragma once
// A sizing sweep over a base that needs no catalogue, for tests that build rows by hand: only
// the files that use it include it, so nothing else rebuilds when it changes.
#include <filesystem>
#include <fstream>
#include <string>

#include "sizing/sweep.h"
#include "tests/support.h"

namespace servesim::test {

/// A sweep of `axes` (the lines under `axes:`, indented) over a small synthetic base.
inline SweepSpec sweep_of(const std::string& axes) {
  const std::filesystem::path dir = temp_dir();
  std::ofstream(dir / "base.yaml")
      << "workload: {synthetic: {requests: 4, arrival: {kind: fixed, rate_per_s: 4},\n"
         "  prompt_tokens: {kind: fixed, value: 20}, output_tokens: {kind: fixed, value: 5}}}\n"
         "step_time: {kind: linear, base_ms: 8, per_seq_ms: 2}\n"
         "scheduler: {kind: continuous, max_num_seqs: 8}\n"
         "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n";
  std::ofstream(dir / "s.yaml") << "base: base.yaml\nslo: {ttft_ms: 500, tpot_ms: 100}\naxes:\n"
                                << axes;
  return load_sweep((dir / "s.yaml").string());
}

}  // namespace servesim::test
