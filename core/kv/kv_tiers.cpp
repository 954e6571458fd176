// Tiered KV offload: the tiers' LRU stores, a replica's chain of them, and kv.offload's reader.
#include "core/kv/kv_tiers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <set>

#include "core/kv/key_table.h"
#include "core/kv/kv_manager.h"
#include "core/units.h"

namespace servesim {

/// One tier: an LRU list of block keys with a key -> node table. Nodes and table slots are
/// reused; they grow (amortised) until the tier is full, then never again.
class TierStore {
 public:
  explicit TierStore(TierSpec spec) : m_spec(std::move(spec)), m_table(8) {}

  [[nodiscard]] const TierSpec& spec() const { return m_spec; }
  void bind(double block_bytes) {
    m_capacity = static_cast<int64_t>(std::floor(m_spec.capacity_bytes / block_bytes));
  }
  [[nodiscard]] int64_t capacity_blocks() const { return m_capacity; }
  [[nodiscard]] int64_t resident() const { return m_count; }
  [[nodiscard]] int64_t stored() const { return m_stored; }
  [[nodiscard]] int64_t moved_down() const { return m_moved_down; }
  [[nodiscard]] bool contains(uint64_t key) const { return find(key) != k_none; }

  void touch(uint64_t key) {
    const int32_t n = find(key);
    assert(n != k_none);
    unlink(n);
    push_front(n);
  }

  /// Adds `key` (REQUIRES: absent) as the most recently used; when that overfills the tier,
  /// removes the least recently used and returns its key (else 0).
  [[nodiscard]] uint64_t insert(uint64_t key) {
    int32_t n;
    if (m_free != k_none) {
      n = m_free;
      m_free = m_nodes[n].next;
    } else {
      n = static_cast<int32_t>(m_nodes.size());
      m_nodes.push_back({});
    }
    m_nodes[n].key = key;
    push_front(n);
    ++m_count;
    ++m_stored;
    if (2 * m_count >= static_cast<int64_t>(m_table.slots())) m_table.rehash(2 * m_table.slots());
    m_table.insert(key, n);
    if (m_count <= m_capacity) return 0;
    const int32_t old = m_tail;
    const uint64_t out = m_nodes[old].key;
    unlink(old);
    m_table.erase(out);
    m_nodes[old].next = m_free;
    m_free = old;
    --m_count;
    ++m_moved_down;
    return out;
  }

 private:
  static constexpr int32_t k_none = -1;
  struct Node {
    uint64_t key = 0;
    int32_t prev = k_none, next = k_none;
  };

  [[nodiscard]] int32_t find(uint64_t key) const { return m_table.find(key); }
  void push_front(int32_t n) {
    m_nodes[n].prev = k_none;
    m_nodes[n].next = m_head;
    if (m_head != k_none) m_nodes[m_head].prev = n;
    m_head = n;
    if (m_tail == k_none) m_tail = n;
  }
  void unlink(int32_t n) {
    Node& x = m_nodes[n];
    (x.prev != k_none ? m_nodes[x.prev].next : m_head) = x.next;
    (x.next != k_none ? m_nodes[x.next].prev : m_tail) = x.prev;
    x.prev = x.next = k_none;
  }

  TierSpec m_spec;
  int64_t m_capacity = 0, m_count = 0, m_stored = 0, m_moved_down = 0;
  std::vector<Node> m_nodes;
  KeyTable m_table;  // key -> node
  int32_t m_head = k_none, m_tail = k_none, m_free = k_none;
};

KvTiers::KvTiers(const std::vector<TierSpec>& specs, Overlap overlap, bool if_faster,
                 double prefill_tokens_per_s, int64_t block_tokens, double bytes_per_token)
    : m_overlap(overlap),
      m_if_faster(if_faster),
      m_prefill_tokens_per_s(prefill_tokens_per_s),
      m_block_tokens(block_tokens) {
  for (const TierSpec& s : specs) {
    m_tiers.push_back(std::make_shared<TierStore>(s));
    TierStats t;
    t.name = s.name;
    t.shared = s.shared;
    m_lookup.push_back(t);
  }
  for (auto& s : m_scratch) s.assign(specs.size(), 0);
  m_stats.overlap = overlap == Overlap::layerwise ? "layerwise" : "none";
  m_stats.reload = if_faster ? "if_faster" : "always";
  if (bytes_per_token > 0) bind(bytes_per_token);
}

KvTiers::~KvTiers() = default;

void KvTiers::bind(double bytes_per_token) {
  m_block_bytes = bytes_per_token * static_cast<double>(m_block_tokens);
  for (auto& t : m_tiers) t->bind(m_block_bytes);
}

void KvTiers::demote(uint64_t key) {
  const int held = find(key);
  if (held >= 0) {
    m_tiers[static_cast<size_t>(held)]->touch(key);
    return;
  }
  // Cascade: each full tier pushes its least recently used block into the next.
  for (auto& tier : m_tiers) {
    if (tier->contains(key)) {  // a shared tier may hold it already
      tier->touch(key);
      return;
    }
    key = tier->insert(key);
    if (key == 0) return;
  }
}

int KvTiers::find(uint64_t key) const {
  for (size_t t = 0; t < m_tiers.size(); ++t)
    if (m_tiers[t]->contains(key)) return static_cast<int>(t);
  return -1;
}

double KvTiers::reload_seconds(int t, int64_t n) const {
  if (n == 0) return 0;
  const TierSpec& s = m_tiers[static_cast<size_t>(t)]->spec();
  return static_cast<double>(n) * m_block_bytes / s.bandwidth_bytes_per_s + s.latency_s;
}

bool KvTiers::worth_reloading(const int64_t* per_tier_blocks) const {
  if (!m_if_faster) return true;
  double reload = 0, tokens = 0;
  for (size_t t = 0; t < m_tiers.size(); ++t) {
    reload += reload_seconds(static_cast<int>(t), per_tier_blocks[t]);
    tokens += static_cast<double>(per_tier_blocks[t] * m_block_tokens);
  }
  return reload <= tokens / m_prefill_tokens_per_s;
}

void KvTiers::touch(int t, uint64_t key) { m_tiers[static_cast<size_t>(t)]->touch(key); }

void KvTiers::record_admission(int64_t queried_tokens, int64_t queried_blocks, int64_t gpu_hits,
                               const int64_t* per_tier_hits, const int64_t* per_tier_declined) {
  int64_t blocks_left = queried_blocks - gpu_hits;
  int64_t tokens_left = queried_tokens - gpu_hits * m_block_tokens;
  for (size_t t = 0; t < m_tiers.size(); ++t) {
    TierStats& s = m_lookup[t];
    const int64_t n = per_tier_hits[t];
    s.queried_blocks += blocks_left;
    s.queried_tokens += tokens_left;
    s.hit_blocks += n;
    s.hit_tokens += n * m_block_tokens;
    s.declined_blocks += per_tier_declined[t];
    blocks_left -= n;
    tokens_left -= n * m_block_tokens;
    if (n == 0) continue;
    const double secs = reload_seconds(static_cast<int>(t), n);
    ++s.reloads;
    s.reload_bytes += static_cast<double>(n) * m_block_bytes;
    s.reload_s += secs;
    m_pending_reload_s += secs;
    m_stats.prefill_tokens_saved += n * m_block_tokens;
  }
}

Time KvTiers::step_with_reload(Time body) {
  if (m_pending_reload_s <= 0) return body;
  const Time reload = Time::from_seconds(m_pending_reload_s);
  const Time step = m_overlap == Overlap::layerwise ? std::max(body, reload) : body + reload;
  m_stats.reload_s += m_pending_reload_s;
  m_stats.stall_s += (step - body).seconds();
  ++m_stats.reload_steps;
  m_pending_reload_s = 0;
  return step;
}

void KvTiers::share_tier(size_t t, const KvTiers& other) { m_tiers[t] = other.m_tiers[t]; }

TierStats KvTiers::tier_stats(size_t t) const {
  TierStats s = m_lookup[t];
  const TierStore& store = *m_tiers[t];
  s.capacity_blocks = store.capacity_blocks();
  s.stored_blocks = store.stored();
  s.moved_down_blocks = store.moved_down();
  s.resident_blocks = store.resident();
  return s;
}

void add_offload_stats(std::optional<OffloadStats>& into, const KvTiers& tiers,
                       std::vector<const TierStore*>& seen) {
  const OffloadStats& mine = tiers.run_stats();
  if (!into) {
    into.emplace();
    into->overlap = mine.overlap;
    into->reload = mine.reload;
  }
  OffloadStats& o = *into;
  o.prefill_tokens_saved += mine.prefill_tokens_saved;
  o.reload_s += mine.reload_s;
  o.stall_s += mine.stall_s;
  o.reload_steps += mine.reload_steps;
  for (size_t t = 0; t < tiers.size(); ++t) {
    const TierStats s = tiers.tier_stats(t);
    if (o.tiers.size() <= t) {
      TierStats blank;
      blank.name = s.name;
      blank.shared = s.shared;
      o.tiers.push_back(blank);
    }
    TierStats& d = o.tiers[t];
    d.queried_blocks += s.queried_blocks;
    d.hit_blocks += s.hit_blocks;
    d.queried_tokens += s.queried_tokens;
    d.hit_tokens += s.hit_tokens;
    d.declined_blocks += s.declined_blocks;
    d.reloads += s.reloads;
    d.reload_bytes += s.reload_bytes;
    d.reload_s += s.reload_s;
    const TierStore* store = tiers.store(t);
    if (std::find(seen.begin(), seen.end(), store) != seen.end()) continue;
    seen.push_back(store);
    d.capacity_blocks += s.capacity_blocks;
    d.stored_blocks += s.stored_blocks;
    d.moved_down_blocks += s.moved_down_blocks;
    d.resident_blocks += s.resident_blocks;
  }
}

namespace {

constexpr units::Plausible k_tier_gib{{0.0, 1048576.0, true}, "size in GiB", "did you give bytes?"};

TierSpec read_tier(const Cfg& c) {
  TierSpec s;
  s.name = c.get_string("name");
  if (s.name.empty()) c.fail("name", "must not be empty");
  s.capacity_bytes = plausible_real(c, "capacity_gib", k_tier_gib) * 1073741824.0;
  s.bandwidth_bytes_per_s = plausible_real(c, "bandwidth_gb_s", units::k_gb_per_s) * 1e9;
  s.latency_s = plausible_real(c, "latency_us", 0.0, units::k_latency_us) * 1e-6;
  s.shared = c.get_bool("shared", false);
  return s;
}

}  // namespace

std::unique_ptr<KvTiers> read_offload(const Cfg& kv, int64_t block_tokens) {
  const Cfg c = kv.child("offload");
  const std::vector<Cfg> list = c.list_of_maps("tiers");
  if (list.empty() || list.size() > 8) c.fail("tiers", "must list 1 to 8 tiers");
  std::vector<TierSpec> specs;
  std::set<std::string> names;
  for (const Cfg& t : list) {
    specs.push_back(read_tier(t));
    if (!names.insert(specs.back().name).second)
      t.fail("name", fmt::format("\"{}\" names two tiers: names must differ", specs.back().name));
    if (specs.size() > 1 && specs[specs.size() - 2].shared && !specs.back().shared)
      t.fail("shared", "an unshared tier cannot sit below a shared one: list shared tiers last");
  }
  const bool layerwise = c.get_choice("overlap", "layerwise", {"layerwise", "none"}) == "layerwise";
  const bool if_faster = c.get_choice("reload", "always", {"always", "if_faster"}) == "if_faster";
  double prefill_rate = 0;
  if (if_faster)
    prefill_rate = c.get_real("prefill_tokens_per_s", {0.0, 1e9, true});
  else if (c.has("prefill_tokens_per_s"))
    c.fail("prefill_tokens_per_s", "is only used with reload: if_faster");
  double bytes_per_token = 0;
  if (kv.has("memory")) {
    if (c.has("kv_bytes_per_token"))
      c.fail("kv_bytes_per_token", "comes from kv.memory: remove it (or give capacity_tokens)");
  } else {
    bytes_per_token = plausible_real(c, "kv_bytes_per_token", units::k_bytes_per_token);
  }
  auto tiers = std::make_unique<KvTiers>(
      specs, layerwise ? KvTiers::Overlap::layerwise : KvTiers::Overlap::none, if_faster,
      prefill_rate, block_tokens, bytes_per_token);
  if (bytes_per_token > 0) check_offload_capacity(c, *tiers);
  return tiers;
}

void check_offload_capacity(const Cfg& offload, const KvTiers& tiers) {
  for (size_t t = 0; t < tiers.size(); ++t)
    if (tiers.store(t)->capacity_blocks() < 1)
      offload.fail("tiers",
                   fmt::format("tier \"{}\" holds {:.4g} GiB, less than one KV block of {:.4g} "
                               "MiB: raise its capacity_gib",
                               tiers.store(t)->spec().name,
                               tiers.store(t)->spec().capacity_bytes / 1073741824.0,
                               tiers.block_bytes() / 1048576.0));
}

void share_offload_tiers(const KvManager& first, KvManager& other) {
  const KvTiers* a = first.offload();
  KvTiers* b = other.offload();
  if (a == nullptr || b == nullptr) return;
  for (size_t t = 0; t < a->size(); ++t)
    if (a->store(t)->spec().shared) b->share_tier(t, *a);
}

}  // namespace servesim
