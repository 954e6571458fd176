#pragma once
// Stand-ins the step-model tests share: an operator source whose every operator takes 1 ms (a
// test overrides the ones it measures), and a host-time profile with a hidden and a visible part.
#include <string>

#include "models/host_time.h"
#include "models/operator_source.h"

namespace servesim::test {

/// Every operator 1 ms.
struct UnitOperatorSource : OperatorSource {
  std::string describe() const override { return "stub"; }
  double gemm_ms(double, double, double, const std::string&) const override { return 1; }
  double context_attention_ms(double, double, const AttentionHeads&, const std::string&,
                              const std::string&) const override {
    return 1;
  }
  double generation_attention_ms(double, double, const AttentionHeads&, const std::string&,
                                 const std::string&) const override {
    return 1;
  }
  double moe_ms(double, const MoeShape&, const std::string&, const std::string&) const override {
    return 1;
  }
  double allreduce_ms(double, double) const override { return 1; }
  double elementwise_ms(double) const override { return 1; }
};

/// Schedule 0.5 + 0.1 x sequences (hidden under overlap), sample 0.2 a step (never hidden).
inline HostTime two_part_host(bool overlap) {
  HostTime h;
  h.parts[static_cast<size_t>(HostPart::Schedule)] = {0.5, 0.1};
  h.parts[static_cast<size_t>(HostPart::Sample)] = {0.2, 0.0};
  h.hidden[static_cast<size_t>(HostPart::Schedule)] = true;
  h.overlap = overlap;
  return h;
}

}  // namespace servesim::test
