#pragma once
// Each scheduling policy's factory, for the registry (schedulers/registry.cpp), the policies'
// own files and tests only. Everyone else builds a scheduler with make_scheduler
// (schedulers/scheduler.h).
#include <memory>

#include "core/config.h"
#include "schedulers/scheduler.h"

namespace servesim {

using SchedulerFactory = std::unique_ptr<Scheduler> (*)(const Cfg& scheduler,
                                                        const AcceleratorInfo& accelerator);

std::unique_ptr<Scheduler> make_continuous(const Cfg& c);
std::unique_ptr<Scheduler> make_dynamic(const Cfg& c);
std::unique_ptr<Scheduler> make_orca(const Cfg& c);
std::unique_ptr<Scheduler> make_sarathi(const Cfg& c);
std::unique_ptr<Scheduler> make_sglang(const Cfg& c);
std::unique_ptr<Scheduler> make_static(const Cfg& c);
std::unique_ptr<Scheduler> make_trtllm(const Cfg& c);
std::unique_ptr<Scheduler> make_vllm(const Cfg& c, const AcceleratorInfo& accelerator);

}  // namespace servesim
