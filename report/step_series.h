#pragma once
// steps.csv reduced to a few thousand points, so that a report of a long run stays small.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace servesim {

/// One steps.csv row, as far as the report needs it.
struct StepRow {
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  uint32_t replica = 0;
  int64_t sequences = 0;
  int64_t tokens = 0;  ///< prefill_tokens + decode_tokens
  int64_t kv_used_tokens = 0;
  int64_t kv_capacity_tokens = 0;
  int64_t waiting = 0;
  int64_t running = 0;
  int64_t preemptions = 0;  ///< cumulative on the replica
  int bound = -1;           ///< -1 none, 0 bandwidth, 1 compute
  double bytes = 0;
  double flops = 0;
};

/// Buckets steps by start time: the bucket width starts at 1 ms and doubles (merging pairs of
/// buckets) whenever a step falls past `max_buckets` buckets, so memory and output stay bounded
/// whatever the run's length. Each bucket keeps the mean and max of running, waiting, batch
/// size (sequences) and tokens per step over the steps starting in it, the largest KV use
/// (used / capacity) and the preemptions that happened in it (rises of each replica's
/// cumulative count). Steps must come in non-decreasing start order (steps.csv's order).
///
/// Alongside, a roofline sample: every k-th costed step (k doubling as needed to keep at most
/// `max_points`) with its intensity (flops / bytes) and achieved FLOP/s (flops / duration), and
/// the totals over all costed steps.
class StepSeries {
 public:
  explicit StepSeries(size_t max_buckets = 2000, size_t max_points = 3000);
  void add(const StepRow& row);

  /// {"bucket_s", "steps", "t_s", "running_mean", "running_max", "waiting_mean",
  ///  "waiting_max", "batch_mean", "batch_max", "tokens_mean", "tokens_max", "kv_use_max",
  ///  "preemptions"}; empty buckets are nulls.
  [[nodiscard]] nlohmann::json series_json() const;
  /// null when no step had a cost; else {"intensity": [...], "flops_per_s": [...],
  /// "bound": [0|1, ...], "steps", "sampled", "flops", "bytes", "busy_s"} (totals over every
  /// costed step). The page adds the ridge point from summary.json's mbu and mfu.
  [[nodiscard]] nlohmann::json roofline_json() const;

  /// Reads a whole steps.csv (docs/metrics.md); throws InputError naming the file and line.
  static StepSeries read_file(const std::string& path);

  struct Bucket {
    int64_t steps = 0;
    double running_sum = 0, waiting_sum = 0, batch_sum = 0, tokens_sum = 0;
    int64_t running_max = 0, waiting_max = 0, batch_max = 0, tokens_max = 0;
    double kv_use_max = 0;
    int64_t preemptions = 0;
  };

 private:
  struct Point {
    double intensity, flops_per_s;
    int bound;
  };
  void halve_buckets();

  size_t m_max_buckets;
  size_t m_max_points;
  int64_t m_width_ns = 1'000'000;
  std::vector<Bucket> m_buckets;
  int64_t m_steps = 0;
  std::vector<int64_t> m_last_preemptions;  ///< per replica
  std::vector<Point> m_points;
  int64_t m_costed = 0;
  int64_t m_stride = 1;
  double m_flops = 0, m_bytes = 0;
  int64_t m_costed_busy_ns = 0;
};

}  // namespace servesim
