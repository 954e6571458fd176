#pragma once
// KV capacity from memory: how many tokens of KV cache fit in a tensor-parallel group once the
// weights and a reserve are loaded. Reads `kv.memory`, whose model and accelerator come either
// from the catalogue (`model:`, `hardware:`) or as explicit figures; the engine hands
// read_kv_memory to make_kv_manager (core/kv/kv_manager.h), which cannot see the catalogue.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/kv/kv_manager.h"

namespace servesim {

/// KV bytes one token takes on one accelerator of a tensor_parallel group: the KV heads are
/// split tp ways, and when there are fewer KV heads than accelerators each one is replicated so
/// that every accelerator holds one (vLLM does the same): 2 x layers x max(1, kv_heads / tp) x
/// head_dim x bytes. REQUIRES: kv_heads divides tp or tp divides kv_heads.
[[nodiscard]] double kv_bytes_per_token_per_accelerator(int64_t layers, int64_t kv_heads,
                                                        int64_t head_dim, double dtype_bytes,
                                                        int64_t tensor_parallel);

/// The names `kv.memory.weight_dtype` accepts, in the order docs/config.md lists them: the
/// catalogue's dtypes (fp32 ... int4), fp4 and nvfp4, and the operator model's GEMM variants
/// (fp8_block, int8_wo, int4_wo, sq), so that one weight_dtype serves both sections.
[[nodiscard]] const std::vector<std::string>& kv_memory_weight_dtypes();
/// Bytes one parameter takes stored as `name`, scales included (nvfp4: 0.5 + one fp8 scale per
/// 16 values = 0.5625); nullopt for a name not in kv_memory_weight_dtypes().
[[nodiscard]] std::optional<double> kv_memory_weight_bytes(const std::string& name);

/// Reads a `kv.memory` map: `hardware` (catalogue name or path) or `accelerator_gib`; `model`
/// (catalogue name or path) or `parameters`, `layers`, `kv_heads` and `head_dim`; and
/// `tensor_parallel`, `weight_dtype`, `kv_dtype`, `utilization` or `free_gpu_memory_fraction`,
/// `reserved_gib`. Capacity = floor((device bytes x utilization - weights / tp - reserved) / KV
/// bytes per token per accelerator) (vLLM's gpu_memory_utilization, SGLang's
/// mem_fraction_static), or with free_gpu_memory_fraction f (TensorRT-LLM's) floor((device bytes
/// - weights / tp - reserved) x f / KV bytes per token per accelerator). Throws InputError at the
/// key for a name and a figure given for the same thing, an unknown name, a tp the KV heads cannot
/// be split over, or weights and reserve that leave no room.
[[nodiscard]] KvMemory read_kv_memory(const Cfg& memory);

}  // namespace servesim
