// requests.csv: one row per request as it leaves the engine (RequestsCsvWriter, metrics/output.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/decimal_chars.h"
#include "core/side_thread.h"
#include "metrics/output.h"

namespace servesim {

/// The run's names of a class or tenant.
struct RequestsCsvNames {
  const std::vector<std::string>* classes = nullptr;
  const std::vector<std::string>* tenants = nullptr;
};

struct RequestsCsvHeldRow {
  /// What a finished request's row shows: a row that waits for a lower id is kept as these
  /// values (88 bytes) and written straight into the output buffer when its turn comes,
  /// formatted once and never copied. Without member initializers, so that a batch's rows
  /// are allocated unwritten (make_unique_for_overwrite): fill_finished_row writes them all.
  struct Finished {
    uint64_t id;
    int64_t arrival_ns;
    int64_t first_token_ns;
    int64_t finish_ns;
    int64_t release_ns;
    int64_t first_admitted_ns;
    int64_t server_ttft_ns;  ///< the engine's TTFT (Request::engine_ttft)
    /// last token - first token, with more than one output token (else 0): its TPOT is worked
    /// out from it where the row is written (tpot_of), off the engine's thread.
    int64_t token_span_ns;
    int32_t prompt_tokens;
    int32_t output_tokens;
    int32_t preemptions;
    int32_t priority;
    uint16_t class_id;
    uint16_t tenant_id;
  };
  enum class Kind : uint8_t { Empty, Finished, Text };

  Kind kind = Kind::Empty;
  Finished finished{};  ///< Kind::Finished
  std::string text;     ///< Kind::Text: any other row (its reason is unbounded), as its text
};

namespace {

using FinishedRow = RequestsCsvHeldRow::Finished;

// requests.csv rows are formatted by hand into the output buffer, the room for a whole row
// reserved once: a row per request, millions of them in a long run, and fmt's general
// machinery (and growing strings) took a fifth of such a run's time.

/// The room a row takes besides its names and its reason: at most 20 + 21 + 2 x 11 bytes for
/// the id, arrival and counts, 7 x 21 for the times, 32 for the TPOT, 2 x 11 for the
/// preemptions and the priority, under 80 of commas, status and an unfinished row's words
/// (< 330 in all), and 32 bytes past the end that a number's writer may use as scratch.
constexpr size_t k_row_room = 512;
/// The output buffer is written out once it holds more than this. Reserved once with a row's
/// room past it, so that it never grows (a growth copies it into freshly touched pages).
constexpr size_t k_flush_bytes = size_t{1} << 16;

using Names = RequestsCsvNames;

const std::string* name_of(const std::vector<std::string>* names, uint16_t id) {
  return names && id < names->size() ? &(*names)[id] : nullptr;
}

size_t names_room(const Names& names, uint16_t class_id, uint16_t tenant_id) {
  const std::string* c = name_of(names.classes, class_id);
  const std::string* t = name_of(names.tenants, tenant_id);
  return (c ? c->size() : 0) + (t ? t->size() : 0);
}

// Each writer below puts its text at `p` and returns its end.

template <size_t N>
char* put_text(char* p, const char (&text)[N]) {
  std::memcpy(p, text, N - 1);
  return p + N - 1;
}

char* put_text(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

char* put_name(char* p, const std::vector<std::string>* names, uint16_t id) {
  const std::string* name = name_of(names, id);
  return name ? put_text(p, *name) : p;
}

[[gnu::always_inline]] inline char* put_int(char* p, int64_t v) {
  if (static_cast<uint64_t>(v) < 10) {  // a count of preemptions, a priority: no call
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  if (v >= 0) return decimal_chars::put_u64(p, static_cast<uint64_t>(v));
  return std::to_chars(p, p + 20, v).ptr;
}

/// Exact decimal seconds from integer nanoseconds: "12.000340001".
[[gnu::always_inline]] inline char* put_secs(char* p, int64_t ns) {
  return decimal_chars::put_ns_as_seconds(p, ns);
}

char* put_secs(char* p, Time t) { return put_secs(p, t.count_ns()); }

/// put_secs's text of the same time again, copied from `from` (its `size` bytes, at most 21):
/// 32 bytes in two fixed-size moves, the rest scratch.
[[gnu::always_inline]] inline char* copy_secs(char* p, const char* from, size_t size) {
  char copy[32];
  std::memcpy(copy, from, sizeof copy);
  std::memcpy(p, copy, sizeof copy);
  return p + size;
}

/// ",<class>,<priority>,": the class and priority columns, and the comma before server_ttft_s.
char* put_class(char* p, const Names& names, uint16_t class_id, int32_t priority) {
  *p++ = ',';
  p = put_name(p, names.classes, class_id);
  *p++ = ',';
  p = put_int(p, priority);
  *p++ = ',';
  return p;
}

/// ",<tenant>\n": the row's end, after server_ttft_s.
char* put_tenant(char* p, const Names& names, uint16_t tenant_id) {
  *p++ = ',';
  p = put_name(p, names.tenants, tenant_id);
  *p++ = '\n';
  return p;
}

/// `r`'s finished row, written in place (a batch's new element: no copy).
[[gnu::always_inline]] inline void fill_finished_row(FinishedRow& f, const Request& r) {
  f.id = r.spec.id;
  f.arrival_ns = r.spec.arrival.count_ns();
  f.first_token_ns = r.first_token.count_ns();
  f.finish_ns = r.finish.count_ns();
  f.release_ns = r.release.count_ns();
  f.first_admitted_ns = r.first_admitted.count_ns();
  f.server_ttft_ns = r.engine_ttft().count_ns();
  f.token_span_ns = r.spec.output_tokens > 1 ? (r.last_token - r.first_token).count_ns() : 0;
  f.prompt_tokens = r.spec.prompt_tokens;
  f.output_tokens = r.spec.output_tokens;
  f.preemptions = r.preemptions;
  f.priority = r.spec.priority;
  f.class_id = r.spec.class_id;
  f.tenant_id = r.spec.tenant_id;
}

FinishedRow finished_row(const Request& r) {
  FinishedRow f{};
  fill_finished_row(f, r);
  return f;
}

/// A finished row's TPOT, in seconds: MetricsRecorder::record's expression on the same
/// integers, so the same double. REQUIRES: more than one output token.
double tpot_of(const FinishedRow& f) {
  return Time::ns(f.token_span_ns).seconds() / (f.output_tokens - 1);
}

/// What MetricsRecorder::add_figures takes from a finished row: the same times.
RequestFigures figures_of(const FinishedRow& f) {
  RequestFigures g;
  g.ttft_ns = f.first_token_ns - f.arrival_ns;
  g.e2e_ns = f.release_ns - f.arrival_ns;
  g.queue_ns = f.first_admitted_ns - f.arrival_ns;
  g.engine_ttft_ns = f.server_ttft_ns;
  if (f.output_tokens > 1) g.tpot_s = tpot_of(f);
  g.output_tokens = f.output_tokens;
  return g;
}

/// A finished request's row. REQUIRES: k_row_room and its names' bytes at `p`.
char* put_finished_row(char* p, const FinishedRow& f, const Names& names) {
  p = put_int(p, static_cast<int64_t>(f.id));
  *p++ = ',';
  p = put_secs(p, f.arrival_ns);
  *p++ = ',';
  p = put_int(p, f.prompt_tokens);
  *p++ = ',';
  p = put_int(p, f.output_tokens);
  *p++ = ',';
  p = put_secs(p, f.first_token_ns);
  *p++ = ',';
  char* const finish = p;
  p = put_secs(p, f.finish_ns);
  const auto finish_size = static_cast<size_t>(p - finish);
  *p++ = ',';
  // release_s is finish_s without the `api` section's streaming: the same text again.
  p = f.release_ns == f.finish_ns ? copy_secs(p, finish, finish_size) : put_secs(p, f.release_ns);
  *p++ = ',';
  const int64_t ttft_ns = f.first_token_ns - f.arrival_ns;
  char* const ttft = p;
  p = put_secs(p, ttft_ns);
  const auto ttft_size = static_cast<size_t>(p - ttft);
  *p++ = ',';
  if (f.output_tokens > 1) p = decimal_chars::put_fixed9(p, p + 32, tpot_of(f));
  *p++ = ',';
  p = put_secs(p, f.release_ns - f.arrival_ns);
  *p++ = ',';
  p = put_secs(p, f.first_admitted_ns - f.arrival_ns);
  *p++ = ',';
  p = put_int(p, f.preemptions);
  p = put_text(p, ",finished,");
  p = put_class(p, names, f.class_id, f.priority);
  // server_ttft_s is ttft_s without the `api` section: the same text again.
  p = f.server_ttft_ns == ttft_ns ? copy_secs(p, ttft, ttft_size) : put_secs(p, f.server_ttft_ns);
  return put_tenant(p, names, f.tenant_id);
}

/// `r`'s status, quoted reason and the row's last columns ('"' in the reason becomes '\'').
char* put_reason_and_end(char* p, const Request& r, const Names& names) {
  p = put_text(p, std::string_view(status_name(r)));
  p = put_text(p, ",\"");
  char* const reason = p;
  p = put_text(p, r.reject_reason);
  std::replace(reason, p, '"', '\'');
  *p++ = '"';
  p = put_class(p, names, r.spec.class_id, r.spec.priority);
  return put_tenant(p, names, r.spec.tenant_id);
}

/// The row of a request that did not finish (rejected, abandoned, or left by a bounded run).
/// REQUIRES: k_row_room, its names' and its reason's bytes at `p`.
char* put_other_row(char* p, const Request& r, const Names& names) {
  p = put_int(p, static_cast<int64_t>(r.spec.id));
  *p++ = ',';
  p = put_secs(p, r.spec.arrival);
  *p++ = ',';
  p = put_int(p, r.spec.prompt_tokens);
  *p++ = ',';
  p = put_int(p, r.spec.output_tokens);
  *p++ = ',';
  if (r.state == RequestState::Rejected) {
    p = put_text(p, ",,");
    p = put_secs(p, r.release);
    p = put_text(p, ",,,");
    p = put_secs(p, r.release - r.spec.arrival);
    p = put_text(p, ",,");
    p = put_int(p, r.preemptions);
    *p++ = ',';
    return put_reason_and_end(p, r, names);
  }
  if (r.state == RequestState::Abandoned) {  // timed out or cancelled: left at release_s
    const bool token = r.first_token != Time::max();
    if (token) p = put_secs(p, r.first_token);
    p = put_text(p, ",,");
    p = put_secs(p, r.release);
    *p++ = ',';
    if (token) p = put_secs(p, r.first_token - r.spec.arrival);
    p = put_text(p, ",,");
    p = put_secs(p, r.release - r.spec.arrival);
    *p++ = ',';
    if (r.first_admitted != Time::max()) p = put_secs(p, r.first_admitted - r.spec.arrival);
    *p++ = ',';
    p = put_int(p, r.preemptions);
    *p++ = ',';
    return put_reason_and_end(p, r, names);
  }
  // A bounded run stopped first.
  if (r.first_token != Time::max()) p = put_secs(p, r.first_token);
  p = put_text(p, ",,,,,,");
  if (r.first_admitted != Time::max()) p = put_secs(p, r.first_admitted - r.spec.arrival);
  *p++ = ',';
  p = put_int(p, r.preemptions);
  p = put_text(p, ",unfinished,\"");
  p = put_int(p, r.generated_tokens);
  p = put_text(p, " of ");
  p = put_int(p, r.spec.output_tokens);
  p = put_text(p, " tokens generated\"");
  p = put_class(p, names, r.spec.class_id, r.spec.priority);
  return put_tenant(p, names, r.spec.tenant_id);
}

size_t other_row_room(const Request& r, const Names& names) {
  return k_row_room + r.reject_reason.size() + names_room(names, r.spec.class_id, r.spec.tenant_id);
}

/// `f`'s row at the end of `out`, written there in place.
void write_finished_row(fmt::memory_buffer& out, const FinishedRow& f, const Names& names) {
  const size_t size = out.size();
  out.reserve(size + k_row_room + names_room(names, f.class_id, f.tenant_id));
  char* const end = put_finished_row(out.data() + size, f, names);
  out.resize(static_cast<size_t>(end - out.data()));
}

/// `r`'s row (not finished) at the end of `out`, written there in place.
void write_other_row(fmt::memory_buffer& out, const Request& r, const Names& names) {
  const size_t size = out.size();
  out.reserve(size + other_row_room(r, names));
  char* const end = put_other_row(out.data() + size, r, names);
  out.resize(static_cast<size_t>(end - out.data()));
}

/// `row` at the end of `out`, then emptied.
void write_held_row(fmt::memory_buffer& out, RequestsCsvHeldRow& row, const Names& names) {
  if (row.kind == RequestsCsvHeldRow::Kind::Finished) {
    write_finished_row(out, row.finished, names);
  } else if (row.kind == RequestsCsvHeldRow::Kind::Text) {
    out.append(row.text.data(), row.text.data() + row.text.size());
    row.text.clear();
  }
  row.kind = RequestsCsvHeldRow::Kind::Empty;
}

}  // namespace

/// write_on_thread's two sides. The engine's thread fills a batch with the rows in the order
/// the requests left (a finished row as its values, any other as its text, formatted then with
/// the names known then) and hands it over; the writer's thread puts them in id order
/// (RequestsCsvWriter::place, the ring of held rows being the writer's from then on), formats
/// and writes them. A batch carries where the run's name lists grew, so that the writer formats
/// a row with the names the engine's thread knew at that point, as record() would have. With
/// add_figures_for, the writer first adds the batch's finished rows' times to the
/// MetricsRecorder's distributions (the requests' order is theirs).
/// k_batches batches go round: the engine fills the next once the writer has taken what was in
/// it, so memory stays bounded and, past the first rounds, nothing is allocated.
struct RequestsCsvWriter::Background {
  static constexpr size_t k_batch_rows = 1024;
  static constexpr size_t k_batches = 4;
  /// A row that did not finish, as its text.
  struct TextRow {
    size_t before = 0;  ///< how many of the batch's finished rows left before it
    uint64_t id = 0;
    std::string text;
  };
  /// The name lists' sizes from departure `at` of the batch on (its rows and texts together).
  struct NamesGrew {
    size_t at = 0;
    size_t classes = 0, tenants = 0;
  };
  struct Batch {
    /// The finished rows, in the order they left: the first `finished` of k_batch_rows,
    /// allocated once unwritten and written in place (no zeroing, no growth check a row).
    std::unique_ptr<FinishedRow[]> rows =
        std::make_unique_for_overwrite<FinishedRow[]>(k_batch_rows);
    size_t finished = 0;
    size_t departures = 0;       ///< rows of either kind
    std::vector<TextRow> texts;  ///< the other rows, in the order they left
    /// The names first known in this batch (a streamed trace learns them as it reads: the
    /// engine's lists grow, so the writer keeps its own), and where.
    std::vector<std::string> classes, tenants;
    std::vector<NamesGrew> grew;
    bool last = false;  ///< no batch follows (end_rows)
  };

  explicit Background(RequestsCsvWriter& writer) : w(writer) {}

  // ---- The engine's thread.
  Batch& filling() { return batches[sent % k_batches]; }  // `sent` changes on this thread only

  /// Notes in `b` the names known since the last departure handed over, if any.
  [[gnu::always_inline]] void note_names(Batch& b, const Names& names) {
    const size_t c = names_size(names.classes);
    const size_t t = names_size(names.tenants);
    if (c != classes_sent || t != tenants_sent) [[unlikely]]
      names_grew(b, names, c, t);
  }

  [[gnu::noinline]] void names_grew(Batch& b, const Names& names, size_t c, size_t t) {
    if (c > classes_sent)
      b.classes.insert(b.classes.end(),
                       names.classes->begin() + static_cast<ptrdiff_t>(classes_sent),
                       names.classes->end());
    if (t > tenants_sent)
      b.tenants.insert(b.tenants.end(),
                       names.tenants->begin() + static_cast<ptrdiff_t>(tenants_sent),
                       names.tenants->end());
    b.grew.push_back({b.departures, c, t});
    classes_sent = c;
    tenants_sent = t;
  }

  /// Hands `r`'s row over: inline in RequestsCsvWriter::record, a finished row written in
  /// place (a departure's common case: a few stores).
  [[gnu::always_inline]] void put(const Request& r, const Names& names) {
    Batch& b = filling();
    // The common case calls nothing, so that it saves no registers: the rest is put_rest's.
    if (r.state == RequestState::Released && b.departures + 1 < k_batch_rows &&
        names_size(names.classes) == classes_sent && names_size(names.tenants) == tenants_sent)
        [[likely]] {
      fill_finished_row(b.rows[b.finished++], r);
      ++b.departures;
      return;
    }
    put_rest(b, r, names);
  }

  static size_t names_size(const std::vector<std::string>* names) {
    return names ? names->size() : 0;
  }

  /// put for any other row: the names first known since the last, a row that did not finish
  /// (its text, formatted now), the batch's last row (handed over).
  [[gnu::noinline]] void put_rest(Batch& b, const Request& r, const Names& names) {
    note_names(b, names);
    if (r.state == RequestState::Released)
      fill_finished_row(b.rows[b.finished++], r);
    else
      put_text_row(b, r, names);
    if (++b.departures >= k_batch_rows) send(names);
  }

  /// put for a row that did not finish: its text, formatted now.
  [[gnu::noinline]] void put_text_row(Batch& b, const Request& r, const Names& names) {
    std::string text(other_row_room(r, names), '\0');
    text.resize(static_cast<size_t>(put_other_row(text.data(), r, names) - text.data()));
    b.texts.push_back({b.finished, r.spec.id, std::move(text)});
  }

  /// Waits for the writer to have added the figures of every batch sent.
  void wait_figured() {
    std::unique_lock lock(mu);
    to_engine.wait(lock, [&] { return figured == sent || error; });
    if (error) std::rethrow_exception(error);
  }

  /// Hands the batch being filled over, then waits for the next to be free (taken), unless it
  /// is the `last` (which carries the names known now: the rows still held are written with
  /// them).
  void send(const Names& names, bool last = false) {
    Batch& b = filling();
    if (last) note_names(b, names);
    {
      std::lock_guard lock(mu);
      if (error) std::rethrow_exception(error);
      b.last = last;
      ++sent;
    }
    // Woken with the lock released: a writer woken under it would wait for the lock at once,
    // and its wake-up for the lock would be a second futex call of this thread (about 10 us
    // each on a virtual machine; docs/performance.md, branch s51a's second part).
    to_writer.notify_one();
    if (last) return;
    {
      std::unique_lock lock(mu);
      to_engine.wait(lock, [&] { return sent - written < k_batches || error; });
      if (error) std::rethrow_exception(error);
    }
    Batch& next = filling();
    next.finished = next.departures = 0;
    next.texts.clear();
    next.classes.clear();
    next.tenants.clear();
    next.grew.clear();
  }

  /// After the last send: waits for the writer to write everything and end; throws its error.
  void close() {
    {
      std::lock_guard lock(mu);
      closing = true;
    }
    to_writer.notify_one();
    thread->join();
    thread.reset();
    if (error) std::rethrow_exception(error);
  }

  /// A writer not closed (the run threw): it stops without writing more, and ends.
  ~Background() {
    if (!thread) return;
    {
      std::lock_guard lock(mu);
      closing = abandoned = true;
    }
    to_writer.notify_one();
    thread->join();
  }

  // ---- The writer's thread.
  void write_loop() {
    try {
      for (uint64_t next = 0;; ++next) {
        {
          std::unique_lock lock(mu);
          to_writer.wait(lock, [&] { return sent > next || closing; });
          if (abandoned) return;
          if (sent == next) break;
        }
        const Batch& b = batches[next % k_batches];
        if (figures_to) {
          for (size_t i = 0; i < b.finished; ++i) figures_to->add_figures(figures_of(b.rows[i]));
          if (b.last) figures_to->finish_figures();  // while the engine's thread sums up
          {
            std::lock_guard lock(mu);
            figured = next + 1;
          }
          to_engine.notify_one();
        }
        take(b);
        {
          std::lock_guard lock(mu);
          written = next + 1;
          figured = written;
        }
        to_engine.notify_one();
      }
      w.flush_buffer();
      w.m_out.flush();
    } catch (...) {
      std::lock_guard lock(mu);
      error = std::current_exception();
    }
    to_engine.notify_one();
  }

  /// The names of `b.grew[g]` added to the writer's lists.
  void grow_names(const Batch& b, const NamesGrew& g) {
    while (classes.size() < g.classes) classes.push_back(b.classes[classes_taken++]);
    while (tenants.size() < g.tenants) tenants.push_back(b.tenants[tenants_taken++]);
  }

  /// `b`'s rows into their places (written or held), in the order they left.
  void take(const Batch& b) {
    classes_taken = tenants_taken = 0;
    const Names names{&classes, &tenants};
    const size_t n = b.departures;
    size_t i = 0, t = 0, g = 0;
    for (size_t d = 0; d < n; ++d) {
      for (; g < b.grew.size() && b.grew[g].at == d; ++g) grow_names(b, b.grew[g]);
      if (t < b.texts.size() && b.texts[t].before == i) {
        row.kind = RequestsCsvHeldRow::Kind::Text;
        row.text.assign(b.texts[t].text);
        w.place(b.texts[t].id, row, names);
        ++t;
      } else {
        row.kind = RequestsCsvHeldRow::Kind::Finished;
        row.finished = b.rows[i];
        w.place(row.finished.id, row, names);
        ++i;
      }
    }
    for (; g < b.grew.size(); ++g) grow_names(b, b.grew[g]);
    if (b.last) w.write_held_rows(names);
  }

  // ---- Shared, under `mu`.
  std::mutex mu;
  std::condition_variable to_writer, to_engine;
  uint64_t sent = 0;     ///< batches handed over (changed by the engine's thread)
  uint64_t written = 0;  ///< batches taken (changed by the writer's thread)
  uint64_t figured = 0;  ///< batches whose figures are added (likewise; >= written)
  bool closing = false;  ///< no batch follows those sent
  bool abandoned = false;
  std::exception_ptr error;  ///< what the writer threw; it wrote nothing after it
  std::array<Batch, k_batches> batches;

  size_t classes_sent = 0, tenants_sent = 0;  ///< the engine's: names handed over so far
  MetricsRecorder* figures_to = nullptr;      ///< add_figures_for; set before the first batch
  /// The writer's, as are the rest (and, from write_on_thread on, `w`'s ring and buffer).
  RequestsCsvWriter& w;
  std::vector<std::string> classes, tenants;
  size_t classes_taken = 0, tenants_taken = 0;  ///< of the batch being taken
  RequestsCsvHeldRow row;                       ///< the row being placed
  std::optional<std::thread> thread;
};

RequestsCsvWriter::RequestsCsvWriter(std::ostream& out) : m_out(out) {
  m_buf.reserve(k_flush_bytes + 2 * k_row_room);
  fmt::format_to(std::back_inserter(m_buf),
                 "id,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,release_s,"
                 "ttft_s,tpot_s,e2e_s,queue_s,preemptions,status,reason,class,priority,"
                 "server_ttft_s,tenant\n");
}

// The writer's thread uses the ring and the buffer: it ends (Background's destructor) before
// they go.
RequestsCsvWriter::~RequestsCsvWriter() { m_bg.reset(); }

void RequestsCsvWriter::record(const Request& r) {
  if (m_bg && !m_rows_ended) [[likely]] {  // the writer's thread puts it in its place
    m_bg->put(r, Names{m_class_names, m_tenant_names});
    return;
  }
  record_here(r);
}

void RequestsCsvWriter::record_here(const Request& r) {
  if (m_rows_ended) throw std::logic_error("request recorded after end_rows");
  const Names names{m_class_names, m_tenant_names};
  if (r.spec.id < m_next_id) throw std::logic_error("request recorded twice");
  if (r.spec.id == m_next_id) {  // in order: straight to the buffer, then the rows it frees
    if (r.state == RequestState::Released)
      write_finished_row(m_buf, finished_row(r), names);
    else
      write_other_row(m_buf, r, names);
    passed(names);
    return;
  }
  RequestsCsvHeldRow& row = held_slot(r.spec.id);
  if (r.state == RequestState::Released) {
    row.finished = finished_row(r);
    row.kind = RequestsCsvHeldRow::Kind::Finished;
  } else {
    row.text.resize(other_row_room(r, names));
    char* const end = put_other_row(row.text.data(), r, names);
    row.text.resize(static_cast<size_t>(end - row.text.data()));
    row.kind = RequestsCsvHeldRow::Kind::Text;
  }
}

void RequestsCsvWriter::place(uint64_t id, RequestsCsvHeldRow& row, const Names& names) {
  if (id < m_next_id) throw std::logic_error("request recorded twice");
  if (id == m_next_id) {
    write_held_row(m_buf, row, names);
    passed(names);
    return;
  }
  RequestsCsvHeldRow& slot = held_slot(id);
  slot.kind = row.kind;
  if (row.kind == RequestsCsvHeldRow::Kind::Finished)
    slot.finished = row.finished;
  else
    slot.text.swap(row.text);  // each keeps a string's capacity
  row.kind = RequestsCsvHeldRow::Kind::Empty;
}

RequestsCsvHeldRow& RequestsCsvWriter::held_slot(uint64_t id) {
  const uint64_t index = id - m_next_id;
  if (index >= m_ring.size()) grow_ring(static_cast<size_t>(index) + 1);
  m_held = std::max(m_held, static_cast<size_t>(index) + 1);
  return m_ring[(m_head + index) & (m_ring.size() - 1)];
}

void RequestsCsvWriter::passed(const Names& names) {
  ++m_next_id;
  if (m_held > 0) {  // its slot is empty (it was m_next_id's): passed
    m_head = (m_head + 1) & (m_ring.size() - 1);
    --m_held;
    drain_held(names);
  }
  if (m_buf.size() > k_flush_bytes) flush_buffer();
}

void RequestsCsvWriter::drain_held(const Names& names) {
  const size_t mask = m_ring.size() - 1;
  while (m_held > 0 && m_ring[m_head].kind != RequestsCsvHeldRow::Kind::Empty) {
    if (m_buf.size() > k_flush_bytes) flush_buffer();  // thousands may be freed at once
    write_held_row(m_buf, m_ring[m_head], names);      // the rows now in order, emptied
    m_head = (m_head + 1) & mask;
    --m_held;
    ++m_next_id;
  }
}

void RequestsCsvWriter::grow_ring(size_t slots) {
  const size_t old = m_ring.size();
  size_t size = std::max<size_t>(16, old);
  while (size < slots) size *= 2;
  // The old rows stay where they are, the new slots added after them (the store never moves
  // a row, so growth touches only the new slots' memory). Row i of the queue is at (m_head +
  // i) mod the size: those at m_head and after keep their place; those that had wrapped
  // around to [0, m_head) belong at [old, old + m_head) now, and swap with the empty rows
  // there (each slot keeps a string's capacity).
  while (m_ring.size() < size) m_ring.emplace_back();
  for (size_t p = 0; p < m_head; ++p) std::swap(m_ring[p], m_ring[old + p]);
}

void RequestsCsvWriter::flush_buffer() {
  m_out.write(m_buf.data(), static_cast<std::streamsize>(m_buf.size()));
  m_buf.clear();
}

void RequestsCsvWriter::write_held_rows(const Names& names) {
  for (size_t i = 0; i < m_held; ++i) {
    if (m_buf.size() > k_flush_bytes) flush_buffer();
    write_held_row(m_buf, m_ring[(m_head + i) & (m_ring.size() - 1)], names);
  }
  m_head = 0;
  m_held = 0;
}

void RequestsCsvWriter::end_rows() {
  if (m_rows_ended) return;
  m_rows_ended = true;
  const Names names{m_class_names, m_tenant_names};
  if (m_bg)
    m_bg->send(names, true);  // the writer's thread writes the rows still held
  else
    write_held_rows(names);
}

void RequestsCsvWriter::finish() {
  end_rows();
  if (m_bg) {
    m_bg->close();
    m_bg.reset();
  }
  flush_buffer();
  m_out.flush();
}

bool RequestsCsvWriter::write_on_thread() {
  if (m_bg) return true;
  // The header, already in the buffer, goes first; from here on the ring and the buffer are
  // the writer's thread's.
  flush_buffer();
  auto bg = std::make_unique<Background>(*this);
  Background* const b = bg.get();
  bg->thread = start_side_thread([b] { b->write_loop(); });
  if (!bg->thread) return false;
  m_bg = std::move(bg);
  return true;
}

bool RequestsCsvWriter::add_figures_for(MetricsRecorder& m) {
  if (!m_bg) return false;
  m_bg->figures_to = &m;
  m.add_figures_on(this);
  return true;
}

void RequestsCsvWriter::join() {
  end_rows();
  if (m_bg) m_bg->wait_figured();  // none: finish() joined the thread, which added them all
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
