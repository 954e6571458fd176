#include "sim/lora.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "models/catalog.h"

namespace servesim {

namespace {

constexpr int64_t k_max_adapters = 1'000'000;
constexpr double k_weight_bytes = 2;  // adapters are stored and run in 16-bit floats

// SplitMix64's finaliser: a well-mixed 64-bit hash of (seed, id, stream), so each request's
// draw depends on nothing but its id and the seed.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double unit(uint64_t seed, uint64_t id, uint64_t stream) {
  return static_cast<double>(mix(mix(seed ^ 0x4c6f5241ULL) ^ mix(id * 2 + stream)) >> 11) *
         0x1.0p-53;
}

// Sum over the adapted projections of one layer of (d_in + d_out): the A (d_in x r) and
// B (r x d_out) matrices hold r x (d_in + d_out) weights.
int64_t layer_dims(const ModelSpec& m, const std::string& modules) {
  const int64_t d = m.hidden_size, q = m.attention_heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  int64_t sum = (d + q) + 2 * (d + kv) + (q + d);  // q, k, v, o
  if (modules == "all")                            // MLP: gate (if gated) and up, then down
    sum += (m.gated_mlp ? 2 : 1) * (d + m.intermediate_size) + (m.intermediate_size + d);
  return sum;
}

class LoraSource final : public WorkloadSource {
 public:
  LoraSource(std::unique_ptr<WorkloadSource> inner, std::shared_ptr<const LoraSpec> spec,
             uint64_t seed)
      : m_inner(std::move(inner)), m_spec(std::move(spec)), m_seed(seed) {}
  bool next(RequestSpec& out) override {
    if (!m_inner->next(out)) return false;
    assign(out);
    return true;
  }
  size_t size_hint() const override { return m_inner->size_hint(); }
  std::vector<std::pair<std::string, int64_t>> counters() const override {
    return m_inner->counters();
  }
  bool reactive() const override { return m_inner->reactive(); }
  void on_depart(const Request& r, Time now, std::vector<RequestSpec>& ready) override {
    const size_t from = ready.size();
    m_inner->on_depart(r, now, ready);
    for (size_t i = from; i < ready.size(); ++i) assign(ready[i]);
  }
  size_t waiting() const override { return m_inner->waiting(); }
  const std::vector<std::string>& class_names() const override { return m_inner->class_names(); }
  const std::vector<std::string>& tenant_names() const override { return m_inner->tenant_names(); }

 private:
  void assign(RequestSpec& r) const {
    if (!r.adapter_given) {
      r.adapter = m_spec->draw(m_seed, r.id);
    } else if (r.adapter > m_spec->adapters) {
      throw InputError(fmt::format(
          "request {}: the trace's adapter {} is above lora.adapters = {} (adapter ids are 1 "
          "to lora.adapters, 0 the base model)",
          r.id, r.adapter, m_spec->adapters));
    }
  }
  std::unique_ptr<WorkloadSource> m_inner;
  std::shared_ptr<const LoraSpec> m_spec;
  uint64_t m_seed;
};

}  // namespace

uint32_t LoraSpec::draw(uint64_t seed, uint64_t id) const {
  if (fraction < 1 && unit(seed, id, 0) >= fraction) return 0;
  const double u = unit(seed, id, 1);
  const auto k = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
  return static_cast<uint32_t>(std::min<int64_t>(k, adapters - 1) + 1);
}

double LoraSpec::copy_ms() const {
  return adapter_bytes / static_cast<double>(tensor_parallel) / host_to_gpu_bytes_per_s * 1e3;
}
double LoraSpec::disk_ms() const { return adapter_bytes / disk_bytes_per_s * 1e3; }

std::shared_ptr<const LoraSpec> read_lora(const Cfg& root, const Cfg* step_time) {
  const std::optional<Cfg> c = root.optional_child("lora");
  if (!c) return nullptr;
  auto s = std::make_shared<LoraSpec>();
  const bool enabled = c->get_bool("enabled", true);
  s->adapters = c->get_int("adapters", {1, k_max_adapters});
  if (const std::optional<Cfg> p = c->optional_child("popularity")) {
    s->popularity = p->get_choice("kind", {"uniform", "zipf"});
    if (s->popularity == "zipf") s->zipf_alpha = p->get_real("alpha", 1.0, {0.0, 10.0});
  } else {
    s->popularity = "uniform";
  }
  s->fraction = c->get_real("fraction", 1.0, {0.0, 1.0});
  s->max_loras = static_cast<int32_t>(c->get_int("max_loras", 1, {1, 4096}));
  s->max_cpu_loras = c->get_int("max_cpu_loras", 0, {0, k_max_adapters});
  if (s->max_cpu_loras > 0 && s->max_cpu_loras < s->max_loras)
    c->fail("max_cpu_loras",
            fmt::format("must be 0 (every adapter in host memory) or at least max_loras = {}, "
                        "as in vLLM",
                        s->max_loras));
  s->host_to_gpu_bytes_per_s =
      plausible_real(*c, "host_to_gpu_gbps", 25.0, units::k_gb_per_s) * 1e9;
  s->disk_bytes_per_s = plausible_real(*c, "disk_gbps", 2.0, units::k_gb_per_s) * 1e9;
  if (const std::optional<double> t =
          optional_plausible_real(*c, "peak_tflops", units::k_tflop_per_s))
    s->peak_flops_per_s = *t * 1e12;
  if (const std::optional<double> g =
          optional_plausible_real(*c, "peak_memory_gbps", units::k_gb_per_s))
    s->peak_bytes_per_s = *g * 1e9;
  if (step_time) s->tensor_parallel = step_time->get_int("tensor_parallel", 1, {1, 1024});
  s->rank = c->get_int("rank", 16, {1, 1024});
  if (c->has("adapter_bytes")) {
    if (c->has("target_modules"))
      c->fail("target_modules",
              "give target_modules (sized from step_time.model) or "
              "adapter_bytes, not both");
    s->adapter_bytes = c->get_real("adapter_bytes", RealRange{0.0, 1e12, true});
  } else {
    s->target_modules = c->get_choice("target_modules", "attention", {"all", "attention"});
    if (!step_time || !step_time->has("model"))
      c->fail("target_modules",
              "needs a catalogue model (step_time.model) to size the "
              "adapters; else give adapter_bytes");
    const ModelSpec m = read_model(*step_time, "model");
    if (m.is_moe() && s->target_modules == "all")
      c->fail("target_modules", fmt::format("all: {} is a mixture of experts, whose expert "
                                            "adapters are not modelled; use attention or "
                                            "adapter_bytes",
                                            m.name));
    s->adapter_bytes =
        static_cast<double>(s->rank * layer_dims(m, s->target_modules) * m.layers) * k_weight_bytes;
  }
  // Popularity over adapters 1..n, as a cumulative list.
  s->cdf.resize(static_cast<size_t>(s->adapters));
  double sum = 0;
  for (int64_t k = 1; k <= s->adapters; ++k)
    s->cdf[k - 1] = sum +=
        s->popularity == "zipf" ? std::pow(static_cast<double>(k), -s->zipf_alpha) : 1.0;
  for (double& x : s->cdf) x /= sum;
  s->cdf.back() = 1;
  if (!enabled) return nullptr;  // every key was still read and checked
  return s;
}

std::unique_ptr<WorkloadSource> with_lora_adapters(std::unique_ptr<WorkloadSource> inner,
                                                   std::shared_ptr<const LoraSpec> spec,
                                                   uint64_t seed) {
  return std::make_unique<LoraSource>(std::move(inner), std::move(spec), seed);
}

bool LoraEngine::Lru::touch(uint32_t a, uint64_t tick) {
  if (capacity == 0) return true;
  if (last_use[a] != 0) {
    last_use[a] = tick;
    return true;
  }
  if (static_cast<int64_t>(resident.size()) < capacity) {
    resident.push_back(a);
  } else {  // evict the least recently used
    auto oldest = std::min_element(resident.begin(), resident.end(), [&](uint32_t x, uint32_t y) {
      return last_use[x] < last_use[y];
    });
    last_use[*oldest] = 0;
    *oldest = a;
  }
  last_use[a] = tick;
  return false;
}

LoraEngine::LoraEngine(std::shared_ptr<const LoraSpec> spec, size_t replicas)
    : m_spec(std::move(spec)), m_reps(replicas) {
  const auto ids = static_cast<size_t>(m_spec->adapters) + 1;
  for (Caches& c : m_reps) {
    c.gpu.capacity = m_spec->max_loras;
    c.gpu.last_use.assign(ids, 0);
    c.gpu.resident.reserve(static_cast<size_t>(m_spec->max_loras));
    c.host.capacity = m_spec->max_cpu_loras;
    c.host.last_use.assign(m_spec->max_cpu_loras > 0 ? ids : 0, 0);
    c.host.resident.reserve(static_cast<size_t>(m_spec->max_cpu_loras));
  }
  m_step_adapters.reserve(static_cast<size_t>(m_spec->max_loras) + 1);
  m_stats.adapters = m_spec->adapters;
  m_stats.max_loras = m_spec->max_loras;
  m_stats.max_cpu_loras = m_spec->max_cpu_loras;
}

uint8_t LoraEngine::residency(uint32_t rep, uint32_t adapter) const {
  if (adapter == 0) return 0;
  const Caches& c = m_reps[rep];
  return c.gpu.holds(adapter) ? 2 : c.host.holds(adapter) ? 1 : 0;
}

double LoraEngine::step_ms(uint32_t rep, const std::vector<StepEntry>& plan,
                           const RequestSlots& reqs, const StepCost* cost) {
  m_step_adapters.clear();
  int64_t tokens = 0;
  for (const StepEntry& e : plan) {
    const uint32_t a = reqs[e.slot].spec.adapter;
    if (a == 0 || e.kind == EntryKind::Padding) continue;
    tokens += e.tokens();
    if (std::find(m_step_adapters.begin(), m_step_adapters.end(), a) == m_step_adapters.end())
      m_step_adapters.push_back(a);
  }
  if (m_step_adapters.empty()) return 0;
  // Loads: every adapter of the step not in a GPU slot is copied in from host memory, after a
  // load from disk when host memory lacks it too. The step's adapters share one tick, so none
  // evicts another while there are slots enough.
  Caches& c = m_reps[rep];
  ++m_tick;
  double load_ms = 0;
  for (uint32_t a : m_step_adapters) {
    if (c.gpu.touch(a, m_tick)) {
      c.host.touch(a, m_tick);  // still in use: the host copy is recent too
      ++m_stats.gpu_hits;
      continue;
    }
    ++m_stats.gpu_misses;
    if (c.host.touch(a, m_tick)) {
      ++m_stats.host_hits;
    } else {
      ++m_stats.host_misses;
      load_ms += m_spec->disk_ms();
    }
    load_ms += m_spec->copy_ms();
  }
  // Compute: shrink (x A) and expand (x B) per adapted projection and layer, 2 x r x
  // (d_in + d_out) FLOPs a token = 2 x the adapter's weights; reading each distinct adapter's
  // weights once; both split over the tensor-parallel GPUs, on the step's roofs, no efficiency
  // factor (an ideal lower bound, docs/lora.md#cost).
  const double tp = static_cast<double>(m_spec->tensor_parallel);
  const double weights = m_spec->adapter_bytes / 2;
  const double flops = 2 * weights * static_cast<double>(tokens) / tp;
  const double bytes = m_spec->adapter_bytes * static_cast<double>(m_step_adapters.size()) / tp;
  const double peak_flops =
      m_spec->peak_flops_per_s ? *m_spec->peak_flops_per_s : (cost ? cost->peak_flops_per_s : 0);
  const double peak_bytes =
      m_spec->peak_bytes_per_s ? *m_spec->peak_bytes_per_s : (cost ? cost->peak_bytes_per_s : 0);
  const double compute_ms = std::max(peak_flops > 0 ? flops / peak_flops : 0.0,
                                     peak_bytes > 0 ? bytes / peak_bytes : 0.0) *
                            1e3;
  m_stats.load_s += load_ms * 1e-3;
  m_stats.compute_s += compute_ms * 1e-3;
  return load_ms + compute_ms;
}

}  // namespace servesim
