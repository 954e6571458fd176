// libFuzzer harness: arbitrary bytes read as a vLLM requests.jsonl trace. The expected outcomes are a
// trace that keeps the WorkloadSource contract or an InputError with a clean message; a crash, a
// sanitizer report, another exception type, a hang or a contract violation is a finding.
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>

#include "fuzz/check.h"
#include "sim/errors.h"
#include "traces/workload_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using servesim::fuzz::finding;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto rows = servesim::read_vllm_jsonl(in, "fuzz.jsonl");
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
  } catch (const servesim::InputError& e) {
    servesim::fuzz::check_message(e.what(), "fuzz.jsonl");
  } catch (const std::exception& e) {
    finding("an exception other than InputError", e.what());
  }
  return 0;
}
