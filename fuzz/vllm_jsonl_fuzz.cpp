// libFuzzer harness: arbitrary bytes read as a vLLM requests.jsonl trace (fuzz/trace_harness.h).
#include "fuzz/trace_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::fuzz_trace_reader(
      data, size,
      [](std::istream& in, const char* name) { return servesim::read_vllm_jsonl(in, name); },
      "fuzz.jsonl");
}
