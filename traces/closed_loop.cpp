// Closed-loop users (workload.closed_loop): `users` users, each with one request outstanding at
// a time; a user sends its next request a think time after the previous reply left the engine
// (or after it was rejected). This is how a benchmark with a fixed concurrency, or a pool of
// chat users, loads a server: the arrival rate follows the server's speed instead of a clock.
//
// User u's first request arrives at start_s + u x ramp_s / users. With turns > 1 a user's
// requests form conversations of `turns` turns: a turn's prompt is the conversation's context
// so far (every earlier prompt and reply) plus newly drawn prompt tokens, in one token stream
// (RequestSpec::content_stream) that a prefix cache can reuse; a rejected turn ends its
// conversation. Randomness, in order of use: the prompt and output lengths as each user's
// first request is made (in arrival order), and at each departure the think time, the prompt
// and the output. User u's first request has id u; later ones are numbered from `users` on in
// the order they are made. docs/workloads-synthetic.md defines the keys.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "core/random.h"
#include "traces/arrival_process.h"
#include "traces/factories.h"
#include "traces/length_dist.h"

namespace servesim {
namespace {

struct ClosedLoopSpec {
  int64_t users = 1;
  int64_t requests = 1;
  double think_mean_s = 0;
  bool think_exponential = true;
  double ramp_s = 0;
  double start_s = 0;
  int64_t turns = 1;
};

class ClosedLoop final : public WorkloadSource {
 public:
  ClosedLoop(const ClosedLoopSpec& spec, uint64_t seed, std::unique_ptr<LengthPairs> lengths,
             std::string where)
      : m_spec(spec),
        m_rng(seed),
        m_lengths(std::move(lengths)),
        m_where(std::move(where)),
        m_users(static_cast<size_t>(std::min(spec.users, spec.requests))) {
    m_owner.reserve(m_users.size());
  }

  bool next(RequestSpec& out) override {
    // The users' first requests; the rest come from on_depart.
    if (m_first_sent == m_users.size()) return false;
    const size_t u = m_first_sent++;
    const double at_s =
        m_spec.start_s + m_spec.ramp_s * static_cast<double>(u) / static_cast<double>(m_spec.users);
    make(u, static_cast<uint64_t>(u), Time::from_seconds(at_s), out);
    return true;
  }
  size_t size_hint() const override { return static_cast<size_t>(m_spec.requests); }
  bool reactive() const override { return true; }
  size_t waiting() const override { return more_to_make() ? m_owner.size() : 0; }

  void on_depart(const Request& r, Time now, std::vector<RequestSpec>& ready) override {
    auto it = m_owner.find(r.spec.id);
    if (it == m_owner.end()) return;  // not one of ours (cannot happen)
    const size_t u = it->second;
    m_owner.erase(it);
    User& user = m_users[u];
    if (r.state == RequestState::Rejected || r.state == RequestState::Abandoned) {
      user.turn = 0;  // a turn refused or given up on ends its conversation
    } else {
      user.context_tokens = int64_t{r.spec.prompt_tokens} + r.spec.output_tokens;
      user.turn = (user.turn + 1) % m_spec.turns;
    }
    if (!more_to_make()) return;
    const double think_s = m_spec.think_exponential && m_spec.think_mean_s > 0
                               ? m_rng.exponential(1.0 / m_spec.think_mean_s)
                               : m_spec.think_mean_s;
    const double at_s = now.seconds() + think_s;
    if (!(at_s <= k_max_arrival_s))
      throw InputError(
          fmt::format("{}: request {} would arrive at {:.4g} s, past the "
                      "simulator's limit of {:.0e} s; lower requests or think_s",
                      m_where, next_id(), at_s, k_max_arrival_s));
    ready.emplace_back();
    make(u, next_id(), std::max(now, Time::from_seconds(at_s)), ready.back());
    ++m_followups;
  }

 private:
  struct User {
    int64_t context_tokens = 0;  // the conversation's prompts and replies so far
    int64_t turn = 0;            // of the conversation: 0 starts a new one
    uint64_t stream = 0;
  };

  /// Every user's first request is counted as made from the start (it has its id already).
  [[nodiscard]] bool more_to_make() const {
    return static_cast<int64_t>(m_users.size() + m_followups) < m_spec.requests;
  }
  [[nodiscard]] uint64_t next_id() const { return m_users.size() + m_followups; }

  void make(size_t u, uint64_t id, Time at, RequestSpec& out) {
    User& user = m_users[u];
    const auto [fresh, output] = m_lengths->draw_pair(m_rng);  // the prompt drawn first
    out = RequestSpec{};
    out.id = id;
    out.arrival = at;
    out.output_tokens = output;
    if (m_spec.turns > 1) {
      if (user.turn == 0) {
        user.stream = ++m_conversations;
        user.context_tokens = 0;
      }
      out.content_stream = user.stream;
      out.session = user.stream;
    }
    // A context beyond any engine's limit is still a request (the engine rejects it).
    out.prompt_tokens = static_cast<int32_t>(std::min<int64_t>(
        user.context_tokens * (m_spec.turns > 1) + int64_t{fresh}, 1'000'000'000));
    m_owner.emplace(out.id, u);
  }

  ClosedLoopSpec m_spec;
  Rng m_rng;
  std::unique_ptr<LengthPairs> m_lengths;
  std::string m_where;
  std::vector<User> m_users;
  std::unordered_map<uint64_t, size_t> m_owner;  // request id -> its user, while in flight
  size_t m_first_sent = 0;
  size_t m_followups = 0;  // requests made after a departure
  uint64_t m_conversations = 0;
};

}  // namespace

std::unique_ptr<WorkloadSource> make_closed_loop(const Cfg& c, uint64_t seed) {
  ClosedLoopSpec s;
  // max_concurrency: a benchmark's clients (vllm bench serve --max-concurrency, trtllm-bench),
  // each sending its next request as soon as its last reply is back: users with no think time.
  const bool clients = c.one_of({"max_concurrency", "users"}) == "max_concurrency";
  s.users = c.get_int(clients ? "max_concurrency" : "users", {1, 1'000'000});
  s.requests = c.get_int("requests", {1, int64_t{1} << 40});
  s.think_mean_s = clients ? c.get_real("think_s", 0.0, {0.0, 1e6, false})
                           : c.get_real("think_s", {0.0, 1e6, false});
  s.think_exponential =
      c.get_choice("think", "exponential", {"exponential", "fixed"}) == "exponential";
  s.ramp_s = c.get_real("ramp_s", 0.0, {0.0, 1e6, false});
  s.start_s = c.get_real("start_s", 0.0, {0.0, 1e9, false});
  s.turns = c.get_int("turns", 1, {1, 1'000'000});
  std::unique_ptr<LengthPairs> lengths = read_request_lengths(c, s.requests);
  return std::make_unique<ClosedLoop>(s, seed, std::move(lengths),
                                      fmt::format("{} in {}", c.path(), c.doc().file()));
}

}  // namespace servesim
