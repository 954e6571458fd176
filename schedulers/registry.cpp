#include "core/registry.h"

#include "schedulers/factories.h"

namespace servesim {
namespace {

// Sorted by name. A new scheduler is one file and one line here.
constexpr Registry<SchedulerFactory, 8> k_schedulers{{{
    {"continuous", &make_continuous},
    {"dynamic", &make_dynamic},
    {"orca", &make_orca},
    {"sarathi", &make_sarathi},
    {"sglang", &make_sglang},
    {"static", &make_static},
    {"trtllm", &make_trtllm},
    {"vllm", &make_vllm},
}}};

}  // namespace

std::vector<std::string> scheduler_names() { return k_schedulers.names(); }

std::unique_ptr<Scheduler> make_scheduler(const Cfg& c) { return k_schedulers.pick(c, "kind")(c); }

}  // namespace servesim
