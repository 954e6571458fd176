#include "schedulers/vllm_defaults.h"

#include <string>

namespace servesim {

namespace {

/// vLLM's threshold: `device_memory >= 70 * GiB_bytes` ("for GPUs like H100 and MI300x").
constexpr double k_large_gib = 70.0;

}  // namespace

VllmBatchDefaults vllm_batch_defaults(int major, int minor, const AcceleratorInfo& accelerator,
                                      VllmUsage usage) {
  const bool v1 = major > 0 || minor >= 8;
  const bool llm_class = usage == VllmUsage::LlmClass;
  if (!v1) return {256, 2048};
  const bool a100_excepted =
      (major > 0 || minor >= 9) && accelerator.name.find("a100") != std::string::npos;
  if (accelerator.memory_gib >= k_large_gib && !a100_excepted)
    return {1024, llm_class ? 16384 : 8192};
  return {256, llm_class ? 8192 : 2048};
}

}  // namespace servesim
