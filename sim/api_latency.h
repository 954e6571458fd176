#pragma once
// The time a request spends outside the engine (the `api` section, issues 21 and 31): the
// client's coalescing of requests, the API server's own work (HTTP, tokenization) on a few CPU
// workers, and streaming the tokens back. Off unless the section is given.
//
// A request the trace sends at c is handed to the API server at s = coalesce(c) (c rounded up
// to a multiple of coalesce_ms: the client sends what it holds every coalesce_ms; c itself
// without it). Its work w = request_overhead + prompt_tokens / 1000 x tokenize_ms_per_1k_tokens
// runs on one of `workers` CPU workers, first come first served in the order the workload source
// produces requests (send order for traces and open-loop streams); 0 workers: each request has
// its own. It reaches the engine at a = max(s, the first free worker) + w. Every token reaches
// the client response_overhead after the engine produced it. The engine runs on a; when a
// request leaves, its times are turned into the client's (to_client_view), so every metric is
// measured from c, and the engine's own TTFT (from a) is kept beside it (engine_ttft).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/request.h"
#include "traces/workload_source.h"

namespace servesim {

struct ApiLatency {
  Time request_overhead;             ///< a worker's fixed work before the scheduler sees it
  Time response_overhead;            ///< from a token's production to the client
  double tokenize_ns_per_token = 0;  ///< a worker's work by prompt length
  Time coalesce;                     ///< 0: each request sent when the trace says
  int32_t workers = 0;               ///< CPU workers shared by all requests; 0: unlimited
};

/// `api.engine`'s presets, sorted: the names and each one's values (docs/calibration.md gives
/// their sources). A key given beside `engine` overrides the preset's value.
[[nodiscard]] const std::vector<std::string>& api_engine_names();

/// Reads the optional top-level `api` section. Throws InputError on a bad value.
[[nodiscard]] std::optional<ApiLatency> read_api_latency(const Cfg& root);

/// `inner` with each request's arrival moved to the engine's (and api_in, api_out set); keeps
/// the arrival order the engine requires (tokenization can reorder requests). Reactive sources
/// see a departure when its reply reaches the client.
[[nodiscard]] std::unique_ptr<WorkloadSource> with_api_latency(
    std::unique_ptr<WorkloadSource> inner, const ApiLatency& api);

/// Turns a leaving request's engine times into the client's: arrival back to the send time,
/// first and last token, finish and release later by api_out. api_in and api_out stay, so the
/// engine's times can still be told (engine_ttft). Once per request; no-op without the section.
inline void to_client_view(Request& r) {
  if (r.client_view) return;
  r.client_view = true;
  if (r.spec.api_in == Time::ns(0) && r.spec.api_out == Time::ns(0)) return;
  r.spec.arrival = r.spec.arrival - r.spec.api_in;
  for (Time* t : {&r.first_token, &r.last_token, &r.finish, &r.release})
    if (*t != Time::max()) *t = *t + r.spec.api_out;
}

}  // namespace servesim
