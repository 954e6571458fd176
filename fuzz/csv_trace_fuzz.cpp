// libFuzzer harness: arbitrary bytes read as a servesim CSV trace (fuzz/trace_harness.h), then
// the same bytes replayed with their dependency columns (session_id, parent_id, think_s), every
// request "served" 1 ms after it arrives: each row must come out exactly once, no later than
// the reply it waits for allows, or the file must be refused with a clean InputError.
#include <map>

#include "fuzz/trace_harness.h"
#include "traces/trace_reader.h"

namespace {

void replay_dependencies(const uint8_t* data, size_t size) {
  using namespace servesim;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    auto source = open_trace(in, "fuzz.csv", TraceOptions{});
    std::multimap<Time, RequestSpec> pending;  // by arrival
    for (RequestSpec r; source->next(r);) pending.emplace(r.arrival, r);
    size_t served = 0;
    std::vector<RequestSpec> ready;
    while (!pending.empty()) {
      Request done;
      done.spec = pending.begin()->second;
      pending.erase(pending.begin());
      done.state = RequestState::Released;
      const Time left = done.spec.arrival + Time::from_ms(1);
      ++served;
      ready.clear();
      source->on_depart(done, left, ready);
      for (RequestSpec& r : ready) {
        if (r.arrival < left) fuzz::finding("a request arrived before the reply it waits for", "");
        pending.emplace(r.arrival, std::move(r));
      }
      if (source->reactive() && served > source->size_hint())
        fuzz::finding("more requests than rows", "");
    }
    if (source->waiting() != 0) fuzz::finding("requests left waiting at the end", "");
    if (source->reactive() && served != source->size_hint())
      fuzz::finding("a row was never replayed", std::to_string(served));
  } catch (const InputError& e) {
    fuzz::check_message(e.what(), "fuzz.csv");
  } catch (const std::exception& e) {
    fuzz::finding("an exception other than InputError", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  servesim::fuzz::fuzz_trace_reader(
      data, size,
      [](std::istream& in, const char* name) { return servesim::read_csv_trace(in, name); },
      "fuzz.csv");
  replay_dependencies(data, size);
  return 0;
}
