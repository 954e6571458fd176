// workload.transform: reshapes any workload (a trace or a generator) as it streams past, in this
// order for each request: the time window, the length filters, random sampling, the context
// cap, then the time scale; the requests that survive are renumbered 0, 1, 2, ... Then
// repeat_to_s replays the result end to end (traces/repeat.cpp).
// docs/workloads.md#transforms gives each key and what is counted.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "core/random.h"
#include "traces/factories.h"

namespace servesim {
namespace {

constexpr IntRange k_tokens{1, 1'000'000'000};
constexpr double k_max_arrival_ns = 9.0e18;
/// The sampler's generator is seeded apart from the workload's own ("sample" in ASCII), so a
/// synthetic workload's draws and the keep/drop draws are not the same numbers.
constexpr uint64_t k_sample_seed_salt = 0x73616d706c65;

struct TransformSpec {
  bool window = false;
  int64_t window_start_ns = 0;
  int64_t window_end_ns = std::numeric_limits<int64_t>::max();
  bool prompt_filter = false, output_filter = false;
  int64_t min_prompt = 1, max_prompt = k_tokens.max, min_output = 1, max_output = k_tokens.max;
  double sample_fraction = 1.0;
  uint64_t sample_seed = 0;
  int64_t max_context_tokens = 0;  // 0: no cap
  double time_divisor = 1.0;       // rate_scale, or what target_rate_per_s works out to
  [[nodiscard]] bool drops() const {
    return window || prompt_filter || output_filter || sample_fraction < 1.0;
  }
};

class Transformed final : public WorkloadSource {
 public:
  Transformed(std::unique_ptr<WorkloadSource> inner, const TransformSpec& spec, std::string where)
      : m_inner(std::move(inner)),
        m_spec(spec),
        m_rng(spec.sample_seed),
        m_where(std::move(where)) {}

  /// Reads ahead to the first request that survives; false when none does.
  [[nodiscard]] bool prime() {
    RequestSpec first;
    if (!fetch(first)) return false;
    m_ahead = std::move(first);
    return true;
  }

  bool next(RequestSpec& out) override {
    if (!m_ahead) return fetch(out);
    out = std::move(*m_ahead);
    m_ahead.reset();
    return true;
  }
  size_t size_hint() const override { return m_spec.drops() ? 0 : m_inner->size_hint(); }
  const std::vector<std::string>& class_names() const override { return m_inner->class_names(); }
  const std::vector<std::string>& tenant_names() const override { return m_inner->tenant_names(); }

  std::vector<std::pair<std::string, int64_t>> counters() const override {
    auto out = m_inner->counters();
    if (m_spec.window) out.emplace_back("transform_dropped_before_window", m_before_window);
    if (m_spec.prompt_filter) out.emplace_back("transform_dropped_prompt_tokens", m_prompt_out);
    if (m_spec.output_filter) out.emplace_back("transform_dropped_output_tokens", m_output_out);
    if (m_spec.sample_fraction < 1.0) out.emplace_back("transform_dropped_sample", m_sampled_out);
    if (m_spec.max_context_tokens > 0)
      out.emplace_back("transform_capped_context_tokens", m_capped);
    return out;
  }
  // A count whose option is off stays 0.
  int64_t counters_total() const override {
    return m_inner->counters_total() + m_before_window + m_prompt_out + m_output_out +
           m_sampled_out + m_capped;
  }

 private:
  bool fetch(RequestSpec& out) {
    RequestSpec r;
    while (!m_past_window && m_inner->next(r)) {
      const int64_t t_ns = r.arrival.count_ns();
      if (t_ns < m_spec.window_start_ns) {
        ++m_before_window;
        continue;
      }
      if (t_ns >= m_spec.window_end_ns) {  // arrivals never decrease: nothing later is inside
        m_past_window = true;
        break;
      }
      if (r.prompt_tokens < m_spec.min_prompt || r.prompt_tokens > m_spec.max_prompt) {
        ++m_prompt_out;
        continue;
      }
      if (r.output_tokens < m_spec.min_output || r.output_tokens > m_spec.max_output) {
        ++m_output_out;
        continue;
      }
      if (m_spec.sample_fraction < 1.0 && !(m_rng.uniform01() < m_spec.sample_fraction)) {
        ++m_sampled_out;
        continue;
      }
      cap_context(r);
      r.arrival = scaled(t_ns - m_spec.window_start_ns, r.id);
      r.id = m_next_id++;
      out = std::move(r);
      return true;
    }
    return false;
  }

  /// Cuts the prompt first, then the output, so that prompt + output <= max_context_tokens.
  void cap_context(RequestSpec& r) {
    const int64_t cap = m_spec.max_context_tokens;
    if (cap == 0 || int64_t{r.prompt_tokens} + r.output_tokens <= cap) return;
    ++m_capped;
    if (r.output_tokens < cap) {
      r.prompt_tokens = static_cast<int32_t>(cap - r.output_tokens);
    } else {
      r.prompt_tokens = 1;
      r.output_tokens = static_cast<int32_t>(cap - 1);
    }
    if (r.hash_block_tokens > 0) {
      const size_t blocks =
          static_cast<size_t>((r.prompt_tokens + r.hash_block_tokens - 1) / r.hash_block_tokens);
      if (r.block_hashes.size() > blocks) r.block_hashes.resize(blocks);
    }
  }

  Time scaled(int64_t t_ns, uint64_t source_id) const {
    if (m_spec.time_divisor == 1.0) return Time::ns(t_ns);
    const double v = static_cast<double>(t_ns) / m_spec.time_divisor;
    if (!(v <= k_max_arrival_ns))
      throw InputError(
          fmt::format("{}: request {} of the source would arrive at {:.4g} s after "
                      "the time scale, past the simulator's limit of 9e+09 s",
                      m_where, source_id, v * 1e-9));
    return Time::ns(std::llround(v));
  }

  std::unique_ptr<WorkloadSource> m_inner;
  TransformSpec m_spec;
  Rng m_rng;
  std::string m_where;  // "workload.transform in c.yaml", for messages
  std::optional<RequestSpec> m_ahead;
  bool m_past_window = false;
  uint64_t m_next_id = 0;
  int64_t m_before_window = 0, m_prompt_out = 0, m_output_out = 0, m_sampled_out = 0, m_capped = 0;
};

void read_filter(const Cfg& c, const char* what, bool& on, int64_t& min, int64_t& max) {
  const std::string lo = fmt::format("min_{}_tokens", what),
                    hi = fmt::format("max_{}_tokens", what);
  on = c.has(lo) || c.has(hi);
  min = c.get_int(lo, 1, k_tokens);
  max = c.get_int(hi, k_tokens.max, k_tokens);
  if (max < min) c.fail(hi, fmt::format("must be >= {} ({})", lo, min));
}

TransformSpec read_spec(const Cfg& c, uint64_t seed) {
  TransformSpec s;
  s.window = c.has("window_start_s") || c.has("window_end_s");
  const double start_s = c.get_real("window_start_s", 0.0, {0.0, 9.0e9, false});
  s.window_start_ns = std::llround(start_s * 1e9);
  if (c.has("window_end_s")) {
    const double end_s = c.get_real("window_end_s", {start_s, 9.0e9, true});
    s.window_end_ns = std::llround(end_s * 1e9);
  }
  read_filter(c, "prompt", s.prompt_filter, s.min_prompt, s.max_prompt);
  read_filter(c, "output", s.output_filter, s.min_output, s.max_output);
  s.sample_fraction = c.get_real("sample_fraction", 1.0, {0.0, 1.0, true});
  s.sample_seed = seed ^ k_sample_seed_salt;
  s.max_context_tokens = c.get_int("max_context_tokens", 0, {2, k_tokens.max});
  if (c.has("rate_scale") && c.has("target_rate_per_s"))
    c.fail("target_rate_per_s", "give rate_scale or target_rate_per_s, not both");
  s.time_divisor = c.get_real("rate_scale", 1.0, {0.0, 1e9, true});
  return s;
}

/// The divisor that brings the transformed workload's mean rate, (n - 1) / (last - first
/// arrival), to `target_per_s`: one pass over a fresh copy of the source.
double divisor_for_rate(const Cfg& c, double target_per_s, const WorkloadMaker& make_inner,
                        const TransformSpec& spec, const std::string& where) {
  Transformed probe(make_inner(), spec, where);
  RequestSpec r;
  int64_t n = 0, first_ns = 0, last_ns = 0;
  while (probe.next(r)) {
    if (n++ == 0) first_ns = r.arrival.count_ns();
    last_ns = r.arrival.count_ns();
  }
  if (n < 2 || last_ns == first_ns)
    c.fail("target_rate_per_s",
           fmt::format("needs at least two requests at different times to measure the "
                       "workload's rate (found {} request{} over {} s); use rate_scale",
                       n, n == 1 ? "" : "s", static_cast<double>(last_ns - first_ns) * 1e-9));
  const double mean_per_s =
      static_cast<double>(n - 1) / (static_cast<double>(last_ns - first_ns) * 1e-9);
  return target_per_s / mean_per_s;
}

}  // namespace

std::unique_ptr<WorkloadSource> make_transform(const Cfg& c, const WorkloadMaker& make_inner,
                                               uint64_t seed) {
  const std::vector<std::string> keys{
      "max_context_tokens", "max_output_tokens", "max_prompt_tokens", "min_output_tokens",
      "min_prompt_tokens",  "rate_scale",        "repeat_to_s",       "sample_fraction",
      "target_rate_per_s",  "window_end_s",      "window_start_s"};
  bool any = false;
  for (const auto& k : keys) any = c.has(k) || any;
  if (!any) {
    c.check_keys_read();  // a misspelt or misplaced key is named as such
    c.fail("", fmt::format("give at least one of {}", join_names(keys)));
  }
  TransformSpec spec = read_spec(c, seed);
  const std::string where = fmt::format("{} in {}", c.path(), c.doc().file());
  std::unique_ptr<WorkloadSource> inner = make_inner();
  if (inner->reactive())
    c.fail("",
           "cannot reshape a workload whose requests wait for others (sessions, "
           "dependencies, closed-loop users): dropping or moving a request would change "
           "when the others arrive; remove workload.transform");
  if (c.has("target_rate_per_s")) {
    const double target = c.get_real("target_rate_per_s", {0.0, 1e9, true});
    spec.time_divisor = divisor_for_rate(c, target, make_inner, spec, where);
  }
  if (c.has("repeat_to_s")) {  // after the rest: the transformed workload, copy after copy
    inner.reset();
    return make_repeated(c, [make_inner, spec, where] {
      return std::make_unique<Transformed>(make_inner(), spec, where);
    });
  }
  auto out = std::make_unique<Transformed>(std::move(inner), spec, where);
  if (!out->prime())
    c.fail("", fmt::format("no request is left after the transform ({})", [&] {
             std::string counts;
             for (const auto& [name, n] : out->counters())
               counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, name);
             return counts.empty() ? std::string("the source has none in the window") : counts;
           }()));
  return out;
}

}  // namespace servesim
