#pragma once
// Speculative decoding (docs/speculative.md): a proposer drafts k tokens per decoding sequence,
// the target model verifies them in one step of k + 1 query tokens per sequence, and the
// sequence gains the accepted drafts plus the one token the verify computes itself.
//
// The `speculative` section is read here (read_speculative). The engine (sim/simulation.cpp)
// asks a Speculator three things a step: whether to speculate (k, or 0 above max_batch), the
// proposer's time for the sequences that verify, and, when the step ends, how many drafts each
// verify accepted, drawn from the acceptance model with the run's seed. Schedulers see only
// SchedulerView::decode_tokens (core/batch_state.h): KV and token budget for 1 + k tokens.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/random.h"
#include "models/step_time_model.h"

namespace servesim {

enum class SpecMethod : uint8_t { Draft, Eagle, Mtp, Ngram };

/// The checked `speculative` section.
struct SpeculativeSpec {
  SpecMethod method = SpecMethod::Eagle;
  std::string method_name;  ///< "draft", "eagle", "mtp" or "ngram"
  int32_t k = 1;            ///< draft tokens per verify
  /// accepted_cdf[j]: the probability that at most j of the k drafts are accepted, j = 0..k
  /// (accepted_cdf[k] = 1). Drafts are accepted in order: the first rejected one ends the run.
  std::vector<double> accepted_cdf;
  /// Speculate only in steps planned while at most this many requests run (vLLM's
  /// disable_by_batch_size, TensorRT-LLM's max_concurrency); 0: at any batch size.
  int64_t max_batch = 0;
  /// draft: the draft model's step time, run once per draft token over the verifying batch.
  std::shared_ptr<const StepTimeModel> draft;
  /// eagle and mtp: the proposer's pass per draft token as a share of the target's decode step
  /// over the same sequences (proposer.layers / the target's layers).
  double proposer_fraction = 0;
  double host_ms = 0;  ///< proposer time on the host, per step that verifies (ngram's lookup)

  /// Expected accepted drafts of one verify of all k drafts: sum over j of j x P(j).
  [[nodiscard]] double expected_accepted() const;
};

/// The `speculative` section of `root`, or null when it is absent or `enabled: false`.
/// `step_time`: the top-level step_time section (its catalogue `model` gives eagle's and mtp's
/// layer count), null with pools. Throws InputError naming the key for bad input.
[[nodiscard]] std::shared_ptr<const SpeculativeSpec> read_speculative(const Cfg& root,
                                                                      const Cfg* step_time);

/// What speculation did over a run (RunStats::speculative).
struct SpeculativeStats {
  std::string method;
  int32_t k = 0;
  int64_t verify_steps = 0;     ///< steps in which at least one sequence verified drafts
  int64_t verifies = 0;         ///< sequence verifies: sequences summed over those steps
  int64_t drafted_tokens = 0;   ///< drafts verified (k each, fewer near a request's end)
  int64_t accepted_tokens = 0;  ///< drafts accepted
  int64_t off_steps = 0;        ///< steps planned with speculation off (above max_batch)
  double proposer_ms = 0;       ///< the proposer's time, summed over steps
};

/// The engine's side of speculation: one per simulation.
class Speculator {
 public:
  /// `seed`: the run's seed; the draws use their own generator, so a workload drawn from the
  /// same seed is the same with or without speculation.
  Speculator(std::shared_ptr<const SpeculativeSpec> spec, uint64_t seed);

  /// Draft tokens per decode for a step planned while `running` requests run: k, or 0 above
  /// max_batch.
  [[nodiscard]] int32_t k_for(size_t running) const {
    return m_spec->max_batch > 0 && static_cast<int64_t>(running) > m_spec->max_batch ? 0
                                                                                      : m_spec->k;
  }
  /// A step ran with speculation off (k_for gave 0).
  void note_off_step() { ++m_stats.off_steps; }
  /// Starts the proposer's shape of a step.
  void begin_step() {
    m_shape = {};
    m_drafts = 0;
  }
  /// A sequence with `context_tokens` stored verifies `drafts` draft tokens in this step.
  void add_verify(int64_t context_tokens, int32_t drafts);
  /// The proposer's time for the verifies added since begin_step (0 when none), in ms;
  /// `target` is the step's own model (eagle and mtp charge a share of its decode step).
  [[nodiscard]] double proposer_ms(const StepTimeModel& target);
  /// How many of `drafts` draft tokens one verify accepts (0..drafts), drawn.
  [[nodiscard]] int32_t draw(int32_t drafts);
  [[nodiscard]] const SpeculativeStats& stats() const { return m_stats; }
  [[nodiscard]] const SpeculativeSpec& spec() const { return *m_spec; }

 private:
  std::shared_ptr<const SpeculativeSpec> m_spec;
  Rng m_rng;
  SpeculativeStats m_stats;
  StepShape m_shape;     // the verifying sequences as one plain decode step
  int32_t m_drafts = 0;  // the most drafts of one sequence in the step
};

}  // namespace servesim
