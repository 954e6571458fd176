#pragma once
// Per-tenant figures and Jain's fairness index (docs/metrics.md#tenants-and-fairness): the
// summary's `tenants` and `fairness` blocks, for a workload that names tenants.
#include <string>
#include <vector>

#include "metrics/summary_fields.h"

namespace servesim {

struct Summary;

/// Jain's fairness index (Σx)² / (n Σx²) of `x`: 1 when every value is equal, 1/n when one
/// value has everything. 1 for an empty list or all zeros (nothing to share unequally).
[[nodiscard]] double jain_index(const std::vector<double>& x);

/// The max-min fair shares of `capacity` among tenants asking for `demand` (water-filling: no
/// tenant gets more than it asks for, the rest is split equally among the others). When the
/// demands add up to no more than `capacity`, each gets its demand scaled up to fill it.
[[nodiscard]] std::vector<double> max_min_shares(const std::vector<double>& demand,
                                                 double capacity);

/// The `fairness` block: Jain's index over the tenants' tokens served while every tenant was
/// sending (the window from the latest first arrival of a tenant to the earliest last arrival),
/// each divided by its max-min fair share of what was served in the window given what each
/// asked for in it (docs/metrics.md#tenants-and-fairness).
struct FairnessSummary {
  double jain_index = 1;
  int64_t tenants = 0;
  double window_start_s = 0;
  double window_end_s = 0;
};

template <class F>
void for_each_field(const FairnessSummary& s, F&& f) {
  f(Field("jain_index"), s.jain_index);
  f(Field("tenants"), s.tenants);
  f(Field("window_start_s"), s.window_start_s);
  f(Field("window_end_s"), s.window_end_s);
}

/// The printed summary's tenant and fairness lines (empty without tenants).
[[nodiscard]] std::string tenant_lines(const Summary& s);

}  // namespace servesim
