#include "sim/scenario_rules.h"

#include <fmt/format.h>

namespace servesim {

void check_scheduler_and_kv(const Cfg& scheduler, const Cfg& kv) {
  if (scheduler.get_string("kind") != "vllm") return;
  const std::string policy = kv.get_string("policy");
  if (policy != "paged")
    scheduler.fail(
        "kind",
        fmt::format("vllm needs kv.policy: paged (vLLM's KV cache is paged), not {}", policy));
  const bool prefix_caching = scheduler.get_bool("enable_prefix_caching", true);
  if (prefix_caching != kv.get_bool("prefix_caching", false))
    scheduler.fail("enable_prefix_caching",
                   prefix_caching
                       ? "is true (vLLM's default) but kv.prefix_caching is not: set "
                         "kv.prefix_caching: true, or enable_prefix_caching: false for a server "
                         "run with --no-enable-prefix-caching"
                       : "is false but kv.prefix_caching is true: the two must agree");
}

void check_pool_role(const Cfg& scheduler, PoolRole role, const std::string& name) {
  if (role == PoolRole::Mixed) return;
  const std::string kind = scheduler.get_string("kind");
  if (kind == "static" || kind == "dynamic")
    scheduler.fail("kind", fmt::format("pool {} ({}) needs an iteration-level scheduler "
                                       "(continuous, orca, sarathi, vllm), not {}",
                                       quote_input(name),
                                       role == PoolRole::Prefill ? "prefill" : "decode", kind));
}

}  // namespace servesim
