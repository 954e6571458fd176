#pragma once
// The time a request spends outside the engine (the `api` section, issue 21): the client's
// coalescing of requests, the API server's own overhead, tokenization, and streaming the tokens
// back. Off unless the section is given.
//
// A request the trace sends at c reaches the engine at
//   a = coalesce(c) + request_overhead + prompt_tokens / 1000 x tokenize_ms_per_1k_tokens
// where coalesce(c) is c rounded up to a multiple of coalesce_ms (the client sends what it holds
// every coalesce_ms; c itself without it). Every token reaches the client response_overhead
// after the engine produced it. The engine runs on a; when a request leaves, its times are
// turned into the client's (to_client_view), so every metric is measured from c.
#include <memory>
#include <optional>

#include "core/config.h"
#include "core/request.h"
#include "traces/workload_source.h"

namespace servesim {

struct ApiLatency {
  Time request_overhead;             ///< before the request reaches the scheduler
  Time response_overhead;            ///< from a token's production to the client
  double tokenize_ns_per_token = 0;  ///< tokenization, by prompt length
  Time coalesce;                     ///< 0: each request sent when the trace says
};

/// Reads the optional top-level `api` section. Throws InputError on a bad value.
[[nodiscard]] std::optional<ApiLatency> read_api_latency(const Cfg& root);

/// `inner` with each request's arrival moved to the engine's (and api_in, api_out set); keeps
/// the arrival order the engine requires (tokenization can reorder requests). Reactive sources
/// see a departure when its reply reaches the client.
[[nodiscard]] std::unique_ptr<WorkloadSource> with_api_latency(
    std::unique_ptr<WorkloadSource> inner, const ApiLatency& api);

/// Turns a leaving request's engine times into the client's: arrival back to the send time,
/// first and last token, finish and release later by api_out. No-op without the section.
inline void to_client_view(Request& r) {
  if (r.spec.api_in == Time::ns(0) && r.spec.api_out == Time::ns(0)) return;
  r.spec.arrival = r.spec.arrival - r.spec.api_in;
  for (Time* t : {&r.first_token, &r.last_token, &r.finish, &r.release})
    if (*t != Time::max()) *t = *t + r.spec.api_out;
  r.spec.api_in = r.spec.api_out = Time::ns(0);  // once
}

}  // namespace servesim
