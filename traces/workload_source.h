#pragma once
// Workload sources: where requests come from (a trace file, a generator), optionally reshaped
// by a transform (traces/transform.cpp).
//
// CONTRACT: next() yields requests in non-decreasing arrival order; requests with equal arrival
// come in input order. ids are 0, 1, 2, ... in input order.
//
// A reactive source (sessions, dependency graphs, closed-loop users) also makes requests whose
// arrival depends on the run: the engine calls on_depart() for every request that leaves, and
// the source hands back the requests that this made ready, each arriving at or after that
// instant. next() then yields only the requests whose arrival is known up front; ids are still
// unique, but need not follow arrival order. A source reports bad input by
// throwing InputError naming the file and line; it never skips a row silently: a row dropped on
// purpose (an option asked for it) is counted in counters().
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/request.h"

namespace servesim {

class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  /// Writes the next request into `out`; returns false once there are none left.
  [[nodiscard]] virtual bool next(RequestSpec& out) = 0;
  /// How many requests there will be, when known up front (0 otherwise).
  [[nodiscard]] virtual size_t size_hint() const = 0;
  /// Requests or rows dropped or changed on purpose so far, by name (e.g.
  /// {"trace_rows_skipped_zero_tokens", 3}); complete once next() has returned false. Only the
  /// counts the configured options can move are listed.
  [[nodiscard]] virtual std::vector<std::pair<std::string, int64_t>> counters() const { return {}; }
  /// The sum of counters()' counts. A count never decreases and a source's counter names are
  /// fixed when it is built, so this changes exactly when counters() does: the read-ahead
  /// wrapper (traces/read_ahead.h) asks it after every request and builds counters()' list only
  /// when it moved (building the list each time was a third of the reader thread's work on the
  /// Azure trace). The default sums counters(); a source with counters returns it directly.
  [[nodiscard]] virtual int64_t counters_total() const;

  /// True for a reactive source (see above). Transforms refuse such a source: they would cut
  /// or move requests that others wait for.
  [[nodiscard]] virtual bool reactive() const { return false; }
  /// Reactive sources: request `r` left the engine (released, or rejected) at `now`; appends to
  /// `ready` the requests that can now be given an arrival (>= now).
  virtual void on_depart(const Request& /*r*/, Time /*now*/, std::vector<RequestSpec>& /*ready*/) {}
  /// Reactive sources: how many requests still wait for others to leave.
  [[nodiscard]] virtual size_t waiting() const { return 0; }
  /// The names of the request classes (RequestSpec::class_id indexes it), as known so far:
  /// every request already yielded has its class here, and the list only grows (a streamed
  /// trace learns names as it reads). Empty when the workload names no class: every request is
  /// then class 0, unnamed. Wrappers (transforms) pass their inner source's list on.
  [[nodiscard]] virtual const std::vector<std::string>& class_names() const;
  /// The names of the tenants (RequestSpec::tenant_id indexes it), as class_names() is for
  /// classes: empty when the workload names no tenant (every request is then tenant 0).
  [[nodiscard]] virtual const std::vector<std::string>& tenant_names() const;
};

/// The one way to build a workload (traces/registry.cpp): reads the `workload` map, which holds
/// exactly one source (trace or synthetic) and optionally `transform`. Each source's own
/// factory is declared in traces/factories.h, for the registry only.
[[nodiscard]] std::unique_ptr<WorkloadSource> make_workload(const Cfg& workload, uint64_t seed);
[[nodiscard]] std::vector<std::string> workload_source_names();

/// Reads a whole vLLM benchmark / LLMServingSim requests.jsonl (input_toks, output_toks,
/// arrival_time) into requests sorted by arrival, arrivals relative to the earliest.
[[nodiscard]] std::vector<RequestSpec> read_vllm_jsonl(const std::string& path);
/// The same from a stream; `name` stands for the file in messages.
[[nodiscard]] std::vector<RequestSpec> read_vllm_jsonl(std::istream& in, const std::string& name);

/// Reads a whole servesim CSV trace (header with arrival_s, prompt_tokens, output_tokens) into
/// requests sorted by arrival. Throws InputError naming the file, line and column.
[[nodiscard]] std::vector<RequestSpec> read_csv_trace(const std::string& path);
/// The same from a stream; `name` stands for the file in messages.
[[nodiscard]] std::vector<RequestSpec> read_csv_trace(std::istream& in, const std::string& name);

}  // namespace servesim
