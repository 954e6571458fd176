#pragma once
// Each KV policy's factory, for the registry (core/kv/kv_registry.cpp), the policies' own files
// and tests only. Everyone else builds a KV manager with make_kv_manager (core/kv/kv_manager.h).
#include <cstdint>
#include <memory>

#include "core/config.h"
#include "core/kv/kv_manager.h"
#include "core/kv/kv_tiers.h"

namespace servesim {

using KvFactory = std::unique_ptr<KvManager> (*)(const Cfg& kv, int64_t capacity_tokens);

/// Reads kv.block_size (default 16), which must not exceed the capacity.
[[nodiscard]] int64_t read_block_size(const Cfg& kv, int64_t capacity_tokens);

std::unique_ptr<KvManager> make_reserve_kv(const Cfg& kv, int64_t capacity_tokens);
std::unique_ptr<KvManager> make_paged_kv(const Cfg& kv, int64_t capacity_tokens);
/// Paged with vLLM's automatic prefix caching (kv.prefix_caching: true), with the tiers below
/// GPU memory that kv.offload gives (null: none).
std::unique_ptr<KvManager> make_prefix_cached_kv(int64_t capacity_tokens, int64_t block_size,
                                                 std::unique_ptr<KvTiers> tiers = nullptr);

}  // namespace servesim
