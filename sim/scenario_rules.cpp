#include "sim/scenario_rules.h"

#include <fmt/format.h>

#include "core/engine_versions.h"

namespace servesim {

void bind_scheduler_to_kv(const Cfg& scheduler, Scheduler& s, const KvManager& kv) {
  const KvMismatch m = s.bind_kv(kv);
  if (!m.message.empty()) scheduler.fail(m.key, m.message);
}

void check_scheduler_and_kv(const Cfg& scheduler, const Cfg& kv) {
  // Swap preemption times its transfers by the KV bytes of a token: from this replica's
  // kv.memory, or given as scheduler.kv_bytes_per_token, never both.
  if (scheduler.has("preemption_mode") && scheduler.is_scalar("preemption_mode") &&
      scheduler.get_string("preemption_mode") == "swap") {
    const bool memory = kv.has("memory") && !kv.is_scalar("memory");
    if (memory && scheduler.has("kv_bytes_per_token"))
      scheduler.fail("kv_bytes_per_token",
                     "must not be given with kv.memory, which already says how many bytes of KV "
                     "a token takes");
    if (!memory && !scheduler.has("kv_bytes_per_token"))
      scheduler.fail("preemption_mode",
                     "swap needs the KV bytes of one token to time the transfers: give kv.memory "
                     "(a model, or layers, kv_heads, head_dim and kv_dtype) or "
                     "scheduler.kv_bytes_per_token");
  }
  if (scheduler.get_string("kind") != "vllm") return;
  const std::string policy = kv.get_string("policy");
  if (policy != "paged")
    scheduler.fail(
        "kind",
        fmt::format("vllm needs kv.policy: paged (vLLM's KV cache is paged), not {}", policy));
  // vLLM V0 (before 0.8) left prefix caching off by default; V1 turns it on.
  const bool v0 = read_engine_version(scheduler, "vllm").before(0, 8);
  const bool prefix_caching = scheduler.get_bool("enable_prefix_caching", !v0);
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
