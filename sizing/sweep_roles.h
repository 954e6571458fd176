#pragma once
// Reading an axis's role (docs/sizing.md#axis-roles): an axis is a list of values, or a map
// {values: [...], role: deployment|scenario} that names its role.
#include <optional>
#include <string>

#include "core/config.h"
#include "sizing/sweep.h"

namespace servesim {

struct AxisForm {
  YAML::Node values;             ///< the list of values (whatever the file gives: checked later)
  std::optional<AxisRole> role;  ///< the role the file names, if any
};

/// The values and role of axis `key` of the sweep's `axes` map. `node` is the axis's value: a
/// list (no role given) or a map with `values` and optionally `role`. Throws InputError naming
/// the file, line and key for another key in the map, a missing `values` or an unknown role.
[[nodiscard]] AxisForm read_axis_form(const Cfg& axes, const std::string& key,
                                      const YAML::Node& node);

}  // namespace servesim
