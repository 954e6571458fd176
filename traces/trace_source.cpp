// Rows to requests, for every trace format: the time origin, the arrival-order check, ids, the
// counts of skipped rows, and (with sort) the whole trace loaded and stable-sorted.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <utility>

#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

/// Counts of skipped rows, by counter name, in the order the options turn them on.
class SkipCounts {
 public:
  explicit SkipCounts(const TraceOptions& o) {
    if (o.skip_zero_tokens) m_counts.emplace_back(k_skipped_zero_tokens, 0);
    if (!o.model.empty()) m_counts.emplace_back(k_skipped_other_model, 0);
  }
  void add(const char* name) {
    for (auto& [n, count] : m_counts)
      if (n == name) ++count;
  }
  [[nodiscard]] const std::vector<std::pair<std::string, int64_t>>& all() const { return m_counts; }
  [[nodiscard]] int64_t total() const {
    int64_t t = 0;
    for (const auto& c : m_counts) t += c.second;
    return t;
  }

 private:
  std::vector<std::pair<std::string, int64_t>> m_counts;
};

RequestSpec to_request(TraceRow& row, uint64_t id, int64_t arrival_ns) {
  RequestSpec r;
  r.id = id;
  r.arrival = Time::ns(arrival_ns);
  r.prompt_tokens = static_cast<int32_t>(row.prompt_tokens);
  r.output_tokens = static_cast<int32_t>(row.output_tokens);
  r.block_hashes = std::exchange(row.block_hashes, {});  // the row is reused, empty
  r.hash_block_tokens = r.block_hashes.empty() ? 0 : row.hash_block_tokens;
  r.session = row.session;
  r.max_output_tokens = static_cast<int32_t>(row.max_output_tokens);
  r.class_id = row.class_id;
  r.tenant_id = row.tenant_id;
  r.priority = row.priority;
  r.cancel_after_tokens = static_cast<int32_t>(row.cancel_after_tokens);
  r.cancel_after = Time::ns(row.cancel_after_ns);
  r.adapter = static_cast<uint32_t>(std::max<int64_t>(row.adapter, 0));
  r.adapter_given = row.adapter >= 0;
  return r;
}

std::string no_requests(const std::string& name, const TraceRowReader& rows,
                        const SkipCounts& skipped) {
  if (skipped.total() == 0) return fmt::format("{}: {}", name, rows.empty_trace());
  std::string why;
  for (const auto& [counter, n] : skipped.all())
    if (n > 0) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, counter);
  return fmt::format("{}: the trace has no requests left ({})", name, why);
}

/// Streams: one row read per request, rows checked to be in non-decreasing arrival order.
class StreamingTrace final : public WorkloadSource {
 public:
  StreamingTrace(std::unique_ptr<std::istream> owned, std::unique_ptr<TraceRowReader> rows,
                 std::string name, const TraceOptions& options)
      : m_owned(std::move(owned)),
        m_rows(std::move(rows)),
        m_name(std::move(name)),
        m_sort_hint(options.sort_hint),
        m_skipped(options) {
    // The first request is read now, so an empty trace stops the run before it starts.
    RequestSpec first;
    if (!fetch(first)) throw InputError(no_requests(m_name, *m_rows, m_skipped));
    m_ahead = std::move(first);
  }

  bool next(RequestSpec& out) override {
    if (m_ahead) {
      out = std::move(*m_ahead);
      m_ahead.reset();
      return true;
    }
    return fetch(out);
  }
  size_t size_hint() const override { return 0; }
  std::vector<std::pair<std::string, int64_t>> counters() const override { return m_skipped.all(); }
  int64_t counters_total() const override { return m_skipped.total(); }
  const std::vector<std::string>& class_names() const override { return m_rows->class_names(); }
  const std::vector<std::string>& tenant_names() const override { return m_rows->tenant_names(); }

 private:
  bool fetch(RequestSpec& out) {
    while (m_rows->next(m_row)) {
      check_order();
      if (m_row.skip) {
        m_skipped.add(m_row.skip);
        continue;
      }
      if (m_next_id == 0) {
        m_origin_ns = m_rows->absolute_time() ? 0 : m_row.arrival_ns;
        m_origin_line = m_row.line;
      }
      // Arrivals never decrease and the origin is at most the first, so this cannot overflow.
      // No reader's own range lets it exceed 9e9 s today; the check keeps that a local fact.
      const int64_t arrival_ns = m_row.arrival_ns - m_origin_ns;
      if (arrival_ns > k_max_arrival_ns)
        throw InputError(fmt::format(
            "{}:{}: {} = {} is more than 9e9 s after the first request "
            "(line {}); simulated time is int64 nanoseconds",
            m_name, m_row.line, m_rows->arrival_label(), shown(m_prev_text), m_origin_line));
      out = to_request(m_row, m_next_id++, arrival_ns);
      return true;
    }
    return false;
  }

  void check_order() {
    if (m_row_count++ > 0 && m_row.arrival_ns < m_prev_ns)
      throw InputError(
          fmt::format("{}:{}: {} = {} is before the previous row's {} (line {}): rows must be in "
                      "non-decreasing arrival order ({} sorts the trace in memory)",
                      m_name, m_row.line, m_rows->arrival_label(), shown(m_row.arrival_text),
                      shown(m_prev_text), m_prev_line, m_sort_hint));
    m_prev_ns = m_row.arrival_ns;
    m_prev_line = m_row.line;
    // Swapped, not copied: every reader writes the next row's text afresh (the row's own text
    // is m_prev_text from here on).
    m_prev_text.swap(m_row.arrival_text);
  }

  [[nodiscard]] std::string shown(const std::string& text) const {
    return m_row.arrival_text_raw ? quote_input(text) : text;
  }

  std::unique_ptr<std::istream> m_owned;  // the file, when the source opened it
  std::unique_ptr<TraceRowReader> m_rows;
  std::string m_name;
  std::string m_sort_hint;
  SkipCounts m_skipped;
  TraceRow m_row;
  std::optional<RequestSpec> m_ahead;
  uint64_t m_next_id = 0;
  uint64_t m_row_count = 0;
  int64_t m_origin_ns = 0;
  size_t m_origin_line = 0;
  int64_t m_prev_ns = 0;
  size_t m_prev_line = 0;
  std::string m_prev_text;
};

/// Holds the whole trace, sorted by arrival; ids stay in file order.
class SortedTrace final : public WorkloadSource {
 public:
  SortedTrace(TraceRowReader& rows, const std::string& name, const TraceOptions& options)
      : m_skipped(options) {
    struct Loaded {
      RequestSpec spec;
      int64_t raw_ns;
    };
    std::vector<Loaded> all;
    TraceRow row;
    // The earliest and latest rows (first and last after a stable sort), for messages.
    size_t first_line = 0, last_line = 0;
    int64_t first_ns = 0, last_ns = 0;
    std::string last_text;
    while (rows.next(row)) {
      if (row.skip) {
        m_skipped.add(row.skip);
        continue;
      }
      if (all.empty() || row.arrival_ns < first_ns) {
        first_ns = row.arrival_ns;
        first_line = row.line;
      }
      if (all.empty() || row.arrival_ns >= last_ns) {
        last_ns = row.arrival_ns;
        last_line = row.line;
        last_text = row.arrival_text;
      }
      all.push_back({to_request(row, all.size(), 0), row.arrival_ns});
    }
    if (all.empty()) throw InputError(no_requests(name, rows, m_skipped));
    const int64_t origin_ns = rows.absolute_time() ? 0 : first_ns;
    if (last_ns - origin_ns > k_max_arrival_ns)
      throw InputError(
          fmt::format("{}:{}: {} = {} is more than 9e9 s after the earliest request "
                      "(line {}); simulated time is int64 nanoseconds",
                      name, last_line, rows.arrival_label(),
                      row.arrival_text_raw ? quote_input(last_text) : last_text, first_line));
    m_classes = rows.class_names();
    m_tenants = rows.tenant_names();
    std::stable_sort(all.begin(), all.end(),
                     [](const Loaded& a, const Loaded& b) { return a.raw_ns < b.raw_ns; });
    m_rows.reserve(all.size());
    for (Loaded& l : all) {
      l.spec.arrival = Time::ns(l.raw_ns - origin_ns);
      m_rows.push_back(std::move(l.spec));
    }
  }

  bool next(RequestSpec& out) override {
    if (m_pos == m_rows.size()) return false;
    out = m_rows[m_pos++];
    return true;
  }
  size_t size_hint() const override { return m_rows.size(); }
  std::vector<std::pair<std::string, int64_t>> counters() const override { return m_skipped.all(); }
  int64_t counters_total() const override { return m_skipped.total(); }
  const std::vector<std::string>& class_names() const override { return m_classes; }
  const std::vector<std::string>& tenant_names() const override { return m_tenants; }

 private:
  SkipCounts m_skipped;
  std::vector<std::string> m_classes;
  std::vector<std::string> m_tenants;
  std::vector<RequestSpec> m_rows;
  size_t m_pos = 0;
};

std::unique_ptr<WorkloadSource> open(std::unique_ptr<std::istream> owned, std::istream& in,
                                     const std::string& file, const TraceOptions& options) {
  const std::string name = printable(file, 1024);
  auto rows = trace_format_spec(options.format).reader(in, file, options);
  if (options.dependencies && rows->has_dependencies())
    return make_dependent_trace(*rows, name, options);
  if (options.sort) return std::make_unique<SortedTrace>(*rows, name, options);
  return std::make_unique<StreamingTrace>(std::move(owned), std::move(rows), name, options);
}

}  // namespace

std::unique_ptr<WorkloadSource> open_trace(const std::string& path, const TraceOptions& options) {
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) throw InputError(fmt::format("{}: cannot open trace file", printable(path, 1024)));
  std::istream& in = *file;
  return open(std::move(file), in, path, options);
}

std::unique_ptr<WorkloadSource> open_trace(std::istream& in, const std::string& name,
                                           const TraceOptions& options) {
  return open(nullptr, in, name, options);
}

std::vector<RequestSpec> read_trace(std::istream& in, const std::string& name,
                                    TraceOptions options) {
  options.sort = true;
  auto source = open_trace(in, name, options);
  std::vector<RequestSpec> out;
  out.reserve(source->size_hint());
  for (RequestSpec r; source->next(r);) out.push_back(std::move(r));
  return out;
}

}  // namespace servesim
