#include <fmt/format.h>

#include "core/kv/factories.h"
#include "core/registry.h"

namespace servesim {
namespace {

// Sorted by name. A new policy is one file and one line here.
constexpr Registry<KvFactory, 2> k_policies{{{
    {"paged", &make_paged_kv},
    {"reserve", &make_reserve_kv},
}}};

constexpr int64_t k_max_capacity_tokens = int64_t{1} << 50;

/// kv.offload moves what the prefix cache evicts: without one it has nothing to hold.
void check_offload(const Cfg& kv, const KvManager& manager) {
  if (kv.has("offload") && manager.offload() == nullptr)
    kv.fail("offload", "needs policy: paged with prefix_caching: true");
}

}  // namespace

std::vector<std::string> kv_policy_names() { return k_policies.names(); }

std::string KvManager::never_fits(const Request& r) const {
  const int64_t need = footprint_tokens(r);
  if (need <= capacity_tokens()) return {};
  return fmt::format("needs {} KV tokens at its peak but the KV capacity is {} tokens", need,
                     capacity_tokens());
}

int64_t read_block_size(const Cfg& kv, int64_t capacity_tokens) {
  const int64_t block = kv.get_int("block_size", 16, {1, 1 << 20});
  if (capacity_tokens < block)
    kv.fail("block_size",
            fmt::format("must not exceed the KV capacity ({} tokens)", capacity_tokens));
  return block;
}

std::unique_ptr<KvManager> make_kv_manager(const Cfg& kv, KvMemoryReader read_memory) {
  const KvFactory factory = k_policies.pick(kv, "policy");
  const std::string source = kv.one_of({"capacity_tokens", "memory"});
  if (source == "capacity_tokens") {
    std::unique_ptr<KvManager> manager =
        factory(kv, kv.get_int("capacity_tokens", {1, k_max_capacity_tokens}));
    check_offload(kv, *manager);
    return manager;
  }
  if (read_memory == nullptr)
    kv.fail("memory", "this caller cannot size KV from memory: give capacity_tokens");
  const KvMemory m = read_memory(kv.child("memory"));
  std::unique_ptr<KvManager> manager = factory(kv, m.capacity_tokens);
  manager->set_bytes_per_token(m.bytes_per_token);
  check_offload(kv, *manager);
  if (KvTiers* tiers = manager->offload()) {
    tiers->bind(m.bytes_per_token);
    check_offload_capacity(kv.child("offload"), *tiers);
  }
  return manager;
}

}  // namespace servesim
