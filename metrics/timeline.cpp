#include "metrics/timeline.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace servesim {

namespace {

constexpr int k_replicas_pid = 1;
constexpr int k_requests_pid = 2;
constexpr int k_transfers_pid = 3;

const char* role_name(PoolRole r) {
  return r == PoolRole::Prefill ? "prefill" : r == PoolRole::Decode ? "decode" : "mixed";
}

// Microseconds with three decimals from integer nanoseconds, exactly.
void append_us(fmt::memory_buffer& b, Time t) {
  const int64_t ns = t.count_ns();
  const char* sign = ns < 0 ? "-" : "";
  const int64_t a = ns < 0 ? -ns : ns;
  fmt::format_to(std::back_inserter(b), "{}{}.{:03d}", sign, a / 1000, a % 1000);
}

}  // namespace

TimelineWriter::TimelineWriter(std::ostream& out, uint64_t max_requests)
    : m_out(out), m_max_requests(max_requests) {
  m_out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
        << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << k_replicas_pid
        << ",\"tid\":0,\"args\":{\"name\":\"replicas\"}},\n"
        << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << k_replicas_pid
        << ",\"tid\":0,\"args\":{\"sort_index\":1}},\n"
        << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << k_requests_pid
        << ",\"tid\":0,\"args\":{\"name\":\"requests\"}},\n"
        << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << k_requests_pid
        << ",\"tid\":0,\"args\":{\"sort_index\":2}}";
}

void TimelineWriter::begin_event() { m_buf.append(std::string_view(",\n")); }

void TimelineWriter::flush_if_full() {
  if (m_buf.size() > (size_t{1} << 16)) {
    m_out.write(m_buf.data(), static_cast<std::streamsize>(m_buf.size()));
    m_buf.clear();
  }
}

void TimelineWriter::on_start(uint32_t replicas, const std::vector<PoolSpec>& pools) {
  m_pools = pools;
  if (replicas > 0) name_replicas(replicas - 1);
}

// Names the tracks of replicas up to `up_to` not named yet (once per replica, not per step).
void TimelineWriter::name_replicas(uint32_t up_to) {
  auto it = std::back_inserter(m_buf);
  const auto first_new = static_cast<uint32_t>(m_replica_steps.size());
  if (up_to < first_new) return;
  m_replica_steps.resize(up_to + 1, 0);
  for (uint32_t r = first_new; r <= up_to; ++r) {
    std::string name = fmt::format("replica {}", r);
    for (const PoolSpec& p : m_pools)
      if (r >= p.first_replica && r < p.first_replica + p.replicas)
        name += fmt::format(" (pool {}, {})", p.name, role_name(p.role));
    begin_event();
    fmt::format_to(
        it,
        "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},"
        "\"args\":{{\"name\":{}}}}}",
        k_replicas_pid, r,
        nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    begin_event();
    fmt::format_to(it,
                   "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":{},"
                   "\"args\":{{\"sort_index\":{}}}}}",
                   k_replicas_pid, r, r);
  }
}

void TimelineWriter::on_step(const StepRecord& s) {
  auto it = std::back_inserter(m_buf);
  if (s.replica >= m_replica_steps.size()) name_replicas(s.replica);
  // The replica's KV and queue as counter tracks, at the step's start.
  begin_event();
  fmt::format_to(it, "{{\"name\":\"KV replica {}\",\"ph\":\"C\",\"pid\":{},\"ts\":", s.replica,
                 k_replicas_pid);
  append_us(m_buf, s.start);
  fmt::format_to(it, ",\"args\":{{\"used_tokens\":{}}}}}", s.kv_used_tokens);
  begin_event();
  fmt::format_to(it, "{{\"name\":\"queue replica {}\",\"ph\":\"C\",\"pid\":{},\"ts\":", s.replica,
                 k_replicas_pid);
  append_us(m_buf, s.start);
  fmt::format_to(it, ",\"args\":{{\"waiting\":{},\"running\":{}}}}}", s.waiting, s.running);
  const int64_t n = m_replica_steps[s.replica]++;
  begin_event();
  fmt::format_to(it,
                 "{{\"name\":\"step {}: {} prefill / {} decode\",\"cat\":\"step\","
                 "\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":",
                 n, s.prefill_sequences, s.decode_tokens, k_replicas_pid, s.replica);
  append_us(m_buf, s.start);
  m_buf.append(std::string_view(",\"dur\":"));
  append_us(m_buf, s.duration);
  fmt::format_to(it,
                 ",\"args\":{{\"sequences\":{},\"prefill_tokens\":{},\"decode_tokens\":{},"
                 "\"kv_used_tokens\":{},\"kv_capacity_tokens\":{},\"waiting\":{},"
                 "\"running\":{},\"preemptions\":{}",
                 s.sequences, s.prefill_tokens, s.decode_tokens, s.kv_used_tokens,
                 s.kv_capacity_tokens, s.waiting, s.running, s.preemptions);
  if (s.bound >= 0)
    fmt::format_to(it, ",\"bound\":\"{}\",\"bytes\":{},\"flops\":{}",
                   s.bound == 0 ? "bandwidth" : "compute", s.bytes, s.flops);
  m_buf.append(std::string_view("}}"));
  m_last_step_end = std::max(m_last_step_end, s.start + s.duration);
  flush_if_full();
}

void TimelineWriter::span(const char* name, uint64_t id, Time from, Time to) {
  if (from == Time::max() || to == Time::max() || !(from < to)) return;
  begin_event();
  fmt::format_to(std::back_inserter(m_buf),
                 "{{\"name\":\"{}\",\"cat\":\"request\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":",
                 name, k_requests_pid, id);
  append_us(m_buf, from);
  m_buf.append(std::string_view(",\"dur\":"));
  append_us(m_buf, to - from);
  m_buf.push_back('}');
}

void TimelineWriter::async_slice(const char* name, const TransferRecord& t, Time from, Time to) {
  if (!(from < to)) return;
  auto it = std::back_inserter(m_buf);
  for (const char ph : {'b', 'e'}) {
    begin_event();
    fmt::format_to(it,
                   "{{\"name\":\"{} {}\",\"cat\":\"kv_transfer\",\"ph\":\"{}\",\"id\":{},"
                   "\"pid\":{},\"tid\":{},\"ts\":",
                   name, t.request, ph, t.request, k_transfers_pid, t.to);
    append_us(m_buf, ph == 'b' ? from : to);
    if (ph == 'b')
      fmt::format_to(it, ",\"args\":{{\"request\":{},\"from\":{},\"to\":{}}}", t.request, t.from,
                     t.to);
    m_buf.push_back('}');
  }
}

void TimelineWriter::on_transfer(const TransferRecord& t) {
  if (t.request >= m_max_requests) return;
  if (!m_transfers_named) {
    m_transfers_named = true;
    begin_event();
    fmt::format_to(std::back_inserter(m_buf),
                   "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,"
                   "\"args\":{{\"name\":\"kv transfers\"}}}},\n"
                   "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":0,"
                   "\"args\":{{\"sort_index\":3}}}}",
                   k_transfers_pid, k_transfers_pid);
  }
  async_slice("kv transfer", t, t.started, t.delivered);
  async_slice("admit wait", t, t.delivered, t.admitted);
  // Inside the request's "decode" span (first token to finish), on its own track.
  span("kv transfer", t.request, t.started, t.delivered);
  span("admit wait", t.request, t.delivered, t.admitted);
  flush_if_full();
}

void TimelineWriter::record(const Request& r) {
  const uint64_t id = r.spec.id;
  if (id >= m_max_requests) return;
  auto it = std::back_inserter(m_buf);
  begin_event();
  fmt::format_to(it,
                 "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},"
                 "\"args\":{{\"name\":\"request {}\"}}}}",
                 k_requests_pid, id, id);
  begin_event();
  fmt::format_to(it,
                 "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":{},"
                 "\"args\":{{\"sort_index\":{}}}}}",
                 k_requests_pid, id, id);
  const Time arrival = r.spec.arrival;
  if (r.state != RequestState::Released) {  // rejected, or left unserved by a bounded run
    // Refused or given up on (admission, abandonment): at the instant it left.
    const bool rejected = r.state == RequestState::Rejected || r.state == RequestState::Abandoned;
    const Time at = r.state == RequestState::Abandoned ? r.release
                    : rejected                         ? arrival
                                                       : std::max(m_last_step_end, arrival);
    begin_event();
    fmt::format_to(it,
                   "{{\"name\":\"{}\",\"cat\":\"request\",\"ph\":\"i\",\"s\":\"t\","
                   "\"pid\":{},\"tid\":{},\"ts\":",
                   status_name(r), k_requests_pid, id);
    append_us(m_buf, at);
    fmt::format_to(it,
                   ",\"args\":{{\"prompt_tokens\":{},\"output_tokens\":{},"
                   "\"generated_tokens\":{},\"reason\":{}}}}}",
                   r.spec.prompt_tokens, r.spec.output_tokens, r.generated_tokens,
                   nlohmann::json(r.reject_reason)
                       .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (!rejected) {
      span("queued", id, arrival, r.first_admitted);
      span("prefill", id, r.first_admitted, r.first_token);
    }
    flush_if_full();
    return;
  }
  // The enclosing span first: viewers nest the phases that follow inside it.
  begin_event();
  fmt::format_to(it,
                 "{{\"name\":\"request {}\",\"cat\":\"request\",\"ph\":\"X\",\"pid\":{},"
                 "\"tid\":{},\"ts\":",
                 id, k_requests_pid, id);
  append_us(m_buf, arrival);
  m_buf.append(std::string_view(",\"dur\":"));
  append_us(m_buf, r.release - arrival);
  fmt::format_to(it,
                 ",\"args\":{{\"prompt_tokens\":{},\"output_tokens\":{},\"preemptions\":{},"
                 "\"replica\":{},\"cached_prompt_tokens\":{}}}}}",
                 r.spec.prompt_tokens, r.spec.output_tokens, r.preemptions, r.replica,
                 r.cached_prompt_tokens);
  span("queued", id, arrival, r.first_admitted);
  span("prefill", id, r.first_admitted, r.first_token);
  span("decode", id, r.first_token, r.finish);
  span("batch wait", id, r.finish, r.release);
  flush_if_full();
}

void TimelineWriter::finish() {
  if (m_finished) return;
  m_finished = true;
  m_buf.append(std::string_view("\n]}\n"));
  m_out.write(m_buf.data(), static_cast<std::streamsize>(m_buf.size()));
  m_buf.clear();
  m_out.flush();
}

}  // namespace servesim
