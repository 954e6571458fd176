#pragma once
// Helpers for the trace-reader and transform tests: a workload from a YAML snippet, all of its
// requests, and the message of the InputError it throws.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "tests/support.h"
#include "tests/test_paths.h"
#include "traces/factories.h"  // make_trace
#include "traces/workload_source.h"

namespace servesim::test {

inline const std::string k_test_data = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/";

/// workload.trace built from the keys in `yaml` (a YAML map's body, e.g. "path: x.csv").
inline std::unique_ptr<WorkloadSource> trace_of(const std::string& yaml) {
  auto doc = doc_of(yaml);
  auto source = make_trace(Cfg::root(doc), 1);
  doc->check_all_read();
  return source;
}

/// A whole `workload` section (source and transform) from the YAML of its body, which is
/// indented under "workload:" (so its first line is line 2, its columns shifted by 2).
inline std::unique_ptr<WorkloadSource> workload_of(const std::string& yaml, uint64_t seed = 1) {
  std::string text = "workload:\n";
  for (size_t start = 0; start < yaml.size();) {
    const size_t end = yaml.find('\n', start);
    text += "  " + yaml.substr(start, end == std::string::npos ? end : end + 1 - start);
    start = end == std::string::npos ? yaml.size() : end + 1;
  }
  auto doc = doc_of(text);
  auto source = make_workload(Cfg::root(doc).child("workload"), seed);
  doc->check_all_read();
  return source;
}

inline std::vector<RequestSpec> drain(WorkloadSource& source) {
  std::vector<RequestSpec> out;
  for (RequestSpec r; source.next(r);) out.push_back(r);
  return out;
}

/// Every field of `r`, as text: two requests are the same when these are.
inline std::string spec_text(const RequestSpec& r) {
  std::string hashes;
  for (const uint64_t h : r.block_hashes) hashes += std::to_string(h) + " ";
  return fmt::format(
      "id {} arrival {} prompt {} output {} hashes [{}] hash_block {} stream {} session {} "
      "max_output {} api_in {} api_out {} class {} priority {} tenant {} adapter {} given {} "
      "ttft_slo {} cancel_tokens {} timeout {} cancel_after {} retries {}",
      r.id, r.arrival.count_ns(), r.prompt_tokens, r.output_tokens, hashes, r.hash_block_tokens,
      r.content_stream, r.session, r.max_output_tokens, r.api_in.count_ns(), r.api_out.count_ns(),
      r.class_id, r.priority, r.tenant_id, r.adapter, r.adapter_given, r.ttft_slo.count_ns(),
      r.cancel_after_tokens, r.timeout.count_ns(), r.cancel_after.count_ns(), r.retries);
}

/// What the engine can see of a source besides its requests: its class and tenant names and
/// its counters, as text.
inline std::string source_state(const WorkloadSource& s) {
  std::string out;
  for (const auto& c : s.class_names()) out += c + ",";
  out += "|";
  for (const auto& t : s.tenant_names()) out += t + ",";
  for (const auto& [name, n] : s.counters()) out += "|" + name + "=" + std::to_string(n);
  return out;
}

inline std::vector<int64_t> arrivals_ns(const std::vector<RequestSpec>& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows) out.push_back(r.arrival.count_ns());
  return out;
}

inline std::vector<uint64_t> ids(const std::vector<RequestSpec>& rows) {
  std::vector<uint64_t> out;
  for (const auto& r : rows) out.push_back(r.id);
  return out;
}

/// The InputError `f` throws ("no error" when it throws none). With `strip`, a message that
/// starts with an absolute path loses the folders, so it reads "t.csv:2: ...".
inline std::string error_from(const std::function<void()>& f, bool strip = true) {
  try {
    f();
  } catch (const InputError& e) {
    std::string msg = e.what();
    if (!strip || msg.rfind('/', 0) != 0) return msg;
    const size_t colon = msg.find(':');
    const size_t slash = msg.rfind('/', colon);
    return slash == std::string::npos ? msg : msg.substr(slash + 1);
  }
  return "no error";
}

/// The message of reading `text` (written to a temporary file `name`) with the trace keys
/// `keys` (e.g. "format: azure").
inline std::string trace_error(const std::string& name, const std::string& text,
                               const std::string& keys = "") {
  const std::string path = write_temp(name, text);
  return error_from([&] {
    auto source = trace_of("path: " + path + "\n" + keys);
    (void)drain(*source);
  });
}

}  // namespace servesim::test
