#pragma once
// `--requests N` (run, capacity, size, trace gen) and Python's requests=N: the synthetic
// workload's request count, one meaning everywhere (docs/cli.md#conventions).
#include <cstdint>
#include <string>

#include "core/config.h"

namespace servesim {

/// Sets workload.synthetic.requests to `requests` in `doc`, refusing a scenario whose workload
/// is not synthetic with an InputError naming `option` ("--requests: c.yaml has no
/// workload.synthetic to override").
void apply_request_count(Document& doc, int64_t requests, const std::string& option);

}  // namespace servesim
