#pragma once
// Workload sources: where requests come from (a trace file, a generator).
//
// CONTRACT: next() yields requests in non-decreasing arrival order; requests with equal arrival
// come in input order. ids are 0, 1, 2, ... in input order. A source reports bad input by
// throwing InputError naming the file and line; it never skips a row silently.
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/request.h"

namespace servesim {

class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  /// Writes the next request into `out`; returns false once there are none left.
  [[nodiscard]] virtual bool next(RequestSpec& out) = 0;
  /// How many requests there will be, when known up front (0 otherwise).
  [[nodiscard]] virtual size_t size_hint() const = 0;
};

/// `section` is workload.<kind>; relative paths resolve against the config file's folder
/// (Cfg::existing_file).
using WorkloadFactory = std::unique_ptr<WorkloadSource> (*)(const Cfg& section, uint64_t seed);

/// Reads the `workload` map, which holds exactly one source: trace or synthetic.
[[nodiscard]] std::unique_ptr<WorkloadSource> make_workload(const Cfg& workload, uint64_t seed);
[[nodiscard]] std::vector<std::string> workload_source_names();

std::unique_ptr<WorkloadSource> make_csv_trace(const Cfg& c, uint64_t seed);
std::unique_ptr<WorkloadSource> make_synthetic(const Cfg& c, uint64_t seed);

/// Reads a vLLM benchmark / LLMServingSim requests.jsonl (input_toks, output_toks,
/// arrival_time) into requests sorted by arrival, arrivals relative to the earliest.
[[nodiscard]] std::vector<RequestSpec> read_vllm_jsonl(const std::string& path);
/// The same from a stream; `name` stands for the file in messages.
[[nodiscard]] std::vector<RequestSpec> read_vllm_jsonl(std::istream& in, const std::string& name);

/// Reads a servesim CSV trace (header with arrival_s, prompt_tokens, output_tokens) into
/// requests sorted by arrival. Throws InputError naming the file, line and column.
[[nodiscard]] std::vector<RequestSpec> read_csv_trace(const std::string& path);
/// The same from a stream; `name` stands for the file in messages.
[[nodiscard]] std::vector<RequestSpec> read_csv_trace(std::istream& in, const std::string& name);

}  // namespace servesim
