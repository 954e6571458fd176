#pragma once
// Each workload source's and trace format's factory, for the registry (traces/registry.cpp),
// the format table (traces/trace_format.cpp), the implementations' own files and tests only.
// Everyone else builds a workload with make_workload (traces/workload_source.h).
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <string>

#include "core/config.h"
#include "traces/trace_rows.h"
#include "traces/workload_source.h"

namespace servesim {

/// `section` is workload.<kind>; relative paths resolve against the config file's folder
/// (Cfg::existing_file).
using WorkloadFactory = std::unique_ptr<WorkloadSource> (*)(const Cfg& section, uint64_t seed);

/// workload.trace: any trace format (traces/trace_reader.h).
std::unique_ptr<WorkloadSource> make_trace(const Cfg& c, uint64_t seed);
std::unique_ptr<WorkloadSource> make_synthetic(const Cfg& c, uint64_t seed);
/// workload.closed_loop: users who each send a request a think time after the last reply.
std::unique_ptr<WorkloadSource> make_closed_loop(const Cfg& c, uint64_t seed);
/// workload.mix: several sources merged by arrival, each a named class (traces/mix.cpp).
std::unique_ptr<WorkloadSource> make_mix(const Cfg& c, uint64_t seed);
/// The seed of a mix's component `index` (0-based) in a run seeded with `seed`.
[[nodiscard]] uint64_t mix_component_seed(uint64_t seed, size_t index);
/// workload.servegen: ServeGen's per-window client traces (traces/servegen.cpp).
std::unique_ptr<WorkloadSource> make_servegen(const Cfg& c, uint64_t seed);

/// workload.transform around a source. `make_inner` makes a fresh copy of the source each time
/// it is called (target_rate_per_s reads one copy through first, to measure the rate).
using WorkloadMaker = std::function<std::unique_ptr<WorkloadSource>()>;
std::unique_ptr<WorkloadSource> make_transform(const Cfg& transform,
                                               const WorkloadMaker& make_inner, uint64_t seed);
/// transform.repeat_to_s (traces/repeat.cpp): `make`'s workload (a fresh copy a call) replayed
/// end to end until it covers that many seconds from its first arrival.
std::unique_ptr<WorkloadSource> make_repeated(const Cfg& transform, const WorkloadMaker& make);

/// The trace formats' row readers (RowReaderFactory), one per row of the format table.
std::unique_ptr<TraceRowReader> make_servesim_csv_rows(std::istream&, const std::string&,
                                                       const TraceOptions&);
std::unique_ptr<TraceRowReader> make_vllm_jsonl_rows(std::istream&, const std::string&,
                                                     const TraceOptions&);
std::unique_ptr<TraceRowReader> make_azure_rows(std::istream&, const std::string&,
                                                const TraceOptions&);
std::unique_ptr<TraceRowReader> make_mooncake_rows(std::istream&, const std::string&,
                                                   const TraceOptions&);
std::unique_ptr<TraceRowReader> make_burstgpt_rows(std::istream&, const std::string&,
                                                   const TraceOptions&);
std::unique_ptr<TraceRowReader> make_sharegpt_rows(std::istream&, const std::string&,
                                                   const TraceOptions&);
std::unique_ptr<TraceRowReader> make_vidur_rows(std::istream&, const std::string&,
                                                const TraceOptions&);

/// A trace whose rows depend on others (TraceRowReader::has_dependencies), loaded whole.
/// `name` is printable. Throws InputError for a missing parent, a repeated request_id, or a
/// cycle, naming the lines.
std::unique_ptr<WorkloadSource> make_dependent_trace(TraceRowReader& rows, const std::string& name,
                                                     const TraceOptions& options);

}  // namespace servesim
