// servesim's own CSV trace: a header naming at least arrival_s (seconds from time 0, taken as
// they are), prompt_tokens and output_tokens, in any order; other columns are ignored. One
// request a row. Optional columns (docs/workloads.md):
//   prefix_hash  the prompt's block hashes, one per hash_block_tokens tokens, separated by ';'
//                or spaces (as Mooncake's hash_ids), for prefix caching;
//   request_id   a unique non-negative integer naming the row for parent_id (default: the
//                row's 0-based number among the requests);
//   session_id   any text: the rows of one session are the turns of one conversation, in file
//                order; each turn's prompt_tokens are its new tokens;
//   parent_id    request_id values (';' or space separated) this request waits for;
//   think_s      seconds between the last parent's reply and this request;
//   max_output_tokens  the request's max_tokens (>= output_tokens), reserved by a KV policy
//                with kv.max_output_tokens instead of that default;
//   class        the request's class name (valid_class_name), for per-class metrics; every row
//                names one when the column is there;
//   priority     an integer from -10^9 to 10^9 (vLLM's meaning: lower is served first; an
//                empty cell is 0), used by vllm's scheduling_policy: priority;
//   tenant       the request's tenant name (valid_class_name), for per-tenant metrics and
//                scheduler.policy: fair; every row names one when the column is there;
//   cancel_after_tokens  the client cancels the request once it has this many output tokens
//                (an integer >= 1; empty: never), docs/schedulers.md#admission-and-abandonment.
//   cancel_after_s  the client cancels the request this many seconds after its arrival, served
//                or not (a number > 0; empty: never), docs/schedulers.md#admission-and-abandonment.
//   adapter      multi-LoRA (docs/lora.md): the request's adapter id from 1 to 10^6, or 0 or
//                empty for the base model; the lora section then draws none.
#include <fmt/format.h>

#include <charconv>
#include <fstream>

#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

const std::vector<std::string> k_columns{"arrival_s", "prompt_tokens", "output_tokens"};
const std::vector<std::string> k_optional{
    "prefix_hash", "request_id",          "session_id", "parent_id",
    "think_s",     "max_output_tokens",   "class",      "priority",
    "tenant",      "cancel_after_tokens", "adapter",    "cancel_after_s"};
enum : size_t {
  k_arrival,
  k_prompt,
  k_output,
  k_prefix,
  k_request,
  k_session,
  k_parent,
  k_think,
  k_max_output,
  k_class,
  k_priority,
  k_tenant,
  k_cancel,
  k_adapter,
  k_cancel_s
};

/// 64-bit FNV-1a, mixed so that it is never 0 (0 means "no session").
uint64_t session_hash(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h == 0 ? 1 : h;
}

class ServesimCsvRows final : public TraceRowReader {
 public:
  ServesimCsvRows(std::istream& in, const std::string& name, const TraceOptions& options)
      : m_csv(in, name, k_columns, k_optional), m_options(options) {}

  bool next(TraceRow& row) override {
    if (!m_csv.next_row()) return false;
    row.line = m_csv.line();
    row.arrival_ns = csv_seconds_ns(m_csv, k_arrival);
    fill_csv_row(row, m_csv, k_arrival, k_prompt, k_output, k_columns, m_options);
    row.block_hashes.clear();
    row.hash_block_tokens = 0;
    if (m_csv.has(k_prefix) && !m_csv.field(k_prefix).empty()) {
      integer_list(k_prefix, row.block_hashes);
      row.hash_block_tokens = m_options.hash_block_tokens;
      const int64_t block = m_options.hash_block_tokens;
      const int64_t blocks = (row.prompt_tokens + block - 1) / block;
      if (row.skip == nullptr && static_cast<int64_t>(row.block_hashes.size()) > blocks)
        throw InputError(fmt::format(
            "{}:{}: column prefix_hash has {} hashes, more than the {} blocks of {} tokens in "
            "prompt_tokens {}: there must be at most one per block "
            "(workload.trace.hash_block_tokens sets the block size)",
            printable(m_csv.path(), 1024), m_csv.line(), row.block_hashes.size(), blocks, block,
            row.prompt_tokens));
    }
    row.key =
        m_csv.has(k_request) ? static_cast<uint64_t>(m_csv.integer(k_request, 0, INT64_MAX)) : 0;
    row.session = m_csv.field(k_session).empty() ? 0 : session_hash(m_csv.field(k_session));
    row.parents.clear();
    if (!m_csv.field(k_parent).empty()) integer_list(k_parent, row.parents);
    row.think_ns =
        m_csv.field(k_think).empty() ? 0 : seconds_to_ns(m_csv.real(k_think, 0.0, 9.0e9));
    row.max_output_tokens = 0;
    if (m_csv.has(k_max_output) && !m_csv.field(k_max_output).empty()) {
      row.max_output_tokens = m_csv.integer(k_max_output, 1, k_max_tokens);
      if (row.skip == nullptr && row.max_output_tokens < row.output_tokens)
        throw InputError(fmt::format(
            "{}:{}: column max_output_tokens = {} is less than output_tokens = {}: a request "
            "never asks for more than its maximum",
            printable(m_csv.path(), 1024), m_csv.line(), row.max_output_tokens, row.output_tokens));
    }
    row.class_id = m_csv.has(k_class) ? name_id(m_classes, "class", m_csv.field(k_class)) : 0;
    row.tenant_id = m_csv.has(k_tenant) ? name_id(m_tenants, "tenant", m_csv.field(k_tenant)) : 0;
    row.priority =
        m_csv.field(k_priority).empty()
            ? 0
            : static_cast<int32_t>(m_csv.integer(k_priority, k_min_priority, k_max_priority));
    row.cancel_after_tokens = m_csv.has(k_cancel) && !m_csv.field(k_cancel).empty()
                                  ? m_csv.integer(k_cancel, 1, k_max_tokens)
                                  : 0;
    row.cancel_after_ns = m_csv.has(k_cancel_s) && !m_csv.field(k_cancel_s).empty()
                              ? seconds_to_ns(m_csv.real(k_cancel_s, 1e-9, 1e6))
                              : 0;
    row.adapter = !m_csv.has(k_adapter)            ? -1
                  : m_csv.field(k_adapter).empty() ? 0
                                                   : m_csv.integer(k_adapter, 0, 1'000'000);
    return true;
  }
  bool absolute_time() const override { return true; }
  const std::vector<std::string>& class_names() const override { return m_classes; }
  const std::vector<std::string>& tenant_names() const override { return m_tenants; }
  std::string arrival_label() const override { return "column arrival_s"; }
  const char* empty_trace() const override { return "the trace has a header but no requests"; }
  bool has_dependencies() const override {
    return m_csv.has(k_session) || m_csv.has(k_parent) || m_csv.has(k_think);
  }
  bool has_request_ids() const override { return m_csv.has(k_request); }

 private:
  /// Non-negative integers separated by ';' or spaces.
  void integer_list(size_t k, std::vector<uint64_t>& out) const {
    const std::string_view s = m_csv.field(k);
    size_t i = 0;
    while (i < s.size()) {
      if (s[i] == ';' || s[i] == ' ') {
        ++i;
        continue;
      }
      uint64_t v = 0;
      auto [ptr, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
      if (ec != std::errc() || v > static_cast<uint64_t>(INT64_MAX) ||
          (ptr != s.data() + s.size() && *ptr != ';' && *ptr != ' '))
        throw InputError(fmt::format(
            "{}:{}: column {} = {}: must be non-negative integers separated by ';' or spaces",
            printable(m_csv.path(), 1024), m_csv.line(), k_optional[k - k_columns.size()],
            quote_input(s)));
      out.push_back(v);
      i = static_cast<size_t>(ptr - s.data());
    }
  }

  /// The id of `name` in `names` (the classes or the tenants: column `what`), a new one the first
  /// time it is met.
  uint16_t name_id(std::vector<std::string>& names, const char* what, std::string_view name) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<uint16_t>(i);
    if (!valid_class_name(name))
      throw InputError(
          fmt::format("{}:{}: column {} = {}: must be {} (every row names its "
                      "{} when the column is there)",
                      printable(m_csv.path(), 1024), m_csv.line(), what, quote_input(name),
                      k_class_name_allowed, what));
    if (names.size() == k_max_classes)
      throw InputError(fmt::format("{}:{}: column {} = {}: a trace may name at most {} {}",
                                   printable(m_csv.path(), 1024), m_csv.line(), what,
                                   quote_input(name), k_max_classes,
                                   std::string_view(what) == "class" ? "classes" : "tenants"));
    names.emplace_back(name);
    return static_cast<uint16_t>(names.size() - 1);
  }

  CsvColumns m_csv;
  TraceOptions m_options;
  std::vector<std::string> m_classes;
  std::vector<std::string> m_tenants;
};

}  // namespace

std::unique_ptr<TraceRowReader> make_servesim_csv_rows(std::istream& in, const std::string& name,
                                                       const TraceOptions& options) {
  return std::make_unique<ServesimCsvRows>(in, name, options);
}

std::vector<RequestSpec> read_csv_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", printable(path, 1024)));
  return read_csv_trace(in, path);
}

std::vector<RequestSpec> read_csv_trace(std::istream& in, const std::string& name) {
  TraceOptions o;
  o.dependencies = false;
  return read_trace(in, name, o);
}

}  // namespace servesim
