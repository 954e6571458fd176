// A seeded synthetic workload, generated lazily one request at a time (memory does not grow with
// the request count). For each request the generator draws, in this order: the arrival (one or
// more values, by kind), the prompt length, the output length -- or, with `lengths_from`, the
// row of a length-only trace that gives both. The arrival processes are in
// arrival_process.cpp, the length distributions in length_dist.cpp; docs/workloads-synthetic.md
// defines every kind and key.
#include <fmt/format.h>

#include <tuple>

#include "core/random.h"
#include "traces/arrival_process.h"
#include "traces/factories.h"
#include "traces/length_dist.h"

namespace servesim {
namespace {

class Synthetic final : public WorkloadSource {
 public:
  Synthetic(uint64_t seed, int64_t count, double start_s, std::unique_ptr<ArrivalProcess> arrivals,
            std::unique_ptr<LengthPairs> lengths, std::string where)
      : m_rng(seed),
        m_count(count),
        m_start_s(start_s),
        m_arrivals(std::move(arrivals)),
        m_lengths(std::move(lengths)),
        m_where(std::move(where)) {}

  bool next(RequestSpec& out) override {
    if (m_made == m_count) return false;
    const double clock_s = m_arrivals->next_s(m_rng);
    out.id = static_cast<uint64_t>(m_made);
    // Random gaps can (rarely) carry a long workload past the limit the config check allows.
    if (!(m_start_s + clock_s <= k_max_arrival_s))
      throw InputError(
          fmt::format("{}: request {} would arrive at {:.4g} s, past the simulator's "
                      "limit of {:.0e} s; raise the arrival rate or lower requests",
                      m_where, m_made, m_start_s + clock_s, k_max_arrival_s));
    out.arrival = Time::from_seconds(m_start_s + clock_s);
    std::tie(out.prompt_tokens, out.output_tokens) = m_lengths->draw_pair(m_rng);
    ++m_made;
    return true;
  }
  size_t size_hint() const override { return static_cast<size_t>(m_count); }

 private:
  Rng m_rng;
  int64_t m_count;
  double m_start_s;
  std::unique_ptr<ArrivalProcess> m_arrivals;
  std::unique_ptr<LengthPairs> m_lengths;
  std::string m_where;  // "workload.synthetic in file", for messages
  int64_t m_made = 0;
};

}  // namespace

std::unique_ptr<WorkloadSource> make_synthetic(const Cfg& c, uint64_t seed) {
  const int64_t count = c.get_int("requests", {1, int64_t{1} << 40});
  const double start_s = c.get_real("start_s", 0.0, {0.0, 1e9, false});
  const Cfg arrival = c.child("arrival");
  ArrivalConfig a = read_arrival_process(arrival, start_s);
  // The last arrival of a fixed workload, and the expected one of the random kinds.
  const double span_s =
      static_cast<double>(a.first_at_start ? count - 1 : count) / a.mean_rate_per_s;
  if (!(start_s + span_s <= k_max_arrival_s))
    arrival.fail(a.rate_key,
                 fmt::format("{} requests from start_s {} {} arrive until {:.4g} s, past the "
                             "simulator's limit of {:.0e} s",
                             count, start_s, a.rate_words, start_s + span_s, k_max_arrival_s));
  std::unique_ptr<LengthPairs> lengths = read_request_lengths(c, count);
  return std::make_unique<Synthetic>(seed, count, start_s, std::move(a.process), std::move(lengths),
                                     fmt::format("{} in {}", c.path(), c.doc().file()));
}

}  // namespace servesim
