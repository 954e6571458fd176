// requests.csv: one row per request as it leaves the engine (RequestsCsvWriter, metrics/output.h).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "core/decimal_chars.h"
#include "metrics/output.h"

namespace servesim {
namespace {

// requests.csv rows are formatted by hand with std::to_chars into a fixed line buffer: a row
// per request, millions of them in a long run, and fmt's general machinery (and growing
// strings) took a fifth of such a run's time.

/// One row under construction; every field but a rejection's reason is bounded (< 400 bytes).
/// Its text goes into its own array, or straight into the free room of the output buffer
/// (Line(at)): a row in order is then not copied again.
struct Line {
  /// put_ns_as_seconds's longest text ("-9223372036.854775808"), rounded up.
  static constexpr size_t k_secs_max = 32;
  /// The room a row's bounded text takes, k_secs_max to spare (copy_secs).
  static constexpr size_t k_size = 512;
  char own[k_size];
  char* data = own;
  char* p = own;
  int64_t last_ns = 0;   // the last put_secs's time,
  size_t last_at = 0;    // where its text starts in data
  size_t last_size = 0;  // and its length (0: none yet)
  int64_t kept_ns = 0;   // a time keep() set aside, likewise (kept_size 0: none)
  size_t kept_at = 0;
  size_t kept_size = 0;

  Line() = default;
  /// A row written at `at`. REQUIRES: k_size bytes there.
  explicit Line(char* at) : data(at), p(at) {}
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  void put(std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  void comma() { *p++ = ','; }
  [[gnu::always_inline]] void put_int(int64_t v) {
    if (v >= 0)
      p = decimal_chars::put_u64(p, static_cast<uint64_t>(v));
    else
      p = std::to_chars(p, data + k_size, v).ptr;
  }
  /// Exact decimal seconds from integer nanoseconds: "12.000340001". A row often repeats a time
  /// (finish_s and release_s, ttft_s and server_ttft_s): the last one's text is copied.
  [[gnu::always_inline]] void put_secs(Time t) {
    const int64_t ns = t.count_ns();
    if (ns == last_ns && last_size != 0) {
      copy_secs(last_at, last_size);
      return;
    }
    if (ns == kept_ns && kept_size != 0) {
      copy_secs(kept_at, kept_size);
      return;
    }
    char* const start = p;
    p = decimal_chars::put_ns_as_seconds(p, ns);
    last_ns = ns;
    last_at = static_cast<size_t>(start - data);
    last_size = static_cast<size_t>(p - start);
  }
  /// Sets the last put_secs's text aside, for a later time equal to it (server_ttft_s is
  /// ttft_s without the `api` section, three fields on).
  void keep() {
    kept_ns = last_ns;
    kept_at = last_at;
    kept_size = last_size;
  }
  [[gnu::always_inline]] void copy_secs(size_t at, size_t size) {
    char copy[k_secs_max];
    std::memcpy(copy, data + at, k_secs_max);  // whole: two fixed-size moves
    std::memcpy(p, copy, k_secs_max);
    p += size;
  }
  /// A double with nine decimals, correctly rounded (as printf's %.9f).
  void put_fixed9(double v) { p = decimal_chars::put_fixed9(p, data + k_size, v); }
  template <typename Buffer>
  void append_to(Buffer& out) const {
    if constexpr (std::is_same_v<Buffer, std::string>) {
      out.append(data, static_cast<size_t>(p - data));  // not the general iterator-pair append
    } else if (data == out.data() + out.size()) {       // written in place (Line(at)): kept
      out.resize(out.size() + static_cast<size_t>(p - data));
    } else {
      out.append(data, static_cast<const char*>(p));
    }
  }
};

}  // namespace

RequestsCsvWriter::RequestsCsvWriter(std::ostream& out) : m_out(out) {
  fmt::format_to(std::back_inserter(m_buf),
                 "id,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,release_s,"
                 "ttft_s,tpot_s,e2e_s,queue_s,preemptions,status,reason,class,priority,"
                 "server_ttft_s,tenant\n");
}

namespace {

/// The run's names of a class or tenant.
struct Names {
  const std::vector<std::string>* classes = nullptr;
  const std::vector<std::string>* tenants = nullptr;
};

void put_name(Line& l, const std::vector<std::string>* names, uint16_t id) {
  if (names && id < names->size()) l.put((*names)[id]);
}

/// ",<class>,<priority>,<server_ttft_s>,<tenant>\n": the row's last columns (the engine's TTFT
/// only for a finished request).
void put_class(Line& l, const Request& r, const Names& names) {
  l.comma();
  put_name(l, names.classes, r.spec.class_id);
  l.comma();
  l.put_int(r.spec.priority);
  l.comma();
  if (r.state == RequestState::Released) l.put_secs(r.engine_ttft());
  l.comma();
  put_name(l, names.tenants, r.spec.tenant_id);
  l.put("\n");
}

/// The quoted reason and the row's last columns, after `l` (the reason is unbounded).
template <typename Buffer>
void put_reason_and_end(Buffer& out, Line& l, const Request& r, const Names& names) {
  l.put(status_name(r));
  l.put(",\"");
  l.append_to(out);
  std::string reason = r.reject_reason;
  std::replace(reason.begin(), reason.end(), '"', '\'');
  out.append(reason.data(), reason.data() + reason.size());
  Line tail;
  tail.put("\"");
  put_class(tail, r, names);
  tail.append_to(out);
}

/// The row's text at `l`, then at the end of `out` (`l` may be out's free room: Line(at)).
template <typename Buffer>
void format_row_at(Line& l, Buffer& out, const Request& r, const Names& names) {
  l.put_int(static_cast<int64_t>(r.spec.id));
  l.comma();
  l.put_secs(r.spec.arrival);
  l.comma();
  l.put_int(r.spec.prompt_tokens);
  l.comma();
  l.put_int(r.spec.output_tokens);
  l.comma();
  if (r.state == RequestState::Rejected) {
    l.put(",,");
    l.put_secs(r.release);
    l.put(",,,");
    l.put_secs(r.release - r.spec.arrival);
    l.put(",,");
    l.put_int(r.preemptions);
    l.comma();
    put_reason_and_end(out, l, r, names);
    return;
  }
  if (r.state == RequestState::Abandoned) {  // timed out or cancelled: left at release_s
    const bool token = r.first_token != Time::max();
    if (token) l.put_secs(r.first_token);
    l.put(",,");
    l.put_secs(r.release);
    l.comma();
    if (token) l.put_secs(r.first_token - r.spec.arrival);
    l.put(",,");
    l.put_secs(r.release - r.spec.arrival);
    l.comma();
    if (r.first_admitted != Time::max()) l.put_secs(r.first_admitted - r.spec.arrival);
    l.comma();
    l.put_int(r.preemptions);
    l.comma();
    put_reason_and_end(out, l, r, names);
    return;
  }
  if (r.state != RequestState::Released) {  // a bounded run stopped first
    if (r.first_token != Time::max()) l.put_secs(r.first_token);
    l.put(",,,,,,");
    if (r.first_admitted != Time::max()) l.put_secs(r.first_admitted - r.spec.arrival);
    l.comma();
    l.put_int(r.preemptions);
    l.put(",unfinished,\"");
    l.put_int(r.generated_tokens);
    l.put(" of ");
    l.put_int(r.spec.output_tokens);
    l.put(" tokens generated\"");
    put_class(l, r, names);
    l.append_to(out);
    return;
  }
  l.put_secs(r.first_token);
  l.comma();
  l.put_secs(r.finish);
  l.comma();
  l.put_secs(r.release);
  l.comma();
  l.put_secs(r.first_token - r.spec.arrival);
  l.keep();
  l.comma();
  if (r.spec.output_tokens > 1)
    l.put_fixed9((r.last_token - r.first_token).seconds() / (r.spec.output_tokens - 1));
  l.comma();
  l.put_secs(r.release - r.spec.arrival);
  l.comma();
  l.put_secs(r.first_admitted - r.spec.arrival);
  l.comma();
  l.put_int(r.preemptions);
  l.put(",finished,");
  put_class(l, r, names);
  l.append_to(out);
}

void format_row(std::string& out, const Request& r, const Names& names) {
  Line l;
  format_row_at(l, out, r, names);
}

/// The row at the end of `out`, written there in place.
void format_row(fmt::memory_buffer& out, const Request& r, const Names& names) {
  out.reserve(out.size() + Line::k_size);
  Line l(out.data() + out.size());
  format_row_at(l, out, r, names);
}

}  // namespace

void RequestsCsvWriter::record(const Request& r) {
  if (r.spec.id < m_next_id) throw std::logic_error("request recorded twice");
  if (r.spec.id == m_next_id) {  // in order: straight to the buffer, then the rows it frees
    format_row(m_buf, r, Names{m_class_names, m_tenant_names});
    ++m_next_id;
    if (m_held > 0) {  // its slot is empty (it was m_next_id's): passed
      m_head = (m_head + 1) & (m_ring.size() - 1);
      --m_held;
      drain_held();
    }
    if (m_buf.size() > (size_t{1} << 16)) flush_buffer();
    return;
  }
  const uint64_t index = r.spec.id - m_next_id;
  if (index >= m_ring.size()) grow_ring(static_cast<size_t>(index) + 1);
  const size_t mask = m_ring.size() - 1;
  format_row(m_ring[(m_head + index) & mask], r, Names{m_class_names, m_tenant_names});
  m_held = std::max(m_held, static_cast<size_t>(index) + 1);
}

void RequestsCsvWriter::drain_held() {
  const size_t mask = m_ring.size() - 1;
  while (m_held > 0 && !m_ring[m_head].empty()) {  // the rows now in order, emptied
    std::string& row = m_ring[m_head];
    m_buf.append(row.data(), row.data() + row.size());
    row.clear();
    m_head = (m_head + 1) & mask;
    --m_held;
    ++m_next_id;
  }
}

void RequestsCsvWriter::grow_ring(size_t slots) {
  size_t size = std::max<size_t>(16, m_ring.size());
  while (size < slots) size *= 2;
  std::vector<std::string> ring(size);
  for (size_t i = 0; i < m_ring.size(); ++i)  // every slot, for its capacity; held ones first
    ring[i] = std::move(m_ring[(m_head + i) & (m_ring.size() - 1)]);
  m_ring = std::move(ring);
  m_head = 0;
}

void RequestsCsvWriter::flush_buffer() {
  m_out.write(m_buf.data(), static_cast<std::streamsize>(m_buf.size()));
  m_buf.clear();
}

void RequestsCsvWriter::finish() {
  for (size_t i = 0; i < m_held; ++i) {
    std::string& row = m_ring[(m_head + i) & (m_ring.size() - 1)];
    m_buf.append(row.data(), row.data() + row.size());
    row.clear();
  }
  m_head = 0;
  m_held = 0;
  flush_buffer();
  m_out.flush();
}

std::string requests_csv(const std::vector<Request>& requests,
                         const std::vector<std::string>& class_names,
                         const std::vector<std::string>& tenant_names) {
  std::ostringstream out;
  RequestsCsvWriter w(out);
  w.set_class_names(&class_names);
  w.set_tenant_names(&tenant_names);
  for (const Request& r : requests) w.record(r);
  w.finish();
  return out.str();
}

}  // namespace servesim
