#include "core/registry.h"

#include "schedulers/factories.h"

namespace servesim {
namespace {

// Sorted by name. A new scheduler is one file and one line here; a policy whose defaults do
// not depend on the accelerator ignores it.
constexpr Registry<SchedulerFactory, 8> k_schedulers{{{
    {"continuous", [](const Cfg& c, const AcceleratorInfo&) { return make_continuous(c); }},
    {"dynamic", [](const Cfg& c, const AcceleratorInfo&) { return make_dynamic(c); }},
    {"orca", [](const Cfg& c, const AcceleratorInfo&) { return make_orca(c); }},
    {"sarathi", [](const Cfg& c, const AcceleratorInfo&) { return make_sarathi(c); }},
    {"sglang", [](const Cfg& c, const AcceleratorInfo&) { return make_sglang(c); }},
    {"static", [](const Cfg& c, const AcceleratorInfo&) { return make_static(c); }},
    {"trtllm", [](const Cfg& c, const AcceleratorInfo&) { return make_trtllm(c); }},
    {"vllm", &make_vllm},
}}};

}  // namespace

std::vector<std::string> scheduler_names() { return k_schedulers.names(); }

std::unique_ptr<Scheduler> make_scheduler(const Cfg& c, const AcceleratorInfo& accelerator) {
  return k_schedulers.pick(c, "kind")(c, accelerator);
}

}  // namespace servesim
