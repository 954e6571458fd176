// libFuzzer harness: bytes read as a trace in any format, through the streaming source (or,
// with the sort bit, the sorting one). The first byte chooses how:
//   bits 0-2      the format: (value % n) into the n names of trace_format_specs(), sorted
//                 (azure, burstgpt, mooncake, servesim_csv, sharegpt, vidur, vllm_jsonl; a new
//                 row joins by itself, up to eight formats)
//   bit 3 (0x08)  sort: true
//   bit 4 (0x10)  zero_tokens: skip
//   bit 5 (0x20)  burstgpt model: ChatGPT
//   bit 6 (0x40)  mooncake hash_block_tokens: 16 (else 512)
// the rest is the file. Expected: requests that keep the WorkloadSource contract (arrivals from
// 0 to 9e9 s, never decreasing; ids 0, 1, 2, ... when streaming, unique and in range when
// sorted; 1 to 10^9 tokens; at most one block id per hash block of the prompt), or an
// InputError with a clean message. Anything else is a finding.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "fuzz/check.h"
#include "traces/trace_reader.h"
#include "traces/trace_rows.h"

namespace {

using servesim::fuzz::finding;

void check_request(const servesim::RequestSpec& r, const servesim::RequestSpec* prev) {
  const int64_t t = r.arrival.count_ns();
  if (t < 0 || t > 9'000'000'000'000'000'000) finding("arrival out of range", std::to_string(t));
  if (prev && r.arrival < prev->arrival) finding("arrivals decrease", std::to_string(t));
  if (r.prompt_tokens < 1 || r.output_tokens < 1 || r.prompt_tokens > 1'000'000'000 ||
      r.output_tokens > 1'000'000'000)
    finding("token count out of range", "");
  if (r.block_hashes.empty() != (r.hash_block_tokens == 0))
    finding("block ids without a block size, or the reverse", "");
  if (!r.block_hashes.empty()) {
    const int64_t blocks =
        (int64_t{r.prompt_tokens} + r.hash_block_tokens - 1) / r.hash_block_tokens;
    if (static_cast<int64_t>(r.block_hashes.size()) > blocks)
      finding("more block ids than blocks", "");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t how = data[0];
  servesim::TraceOptions o;
  static const std::vector<std::string> formats = [] {
    std::vector<std::string> names;
    for (const servesim::TraceFormatSpec& s : servesim::trace_format_specs())
      names.emplace_back(s.name);
    std::sort(names.begin(), names.end());
    return names;
  }();
  o.format = formats[(how & 0x07) % formats.size()];
  o.sort = (how & 0x08) != 0;
  o.skip_zero_tokens = (how & 0x10) != 0;
  if (how & 0x20) o.model = "ChatGPT";
  o.hash_block_tokens = (how & 0x40) ? 16 : 512;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  const char* name = "fuzz.trace";
  try {
    auto source = servesim::open_trace(in, name, o);
    servesim::RequestSpec r, prev;
    std::set<uint64_t> ids;
    for (uint64_t n = 0; source->next(r); ++n) {
      check_request(r, n > 0 ? &prev : nullptr);
      if (!o.sort && r.id != n) finding("streamed ids are not 0, 1, 2, ...", std::to_string(r.id));
      if (o.sort && !ids.insert(r.id).second) finding("an id repeats", std::to_string(r.id));
      if (o.sort && r.id >= source->size_hint()) finding("id out of range", std::to_string(r.id));
      prev = r;
    }
    for (const auto& [counter, count] : source->counters())
      if (count < 0) finding("negative counter", counter);
  } catch (const servesim::InputError& e) {
    servesim::fuzz::check_message(e.what(), name);
  } catch (const std::exception& e) {
    finding("an exception other than InputError", e.what());
  }
  return 0;
}
