#include <cmath>

#include <fmt/format.h>

#include "core/kv/kv_manager.h"
#include "core/registry.h"

namespace servesim {
namespace {

// Sorted by name. A new policy is one file and one line here.
constexpr Registry<KvFactory, 2> k_policies{{{
    {"paged", &make_paged_kv},
    {"reserve", &make_reserve_kv},
}}};

constexpr int64_t k_max_capacity_tokens = int64_t{1} << 50;

double bytes_of_dtype(const std::string& d) {
  if (d == "fp32") return 4.0;
  if (d == "bf16" || d == "fp16") return 2.0;
  if (d == "fp8" || d == "int8") return 1.0;
  return 0.5;
}

double dtype_bytes(const Cfg& c, const std::string& key, const std::string& def) {
  return bytes_of_dtype(c.get_choice(key, def, {"fp32", "bf16", "fp16", "fp8", "int8", "int4"}));
}

double per_token_bytes(int64_t layers, int64_t kv_heads, int64_t head_dim, double kvbytes,
                       int64_t tp) {
  return 2.0 * static_cast<double>(layers * kv_heads * head_dim) * kvbytes /
         static_cast<double>(tp);
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
    kv.fail("block_size", fmt::format("must not exceed the KV capacity ({} tokens)", capacity_tokens));
  return block;
}

int64_t kv_capacity_from_memory(const Cfg& m) {
  const double mem_gib = m.get_real("accelerator_gib", k_positive);
  const double util = m.get_real("utilization", 0.9, {0.0, 1.0, true});
  const double params = m.get_real("parameters", k_positive);
  const double wbytes = dtype_bytes(m, "weight_dtype", "fp16");
  const int64_t layers = m.get_int("layers", {1, 100000});
  const int64_t kv_heads = m.get_int("kv_heads", {1, 100000});
  const int64_t head_dim = m.get_int("head_dim", {1, 100000});
  const double kvbytes = dtype_bytes(m, "kv_dtype", "fp16");
  const int64_t tp = m.get_int("tensor_parallel", 1, {1, 1024});

  // Per accelerator: weights and KV heads are split tp ways; capacity counts the whole group.
  const double usable = mem_gib * 1073741824.0 * util;
  const double weights = params * wbytes / static_cast<double>(tp);
  const double per_token = per_token_bytes(layers, kv_heads, head_dim, kvbytes, tp);
  if (weights >= usable)
    m.fail("parameters",
           fmt::format("the weights ({:.2f} GB) do not fit in {:.2f} GB usable accelerator memory "
                       "(accelerator_gib x utilization)",
                       weights / 1e9, usable / 1e9));
  const double tokens = std::floor((usable - weights) / per_token);
  if (tokens < 1) m.fail("parameters", "no memory left for the KV cache after the weights");
  // The same bound as capacity_tokens; also keeps an absurd accelerator_gib (1e300, whose
  // usable memory overflows to infinity) from reaching the integer conversion.
  if (!(tokens <= static_cast<double>(k_max_capacity_tokens)))
    m.fail("accelerator_gib", fmt::format("leaves room for {:.4g} KV tokens, more than the limit "
                                          "of {} (2^50)", tokens, k_max_capacity_tokens));
  return static_cast<int64_t>(tokens);
}

std::optional<double> kv_bytes_per_token(const YAML::Node& kv) {
  const YAML::Node m = kv.IsMap() ? kv["memory"] : YAML::Node();
  if (!m.IsDefined() || !m.IsMap()) return std::nullopt;
  const auto int_or = [&](const char* key, int64_t def) {
    return m[key].IsDefined() ? m[key].as<int64_t>() : def;
  };
  const std::string dtype = m["kv_dtype"].IsDefined() ? m["kv_dtype"].Scalar() : "fp16";
  return per_token_bytes(int_or("layers", 1), int_or("kv_heads", 1), int_or("head_dim", 1),
                         bytes_of_dtype(dtype), int_or("tensor_parallel", 1));
}

std::unique_ptr<KvManager> make_kv_manager(const Cfg& kv) {
  const KvFactory factory = k_policies.pick(kv, "policy");
  const std::string source = kv.one_of({"capacity_tokens", "memory"});
  const int64_t capacity = source == "capacity_tokens"
                               ? kv.get_int("capacity_tokens", {1, k_max_capacity_tokens})
                               : kv_capacity_from_memory(kv.child("memory"));
  return factory(kv, capacity);
}

}  // namespace servesim
