#pragma once
// vLLM's batch limits when a config gives neither max_num_seqs nor max_num_batched_tokens: what
// the engine derives at start-up from its version, how it was started (`vllm serve` or the
// offline `LLM` class) and the accelerator it finds (docs/schedulers.md#vllm).
#include <cstdint>

#include "schedulers/scheduler.h"

namespace servesim {

/// How vLLM was started: its UsageContext, OPENAI_API_SERVER (`vllm serve`) or LLM_CLASS.
enum class VllmUsage { ApiServer, LlmClass };

struct VllmBatchDefaults {
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 2048;
};

/// vLLM `major.minor`'s defaults on `accelerator` (EngineArgs' V1 defaults, vllm/engine/
/// arg_utils.py):
///  - V1 from 0.9 (to 0.19, the newest line servesim knows): an accelerator of at least 70 GiB
///    that is not an A100 gets 1,024 sequences and 8,192 tokens (`vllm serve`) or 16,384 (LLM
///    class); any other, or one whose memory is not known (vLLM falls back to 0 bytes when it
///    cannot read it), 256 and 2,048 (8,192 for the LLM class). The A100 exception came with
///    vllm-project/vllm#17885 (merged 2025-05-09, in 0.9.0).
///  - 0.8: the same rule without the A100 exception, as its last release 0.8.5 had it
///    (vllm-project/vllm#17073, merged 2025-04-23; 0.8.0 to 0.8.4 keyed on the names H100/H200).
///  - V0 (before 0.8): 256 and 2,048 whatever the accelerator (2,048 is V0's chunked-prefill
///    budget since vllm-project/vllm#10544; servesim's V0 scheduler keeps it without chunking).
[[nodiscard]] VllmBatchDefaults vllm_batch_defaults(int major, int minor,
                                                    const AcceleratorInfo& accelerator,
                                                    VllmUsage usage);

}  // namespace servesim
