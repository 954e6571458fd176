// workload.transform.repeat_to_s: the transformed workload replayed end to end until it covers
// that many seconds (docs/workloads.md#transforms), so that an hour's trace fills a day.
#include <fmt/format.h>

#include <map>

#include "traces/factories.h"

namespace servesim {
namespace {

/// Copy k of the workload arrives k periods after copy 0, its ids k x (requests a copy) after
/// copy 0's; the stream ends at the first arrival at or past the end.
class Repeated final : public WorkloadSource {
 public:
  Repeated(WorkloadMaker make, int64_t period_ns, uint64_t per_copy, int64_t end_ns)
      : m_make(std::move(make)),
        m_inner(m_make()),
        m_period_ns(period_ns),
        m_per_copy(per_copy),
        m_end_ns(end_ns) {}

  bool next(RequestSpec& out) override {
    while (!m_done) {
      if (!m_inner->next(out)) {  // this copy is over: the next one
        add_counters(m_inner->counters());
        m_inner = m_make();
        ++m_copy;
        continue;
      }
      const int64_t t = out.arrival.count_ns() + m_copy * m_period_ns;
      if (t >= m_end_ns) {
        m_done = true;
        break;
      }
      out.arrival = Time::ns(t);
      out.id += static_cast<uint64_t>(m_copy) * m_per_copy;
      return true;
    }
    return false;
  }
  size_t size_hint() const override {
    return static_cast<size_t>(m_per_copy) *
           static_cast<size_t>((m_end_ns + m_period_ns - 1) / m_period_ns);
  }
  const std::vector<std::string>& class_names() const override { return m_inner->class_names(); }
  const std::vector<std::string>& tenant_names() const override { return m_inner->tenant_names(); }
  /// Each counter summed over the copies read (the last one in part), and the copies.
  std::vector<std::pair<std::string, int64_t>> counters() const override {
    std::vector<std::pair<std::string, int64_t>> out = m_inner->counters();
    for (auto& [name, n] : out)
      if (auto it = m_counted.find(name); it != m_counted.end()) n += it->second;
    out.emplace_back("transform_repeats", m_copy + 1);
    return out;
  }
  int64_t counters_total() const override {
    return m_inner->counters_total() + m_counted_total + m_copy + 1;
  }

 private:
  void add_counters(const std::vector<std::pair<std::string, int64_t>>& c) {
    for (const auto& [name, n] : c) {
      m_counted[name] += n;
      m_counted_total += n;
    }
  }

  WorkloadMaker m_make;
  std::unique_ptr<WorkloadSource> m_inner;
  int64_t m_period_ns;
  uint64_t m_per_copy;
  int64_t m_end_ns;
  int64_t m_copy = 0;
  bool m_done = false;
  std::map<std::string, int64_t> m_counted;  // of the copies done
  int64_t m_counted_total = 0;               // their sum
};

}  // namespace

std::unique_ptr<WorkloadSource> make_repeated(const Cfg& c, const WorkloadMaker& make) {
  const double cover_s = c.get_real("repeat_to_s", {0.0, 9.0e9, true});
  // One pass over a copy: its requests and its span, first to last arrival.
  std::unique_ptr<WorkloadSource> probe = make();
  RequestSpec r;
  int64_t n = 0, first_ns = 0, last_ns = 0;
  while (probe->next(r)) {
    if (n++ == 0) first_ns = r.arrival.count_ns();
    last_ns = r.arrival.count_ns();
  }
  if (n < 2 || last_ns == first_ns)
    c.fail("repeat_to_s",
           fmt::format("needs at least two requests at different times to repeat the workload "
                       "(found {} request{} over {} s)",
                       n, n == 1 ? "" : "s", static_cast<double>(last_ns - first_ns) * 1e-9));
  // A copy's span plus its mean gap, so that the seam between copies is spaced as the rest.
  const int64_t span = last_ns - first_ns;
  const int64_t period = span + span / (n - 1);
  const double end = static_cast<double>(first_ns) + cover_s * 1e9;
  const int64_t end_ns = end >= 9.0e18 ? std::numeric_limits<int64_t>::max() : std::llround(end);
  return std::make_unique<Repeated>(make, period, static_cast<uint64_t>(n), end_ns);
}

}  // namespace servesim
