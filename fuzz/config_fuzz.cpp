// libFuzzer harness: arbitrary text read as a scenario config and built, as `servesim run` does
// before it simulates. Lines starting "#--set " (YAML comments) are also applied as --set
// overrides. The document is named as if it sat in configs/examples/, so the seed corpus's
// relative trace and step-time paths resolve. Expected outcomes: a scenario whose workload keeps
// the WorkloadSource contract for its first requests, or an InputError with a clean message;
// anything else (a crash, a sanitizer report, another exception type, a hang) is a finding.
#include <cstdint>
#include <exception>
#include <set>
#include <sstream>
#include <string>

#include "core/errors.h"
#include "fuzz/check.h"
#include "sim/scenario.h"
#include "traces/workload_source.h"

namespace {

void check_workload(servesim::WorkloadSource& source) {
  using servesim::fuzz::finding;
  servesim::RequestSpec r, prev;
  std::set<uint64_t> ids;
  for (int i = 0; i < 200 && source.next(r); ++i) {
    if (!ids.insert(r.id).second) finding("an id repeats", std::to_string(r.id));
    if (r.arrival.count_ns() < 0 || (i > 0 && r.arrival < prev.arrival))
      finding("arrivals negative, decreasing or overflowing", std::to_string(r.arrival.count_ns()));
    if (i > 0 && r.arrival == prev.arrival && r.id < prev.id)
      finding("equal arrivals out of input order", std::to_string(r.id));
    if (r.prompt_tokens < 1 || r.output_tokens < 1) finding("token count < 1", "");
    prev = r;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using servesim::fuzz::finding;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string name = SERVESIM_SOURCE_DIR "/configs/examples/fuzz.yaml";
  try {
    auto doc = std::make_shared<servesim::Document>(text, name);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("#--set ", 0) == 0) doc->apply_override(line.substr(7));
    servesim::Scenario sc = servesim::build_scenario(doc);
    check_workload(*sc.components.source);
  } catch (const servesim::InputError& e) {
    const std::string msg = e.what();
    // A message about an override starts with "--set"; the others start with a key path or a
    // file name, which depend on the input, so only their cleanliness is checked.
    servesim::fuzz::check_message(msg, msg.rfind("--set", 0) == 0 ? "--set" : "");
  } catch (const std::exception& e) {
    finding("an exception other than InputError", e.what());
  }
  return 0;
}
