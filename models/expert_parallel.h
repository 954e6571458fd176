#pragma once
// Wide expert parallelism with data-parallel attention, for the operator step model
// (`step_time.kind: operator` with `data_parallel` > 1; docs/expert-parallelism.md).
//
// A replica is one EP group of tensor_parallel x data_parallel GPUs. Attention (and the other
// dense layers) run data-parallel: each of the data_parallel ranks holds its own requests, their
// KV and a copy of the attention weights, split tensor_parallel ways. The experts are spread over
// all the group's GPUs (expert_parallel = the whole group). Per MoE layer each GPU sends its
// tokens' hidden states to the GPUs holding their experts (dispatch) and receives the results
// back (combine): two all-to-alls. The engine steps every rank in lockstep, so a step lasts as
// long as its busiest rank (attention and dense layers at that rank's share of the batch) plus
// the MoE blocks of the busiest GPU (all the group's tokens, times `expert_skew`).
//
// This file holds the pieces the operator model composes: the busiest rank's share of a step,
// the all-to-all's time (from NCCL's measured alltoall table in one node, a link model across
// nodes) and the MoE block beyond the widest expert parallelism the tables measured.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/config.h"
#include "models/catalog.h"
#include "models/log_interp.h"
#include "models/operator_source.h"
#include "models/step_time_model.h"

namespace servesim {

/// The busiest of `ranks` data-parallel ranks given a step of all ranks' seats, assigned as
/// evenly as the engine can: each count divided by `ranks` and rounded up, except the prefill
/// tokens, which are at least the step's largest chunk (one request's chunk stays on one rank;
/// estimated as sum(chunk^2) / sum(chunk), exact for one chunk, never above the largest). The
/// chunks' squared sum and stored prefix, and the decodes' KV reads, shrink with the rank's
/// share; the longest and shortest decode reads stay. REQUIRES: ranks >= 1. ranks == 1 returns
/// `s` unchanged.
[[nodiscard]] StepShape busiest_rank(const StepShape& s, int32_t ranks);

/// The links an all-to-all crosses.
struct AllToAllLinks {
  double gpus_per_node = 8;
  double intra_bytes_per_ms = 450e6;  ///< one GPU's NVLink bandwidth, one direction
  double inter_bytes_per_ms = 50e6;   ///< one GPU's network bandwidth, one direction
  double latency_ms = 0.01;           ///< once per all-to-all
};

/// The link model of one all-to-all across `gpus` GPUs, each sending `bytes` in all, an equal
/// share to every GPU of the group (its own included, which stays put): the shares to the other
/// GPUs of its node cross NVLink, the rest the network, both at once:
///   latency + max((n - 1) / gpus x bytes / intra, (gpus - n) / gpus x bytes / inter),
/// n = min(gpus, gpus_per_node). REQUIRES: gpus >= 1, bytes >= 0.
[[nodiscard]] double link_all_to_all_ms(const AllToAllLinks& links, double bytes, double gpus);

/// One all-to-all's time: NCCL's measured `alltoall` (half) rows of nccl.csv when the group fits
/// in one node and the table measured its GPU count (the curve over elements = bytes / 2, the
/// whole buffer a GPU sends, as nccl-tests counts it), else the link model.
class AllToAll {
 public:
  /// `nccl_csv` may be empty: the link model only. Throws InputError for an unreadable table.
  AllToAll(AllToAllLinks links, const std::filesystem::path& nccl_csv);
  [[nodiscard]] double ms(double bytes, double gpus) const;
  /// Whether ms(_, gpus) reads the table.
  [[nodiscard]] bool measured(double gpus) const;
  [[nodiscard]] const AllToAllLinks& links() const { return m_links; }

 private:
  AllToAllLinks m_links;
  std::map<double, LogCurve> m_table;  // by GPU count
};

/// Expected distinct members hit when `draws` picks fall uniformly on `members`:
/// members x (1 - (1 - 1 / members)^draws). The GPUs a token's top-k experts live on (dispatch
/// sends a token once to each), or the local experts a GPU's tokens touch.
[[nodiscard]] double distinct_hit(double members, double draws);

/// What the roofline of a MoE block needs to compare two expert-parallel widths.
struct MoeRoofs {
  double weight_bytes = 1;  ///< bytes per weight of the expert GEMMs
  double bytes_per_ms = 1;  ///< the GPU's memory bandwidth
  double flops_per_ms = 1;  ///< its dense peak in the MoE dtype
};

/// One MoE block (no communication) on the busiest GPU of `shape.moe_ep` expert-parallel GPUs,
/// `tokens` entering the group. Read from `src` at shape.moe_ep when it has it; otherwise (the
/// tables measure moe_ep up to 8) from the widest power-of-two width m < moe_ep that `src`
/// answers, at tokens x m / moe_ep (the same expert-token pairs per GPU), times the roofline
/// ratio roof(tokens, moe_ep) / roof(tokens x m / moe_ep, m), roof = max(weights of the local
/// experts the pairs touch / bandwidth, FLOPs / peak): the same arithmetic, fewer expert
/// weights to read. `measured_ep` (0: not yet known) caches m between calls.
[[nodiscard]] double wide_moe_ms(const OperatorSource& src, double tokens, const MoeShape& shape,
                                 const std::string& dtype, const std::string& distribution,
                                 const MoeRoofs& roofs, double& measured_ep);

/// What the operator model adds for `data_parallel` > 1 (docs/expert-parallelism.md).
struct WideEp {
  int32_t ranks = 1;          ///< data_parallel
  double skew = 1;            ///< expert_skew: the busiest GPU's expert tokens / the mean
  double dispatch_bytes = 2;  ///< per hidden element sent by dispatch (combine sends bf16)
  /// two_batch_overlap: the step runs as two micro-batches, each one's all-to-alls hidden behind
  /// the other's compute (SGLang's and TensorRT-LLM's two-batch overlap).
  bool two_batch_overlap = false;
  std::shared_ptr<const AllToAll> all_to_all;
};

/// Reads the wide-EP keys of an operator section (expert_skew, dispatch_dtype, gpus_per_node,
/// intra_node_gb_per_s, inter_node_gb_per_s, all_to_all_latency_us, two_batch_overlap) for `ranks`
/// > 1, and with `operators.source: tables` finds the GPU's nccl-*/nccl.csv; with `ranks` == 1
/// refuses them.
[[nodiscard]] WideEp read_wide_ep(const Cfg& c, const HardwareSpec& hw, int64_t ranks);

/// Bytes each GPU sends in one MoE layer's dispatch (or, at 2 bytes an element, its combine):
/// its `tokens` x the GPUs their top-k experts live on x hidden x bytes, times the skew.
[[nodiscard]] double dispatch_bytes(double tokens, const MoeShape& shape, double element_bytes,
                                    double skew);

/// A step under two-batch overlap, from one micro-batch's (half the step's) compute and
/// all-to-all times, each summed over the layers: the two micro-batches alternate per layer, one
/// computing while the other's dispatch or combine is in flight, so each layer takes the longer
/// of the two and only one layer's shorter part is left uncovered at the edges:
///   2 x max(compute, comm) + min(compute, comm) / layers.
[[nodiscard]] double two_batch_overlap_ms(double half_compute_ms, double half_comm_ms,
                                          double layers);

}  // namespace servesim
