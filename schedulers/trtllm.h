#pragma once
// trtllm-bench's choice of max_batch_size and max_num_tokens when neither is given
// (scheduler.trtllm_bench_tuning, docs/schedulers.md#trtllm-bench-tuning), exposed for tests.
#include <cstdint>
#include <utility>

namespace servesim {

/// {max_batch_size, max_num_tokens} as trtllm-bench tunes them from the requests the KV cache
/// holds at the dataset's mean lengths. With R = min(kv_max_requests, 4096) / pipeline_parallel
/// and T = min(R x (1 + input / output), 32768):
///   batch:  R < 256: max(64, 32 x ceil(R / 32)); R < 1024: 128 x ceil(R / 128);
///           else 256 x ceil(R / 256);
///   tokens: T < 4096: max(2048, 256 x ceil(T / 256)); T < 8192: 512 x ceil(T / 512);
///           else 1024 x ceil(T / 1024).
/// REQUIRES: kv_max_requests >= 1, input and output tokens > 0, pipeline_parallel >= 1.
[[nodiscard]] std::pair<int64_t, int64_t> trtllm_bench_settings(double kv_max_requests,
                                                                double mean_input_tokens,
                                                                double mean_output_tokens,
                                                                int64_t pipeline_parallel);

}  // namespace servesim
