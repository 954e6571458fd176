// Wide expert parallelism with data-parallel attention: the busiest rank, the all-to-all and the
// MoE block beyond the tables' widest expert parallelism (models/expert_parallel.h).
#include "models/expert_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/csv_columns.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "core/units.h"

namespace servesim {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The roofline of one GPU's MoE block (expert GEMMs: gate, up and down projections).
double moe_roof_ms(double tokens, const MoeShape& s, const MoeRoofs& r) {
  const double pairs = tokens * s.top_k / s.moe_ep;
  const double per_expert = 3 * s.hidden_size * s.inter_size / s.moe_tp;
  const double bytes = distinct_hit(s.experts / s.moe_ep, pairs) * per_expert * r.weight_bytes;
  return std::max(bytes / r.bytes_per_ms, 2 * per_expert * pairs / r.flops_per_ms);
}

}  // namespace

StepShape busiest_rank(const StepShape& s, int32_t ranks) {
  if (ranks <= 1) return s;
  StepShape r = s;
  const int32_t prefilling = s.sequences - s.decode_sequences;
  r.decode_sequences = static_cast<int32_t>(ceil_div(s.decode_sequences, ranks));
  r.sequences = r.decode_sequences + static_cast<int32_t>(ceil_div(prefilling, ranks));
  if (s.prefill_tokens > 0) {
    const auto prefill = static_cast<double>(s.prefill_tokens);
    const auto largest = static_cast<int64_t>(std::ceil(s.prefill_tokens_sq / prefill));
    r.prefill_tokens =
        std::min(s.prefill_tokens, std::max(ceil_div(s.prefill_tokens, ranks), largest));
    const double share = static_cast<double>(r.prefill_tokens) / prefill;
    r.prefill_tokens_sq = s.prefill_tokens_sq * share;
    r.prefill_context_tokens = std::llround(static_cast<double>(s.prefill_context_tokens) * share);
    if (r.sequences == r.decode_sequences) ++r.sequences;  // a chunk holds a seat
  }
  if (s.decode_sequences > 0)
    r.decode_context_tokens =
        std::llround(static_cast<double>(s.decode_context_tokens) *
                     static_cast<double>(r.decode_sequences) / s.decode_sequences);
  return r;
}

double link_all_to_all_ms(const AllToAllLinks& l, double bytes, double gpus) {
  const double n = std::min(gpus, l.gpus_per_node);
  return l.latency_ms + std::max((n - 1) / gpus * bytes / l.intra_bytes_per_ms,
                                 (gpus - n) / gpus * bytes / l.inter_bytes_per_ms);
}

AllToAll::AllToAll(AllToAllLinks links, const std::filesystem::path& nccl_csv) : m_links(links) {
  if (nccl_csv.empty()) return;
  CsvColumns csv(nccl_csv.string(),
                 {"op_name", "nccl_dtype", "num_gpus", "message_size", "latency_ms"});
  std::map<double, std::map<double, double>> by_gpus;
  while (csv.next_row()) {
    if (csv.field(0) != "alltoall" || csv.field(1) != "half") continue;
    auto& points = by_gpus[static_cast<double>(csv.integer(2, 1, 1 << 20))];
    const auto elements = static_cast<double>(csv.integer(3, 1, int64_t{1} << 40));
    const double ms = csv.positive_real(4);
    const auto it = points.find(elements);
    if (it == points.end() || ms < it->second) points[elements] = ms;  // the fastest of repeats
  }
  for (const auto& [gpus, points] : by_gpus) {
    std::vector<double> xs, ys;
    for (const auto& [x, y] : points) {
      xs.push_back(x);
      ys.push_back(y);
    }
    m_table.emplace(gpus, LogCurve(xs, ys, 1.0));
  }
}

bool AllToAll::measured(double gpus) const {
  return gpus <= m_links.gpus_per_node && m_table.count(gpus) > 0;
}

double AllToAll::ms(double bytes, double gpus) const {
  if (gpus <= 1) return 0;
  if (measured(gpus)) return m_table.at(gpus).at(std::max(1.0, bytes / 2));
  return link_all_to_all_ms(m_links, bytes, gpus);
}

double distinct_hit(double members, double draws) {
  if (members <= 1) return std::min(1.0, draws);
  return members * (1 - std::pow(1 - 1 / members, draws));
}

double wide_moe_ms(const OperatorSource& src, double tokens, const MoeShape& shape,
                   const std::string& dtype, const std::string& distribution, const MoeRoofs& roofs,
                   double& measured_ep) {
  if (measured_ep == 0) {
    // The width itself, then the powers of two below it that divide it, widest first.
    std::vector<double> widths{shape.moe_ep};
    for (double m = std::exp2(std::floor(std::log2(shape.moe_ep))); m >= 1; m /= 2)
      if (m < shape.moe_ep && std::fmod(shape.moe_ep, m) == 0) widths.push_back(m);
    std::optional<InputError> first;
    for (double m : widths) {
      MoeShape s = shape;
      s.moe_ep = m;
      try {
        (void)src.moe_ms(tokens * m / shape.moe_ep, s, dtype, distribution);
        measured_ep = m;
        break;
      } catch (const InputError& e) {
        if (!first) first = e;
      }
    }
    if (measured_ep == 0) throw *first;
  }
  if (measured_ep == shape.moe_ep) return src.moe_ms(tokens, shape, dtype, distribution);
  MoeShape measured = shape;
  measured.moe_ep = measured_ep;
  const double at = tokens * measured_ep / shape.moe_ep;
  return src.moe_ms(at, measured, dtype, distribution) * moe_roof_ms(tokens, shape, roofs) /
         moe_roof_ms(at, measured, roofs);
}

double dispatch_bytes(double tokens, const MoeShape& shape, double element_bytes, double skew) {
  return tokens * distinct_hit(shape.moe_ep, shape.top_k) * shape.hidden_size * element_bytes *
         skew;
}

namespace {

/// `<path>/<gpu>/nccl-*/nccl.csv` of a `source: tables` section (the last such folder by name),
/// or empty when there is none: the link model then times every all-to-all.
std::filesystem::path nccl_table(const Cfg& ops) {
  namespace fs = std::filesystem;
  if (ops.get_string("source") != "tables") return {};
  fs::path root(ops.get_string("path"));
  if (root.is_relative()) root = fs::path(ops.doc().base_dir()) / root;
  std::error_code ec;
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(root / ops.get_string("gpu"), ec))
    if (e.is_directory() && e.path().filename().string().rfind("nccl-", 0) == 0)
      if (const auto f = find_input(e.path() / "nccl.csv")) found.push_back(*f);
  if (found.empty()) return {};
  return *std::max_element(found.begin(), found.end());
}

}  // namespace

WideEp read_wide_ep(const Cfg& c, const HardwareSpec& hw, int64_t ranks) {
  static constexpr const char* k_keys[] = {
      "expert_skew",         "dispatch_dtype",        "gpus_per_node",    "intra_node_gb_per_s",
      "inter_node_gb_per_s", "all_to_all_latency_us", "two_batch_overlap"};
  WideEp w;
  if (ranks <= 1) {
    for (const char* key : k_keys)
      if (c.has(key)) c.fail(key, "only with data_parallel > 1 (wide expert parallelism)");
    return w;
  }
  w.ranks = static_cast<int32_t>(ranks);
  w.skew = c.get_real("expert_skew", 1.0, {1.0, 64.0});
  w.two_batch_overlap = c.get_bool("two_batch_overlap", false);
  w.dispatch_bytes = c.get_choice("dispatch_dtype", "bf16", {"bf16", "fp8"}) == "fp8" ? 1 : 2;
  AllToAllLinks links;
  links.gpus_per_node = static_cast<double>(c.get_int("gpus_per_node", 8, {1, 1024}));
  links.intra_bytes_per_ms =
      (c.has("intra_node_gb_per_s") ? plausible_real(c, "intra_node_gb_per_s", units::k_gb_per_s)
                                    : hw.interconnect_gb_per_s / 2) *
      1e6;
  links.inter_bytes_per_ms =
      plausible_real(c, "inter_node_gb_per_s", 50.0, units::k_gb_per_s) * 1e6;
  links.latency_ms = plausible_real(c, "all_to_all_latency_us", 10.0, units::k_latency_us) / 1e3;
  if (!(links.intra_bytes_per_ms > 0))
    c.fail("intra_node_gb_per_s",
           fmt::format("{} states no interconnect bandwidth: give the NVLink figure", hw.name));
  const Cfg ops = c.child("operators");
  try {
    w.all_to_all = std::make_shared<AllToAll>(links, nccl_table(ops));
  } catch (const InputError& e) {
    ops.fail("", fmt::format("the all-to-all table cannot be read: {}", e.what()));
  }
  return w;
}

double two_batch_overlap_ms(double half_compute_ms, double half_comm_ms, double layers) {
  return 2 * std::max(half_compute_ms, half_comm_ms) +
         std::min(half_compute_ms, half_comm_ms) / std::max(1.0, layers);
}

}  // namespace servesim
