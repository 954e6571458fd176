#include "sizing/run_cost.h"

#include <cstdint>
#include <string>

#include "core/errors.h"
#include "models/catalog.h"

namespace servesim {
namespace {

using json = nlohmann::json;

const json& child(const json& j, const char* key) {
  static const json none;
  return j.is_object() && j.contains(key) ? j[key] : none;
}

int64_t int_or(const json& j, int64_t def) {
  return j.is_number_integer() && j.get<int64_t>() > 0 ? j.get<int64_t>() : def;
}

}  // namespace

json run_cost_json(const json& summary) {
  const json& config = child(summary, "config");
  const json& step_time = child(config, "step_time");
  const json& memory = child(child(config, "kv"), "memory");
  const json& cluster = child(config, "cluster");
  if (!child(cluster, "pools").is_null()) return nullptr;
  std::string name;
  if (child(step_time, "hardware").is_string())
    name = child(step_time, "hardware").get<std::string>();
  else if (child(memory, "hardware").is_string())
    name = child(memory, "hardware").get<std::string>();
  if (name.empty() || name.find('/') != std::string::npos) return nullptr;
  int64_t accelerators = int_or(child(child(summary, "slo"), "accelerators"), 0);
  if (accelerators == 0) {
    int64_t each = 1;
    if (!child(step_time, "tensor_parallel").is_null() ||
        !child(step_time, "data_parallel").is_null() ||
        !child(step_time, "pipeline_parallel").is_null())
      each = int_or(child(step_time, "tensor_parallel"), 1) *
             int_or(child(step_time, "data_parallel"), 1) *
             int_or(child(step_time, "pipeline_parallel"), 1);
    else
      each = int_or(child(memory, "tensor_parallel"), 1) *
             int_or(child(memory, "pipeline_parallel"), 1);
    accelerators = each * int_or(child(cluster, "replicas"), 1);
  }
  try {
    const HardwareSpec hw = load_hardware(name, ".");
    const PriceQuote* price = hw.price(k_default_price_tier);
    if (price == nullptr) price = hw.price("mixed");
    if (price == nullptr) return nullptr;
    double per_hour = price->usd_per_hour * static_cast<double>(accelerators);
    // Autoscaled (docs/autoscaling.md): the accelerators paid for on average, not the most.
    const json& autoscale = child(summary, "autoscale");
    const json& hours = child(autoscale, "accelerator_hours");
    const json& horizon = child(autoscale, "horizon_s");
    if (hours.is_number() && horizon.is_number() && horizon.get<double>() > 0)
      per_hour = price->usd_per_hour * hours.get<double>() * 3600.0 / horizon.get<double>();
    json out = {{"hardware", hw.name},       {"accelerators", accelerators},
                {"price_tier", price->tier}, {"usd_per_accelerator_hour", price->usd_per_hour},
                {"usd_per_hour", per_hour},  {"tokens_per_usd", nullptr}};
    const json& tput = child(summary, "output_tokens_per_s");
    if (tput.is_number() && per_hour > 0)
      out["tokens_per_usd"] = tput.get<double>() * 3600 / per_hour;
    return out;
  } catch (const InputError&) {
    return nullptr;  // not a catalogue name: the page shows no cost
  }
}

}  // namespace servesim
