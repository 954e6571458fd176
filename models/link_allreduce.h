#pragma once
// `operators.allreduce: link` (docs/config.md#kind-operator): the all-reduce of an operator
// source timed from the accelerator's interconnect instead of a measured table, for a host
// whose table does not describe the link the deployment has (the L40S tables were measured on
// a host without PCIe peer-to-peer: docs/validation.md#the-mlperf-development-set).
//
// A ring all-reduce sends and receives 2 (n - 1) / n of the message on each GPU's link, so
//   t = 2 (n - 1) / n x 2 elements / (interconnect_gb_per_s / 2 x efficiency) + latency
// with the catalogue's interconnect (both directions together, so one direction is half) and
// bf16 elements. The defaults are measured on PCIe (NCCL all_reduce_perf, P2P through PCIe
// switches): a bus bandwidth of 41.1 GB/s of the 63 GB/s one direction of PCIe 5.0 x16 gives,
// and a small-message all-reduce of about 25 us (voipmonitor/rtx6kpro,
// hardware/pcie-bandwidth.md, RTX PRO 6000 systems).
#include <memory>

#include "models/catalog.h"
#include "models/operator_source.h"

namespace servesim {

struct LinkAllreduce {
  double interconnect_gb_per_s = 0;  ///< both directions together, as the catalogue gives it
  double efficiency = 0.65;          ///< bus bandwidth / one direction's link rate
  double latency_us = 25;            ///< the fixed cost of one all-reduce
};

/// `src` with its all-reduce replaced by the link model; every other operator unchanged.
[[nodiscard]] std::unique_ptr<OperatorSource> with_link_allreduce(
    std::unique_ptr<OperatorSource> src, const LinkAllreduce& link);

/// The link model's time of one all-reduce of `elements` bf16 elements across `gpus` GPUs.
[[nodiscard]] double link_allreduce_ms(const LinkAllreduce& link, double elements, double gpus);

}  // namespace servesim
