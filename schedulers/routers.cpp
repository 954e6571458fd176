// The routers of cluster.router.kind (schedulers/router.h; docs/cluster.md defines each one).
// Where several replicas tie, the scan starts one replica further on every call, so ties are
// spread round-robin rather than always falling on replica 0.
#include <fmt/format.h>

#include <limits>
#include <unordered_map>
#include <utility>

#include "core/random.h"
#include "core/registry.h"
#include "schedulers/router.h"

namespace servesim {
namespace {

/// Index of the smallest `key(load)`, scanning from `start` (ties go to the first one met).
template <typename Key>
uint32_t argmin_from(std::span<const ReplicaLoad> loads, uint32_t start, Key key) {
  const auto n = static_cast<uint32_t>(loads.size());
  uint32_t best = start % n;
  for (uint32_t k = 1; k < n; ++k) {
    const uint32_t i = (start + k) % n;
    if (key(loads[i]) < key(loads[best])) best = i;
  }
  return best;
}

class RoundRobin final : public Router {
 public:
  uint32_t route(const RequestSpec&, std::span<const ReplicaLoad> loads) override {
    return static_cast<uint32_t>(m_next++ % loads.size());
  }

 private:
  uint64_t m_next = 0;
};

class RandomRouter final : public Router {
 public:
  explicit RandomRouter(uint64_t seed) : m_rng(seed) {}
  uint32_t route(const RequestSpec&, std::span<const ReplicaLoad> loads) override {
    return static_cast<uint32_t>(m_rng.uniform_int(0, static_cast<int64_t>(loads.size()) - 1));
  }

 private:
  Rng m_rng;
};

int64_t outstanding(const ReplicaLoad& l) { return l.outstanding; }
double kv_share(const ReplicaLoad& l) {
  return l.kv_capacity_tokens > 0
             ? static_cast<double>(l.kv_used_tokens) / static_cast<double>(l.kv_capacity_tokens)
             : 0.0;
}

class LeastOutstanding final : public Router {
 public:
  uint32_t route(const RequestSpec&, std::span<const ReplicaLoad> loads) override {
    return argmin_from(loads, m_start++, outstanding);
  }

 private:
  uint32_t m_start = 0;
};

class LeastKv final : public Router {
 public:
  uint32_t route(const RequestSpec&, std::span<const ReplicaLoad> loads) override {
    return argmin_from(loads, m_start++, kv_share);
  }

 private:
  uint32_t m_start = 0;
};

/// Sends a request where the last request with the same leading content went (its session's
/// token stream, or its first prompt block's hash), so that replica's prefix cache can serve
/// it; unless that replica has more than `max_imbalance` requests more than the least loaded
/// one, in which case the request (and its content from then on) goes to the least loaded.
class PrefixAffinity final : public Router {
 public:
  explicit PrefixAffinity(int64_t max_imbalance) : m_max_imbalance(max_imbalance) {}
  uint32_t route(const RequestSpec& r, std::span<const ReplicaLoad> loads) override {
    const uint32_t least = argmin_from(loads, m_start++, outstanding);
    const uint64_t key = r.content_stream != 0     ? r.content_stream
                         : !r.block_hashes.empty() ? r.block_hashes.front() ^ k_hash_domain
                                                   : 0;
    if (key == 0) return least;
    auto [it, fresh] = m_home.try_emplace(key, least);
    if (!fresh && loads[it->second].outstanding - loads[least].outstanding > m_max_imbalance)
      it->second = least;
    return it->second;
  }

 private:
  static constexpr uint64_t k_hash_domain = 0x9e3779b97f4a7c15ull;  // block hashes vs streams
  int64_t m_max_imbalance;
  uint32_t m_start = 0;
  std::unordered_map<uint64_t, uint32_t> m_home;  // content key -> its replica
};

/// Multi-LoRA (docs/lora.md): sends a request to the least loaded replica among those holding
/// its adapter in a GPU slot, else among those holding it in host memory, else among all; but
/// to the least loaded of all when the pick has more than `max_imbalance` requests more. A
/// base-model request goes to the least loaded. Ties: the scan starts one replica further on
/// every call, as for least_outstanding.
class LoraAffinity final : public Router {
 public:
  explicit LoraAffinity(int64_t max_imbalance) : m_max_imbalance(max_imbalance) {}
  uint32_t route(const RequestSpec&, std::span<const ReplicaLoad> loads) override {
    const uint32_t start = m_start++;
    const uint32_t least = argmin_from(loads, start, outstanding);
    // Residency first, then fewer outstanding: the smallest (2 - residency, outstanding).
    const uint32_t best = argmin_from(loads, start, [](const ReplicaLoad& l) {
      return std::pair<int, int64_t>{2 - l.adapter_residency, l.outstanding};
    });
    return loads[best].outstanding - loads[least].outstanding > m_max_imbalance ? least : best;
  }

 private:
  int64_t m_max_imbalance;
  uint32_t m_start = 0;
};

std::unique_ptr<Router> make_round_robin(const Cfg&, uint64_t) {
  return std::make_unique<RoundRobin>();
}
std::unique_ptr<Router> make_random(const Cfg&, uint64_t seed) {
  return std::make_unique<RandomRouter>(seed);
}
std::unique_ptr<Router> make_least_outstanding(const Cfg&, uint64_t) {
  return std::make_unique<LeastOutstanding>();
}
std::unique_ptr<Router> make_least_kv(const Cfg&, uint64_t) { return std::make_unique<LeastKv>(); }
std::unique_ptr<Router> make_lora_affinity(const Cfg& c, uint64_t) {
  return std::make_unique<LoraAffinity>(c.get_int("max_imbalance", 16, {0, 1'000'000'000}));
}
std::unique_ptr<Router> make_prefix_affinity(const Cfg& c, uint64_t) {
  return std::make_unique<PrefixAffinity>(c.get_int("max_imbalance", 16, {0, 1'000'000'000}));
}

using RouterFactory = std::unique_ptr<Router> (*)(const Cfg& router, uint64_t seed);

// Sorted by name. A new router is one class and one line here.
constexpr Registry<RouterFactory, 6> k_routers{{{
    {"least_kv", &make_least_kv},
    {"least_outstanding", &make_least_outstanding},
    {"lora_affinity", &make_lora_affinity},
    {"prefix_affinity", &make_prefix_affinity},
    {"random", &make_random},
    {"round_robin", &make_round_robin},
}}};

}  // namespace

std::vector<std::string> router_names() { return k_routers.names(); }

std::unique_ptr<Router> make_router(const Cfg& router, uint64_t seed) {
  return k_routers.pick(router, "kind")(router, seed);
}

}  // namespace servesim
