#pragma once
// The body shared by the trace-reader harnesses: arbitrary bytes fed to a reader that takes a
// stream and a name. The expected outcomes are requests that keep the WorkloadSource contract
// (sorted by arrival, file order among equals, ids in range, token counts >= 1) or an
// InputError with a clean message; a crash, a sanitizer report, another exception type, a hang
// or a contract violation is a finding.
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>

#include "core/errors.h"
#include "fuzz/check.h"
#include "traces/workload_source.h"

namespace servesim::fuzz {

template <typename Reader>
int fuzz_trace_reader(const uint8_t* data, size_t size, Reader read, const char* name) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const std::vector<RequestSpec> rows = read(in, name);
    if (rows.empty()) finding("a trace with no requests was accepted", "");
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      if (r.arrival.count_ns() < 0)
        finding("negative arrival", std::to_string(r.arrival.count_ns()));
      if (i > 0 && r.arrival < rows[i - 1].arrival) finding("rows not sorted by arrival", "");
      if (i > 0 && r.arrival == rows[i - 1].arrival && r.id < rows[i - 1].id)
        finding("equal arrivals out of file order", "");
      if (r.id >= rows.size()) finding("id out of range", std::to_string(r.id));
      if (r.prompt_tokens < 1 || r.output_tokens < 1) finding("token count < 1", "");
    }
  } catch (const InputError& e) {
    check_message(e.what(), name);
  } catch (const std::exception& e) {
    finding("an exception other than InputError", e.what());
  }
  return 0;
}

}  // namespace servesim::fuzz
