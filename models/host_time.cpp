// host_time: the engine's CPU time a step and its CUDA graphs, around any step-time model
// (models/host_time.h). Defaults per engine and version are in engine_defaults() below; each
// constant's source is in docs/schedulers.md ("Host time and CUDA graphs").
#include "models/host_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "core/engine_versions.h"
#include "core/errors.h"
#include "core/units.h"
#include "models/catalog.h"

namespace servesim {
namespace {

constexpr size_t idx(HostPart p) { return static_cast<size_t>(p); }

class WithHostTime final : public StepTimeModel {
 public:
  WithHostTime(std::unique_ptr<StepTimeModel> inner, const HostTime& host, const CudaGraphs& g,
               bool apply_graphs, int32_t data_parallel)
      : m_inner(std::move(inner)),
        m_host(host),
        m_graphs(g),
        m_apply_graphs(apply_graphs),
        m_dp(data_parallel) {
    if (m_apply_graphs && m_graphs.enabled && !m_graphs.capture_sizes.empty()) {
      m_max_graph = m_graphs.capture_sizes.back();
      // m_pad_to[n]: the captured size a decode-only step of n seats replays, 0 for none.
      m_pad_to.assign(static_cast<size_t>(m_max_graph) + 1, 0);
      size_t next = 0;
      for (int32_t n = 1; n <= m_max_graph; ++n) {
        while (m_graphs.capture_sizes[next] < n) ++next;
        const int32_t size = m_graphs.capture_sizes[next];
        m_pad_to[static_cast<size_t>(n)] = m_graphs.pad || size == n ? size : 0;
      }
    }
  }

  double step_ms(const StepShape& s) const override { return host_ms(s, gpu_ms(s)); }

  std::optional<StepCost> cost(const StepShape& s) const override {
    auto c = m_inner->cost(s);
    if (c) c->step_ms = step_ms(s);
    return c;
  }
  PipelineInfo pipeline() const override { return m_inner->pipeline(); }
  // Engine-scheduled micro-batches: the host time the stages' sum leaves exposed goes on stage
  // 0 (CUDA-graph padding is not applied per stage).
  int32_t pipeline_stage_ms(const StepShape& s, std::span<double> out) const override {
    const int32_t m = m_inner->pipeline_stage_ms(s, out);
    if (m_inner->pipeline().micro_batches) {
      const size_t n = static_cast<size_t>(m_inner->pipeline().stages);
      double sum = 0;
      for (size_t k = 0; k < n; ++k) sum += out[k];
      out[0] += host_ms(s, sum) - sum;
    }
    return m;
  }

 private:
  // The busiest data-parallel rank's share of `n` (each rank an engine of its own, in lockstep).
  [[nodiscard]] int64_t per_rank(int64_t n) const { return (n + m_dp - 1) / m_dp; }

  // The GPU's part of the step: graphed (possibly at a padded shape) or eager. Under data
  // parallelism each rank replays the graph of its own seats, so the busiest rank's seats pick
  // the graph and every rank is padded to it (the inner model prices the busiest rank).
  double gpu_ms(const StepShape& s) const {
    if (!m_apply_graphs) return m_inner->step_ms(s);
    if (m_graphs.enabled) {
      const int64_t seats = per_rank(s.sequences);
      if (s.prefill_tokens == 0 && seats <= m_max_graph) {
        const int64_t padded = int64_t{m_pad_to[static_cast<size_t>(seats)]} * m_dp;
        if (padded == s.sequences) return m_inner->step_ms(s);
        if (padded > 0) {
          StepShape p = s;
          p.decode_sequences += static_cast<int32_t>(padded - s.sequences);  // read no KV
          p.sequences = static_cast<int32_t>(padded);
          return m_inner->step_ms(p);
        }
      } else if (s.prefill_tokens > 0 && m_graphs.graph_mixed_steps &&
                 per_rank(s.prefill_tokens + s.decode_sequences) <= m_max_graph) {
        return m_inner->step_ms(s);
      }
    }
    return std::max(m_inner->step_ms(s), m_graphs.eager_launch_ms);
  }

  // Each data-parallel rank's host schedules and samples its own seats, at the same time as the
  // others: the step waits for the busiest.
  double host_ms(const StepShape& s, double gpu) const {
    double hidden = 0, exposed = 0;
    const auto seats = static_cast<int32_t>(per_rank(s.sequences));
    for (size_t i = 0; i < k_host_parts; ++i) {
      const double t = m_host.parts[i].ms(seats);
      ((m_host.overlap && m_host.hidden[i]) || m_host.off_path[i] ? hidden : exposed) += t;
    }
    return std::max(gpu, hidden) + exposed;
  }

  std::unique_ptr<StepTimeModel> m_inner;
  HostTime m_host;
  CudaGraphs m_graphs;
  bool m_apply_graphs;
  int64_t m_dp;  ///< data-parallel ranks, >= 1
  int32_t m_max_graph = 0;
  std::vector<int32_t> m_pad_to;
};

// ---- engine defaults ------------------------------------------------------------------

/// Host CPU time a step, per component, fitted (least squares, per_step + per_seq x batch) to
/// the medians of Vidur's A100 cpu_overheads.csv (CodeLlama-34B, TP 2, batch 8 to 128; a
/// vLLM-derived engine): `python3 scripts/host_time_constants.py` prints them. The only public
/// per-component host profile in the data; used for every engine (docs/schedulers.md).
HostTime vidur_a100_host() {
  HostTime h;
  h.parts[idx(HostPart::Schedule)] = {0.0163, 0.00276};
  h.parts[idx(HostPart::PrepareInputs)] = {0.1479, 0.00097};
  h.parts[idx(HostPart::Sample)] = {0.5994, 0.00327};
  h.parts[idx(HostPart::ProcessOutputs)] = {0.0427, 0.03048};
  // Under overlap the next step's scheduling and input preparation and the previous step's
  // output processing run while the GPU computes; sampling waits for the logits.
  h.hidden[idx(HostPart::Schedule)] = true;
  h.hidden[idx(HostPart::PrepareInputs)] = true;
  h.hidden[idx(HostPart::ProcessOutputs)] = true;
  return h;
}

using Version = EngineVersion;  // core/engine_versions.h: a known MAJOR.MINOR

/// The start, step and end of a range of sizes, appended to `out`.
void add_range(std::vector<int32_t>& out, int32_t from, int32_t to, int32_t step) {
  for (int32_t n = from; n <= to; n += step) out.push_back(n);
}

struct EngineDefaults {
  HostTime host;
  CudaGraphs graphs;
};

// vLLM: V0 before 0.8 (decode-only graphs, [1, 2, 4] + multiples of 8 up to 256, capped at the
// captured size that covers max_num_seqs; no async scheduling); V1 from 0.8 (piecewise graphs
// for mixed steps too; from 0.11 the sizes stop at min(2 x max_num_seqs, 512) with steps of 16
// above 256; before, multiples of 8 up to 512).
EngineDefaults vllm_defaults(const Cfg& c) {
  EngineDefaults d;
  const Version v = read_engine_version(c, "vllm");
  const bool v0 = v.major == 0 && v.minor < 8;
  const int64_t seqs = c.get_int("max_num_seqs", 256, {1, 1 << 20});
  d.host = vidur_a100_host();
  d.host.overlap = c.get_bool("async_scheduling", false);
  // V1 turns outputs into text and replies in its front-end process (AsyncLLM's output
  // processor), beside the engine core's loop; V0 did it in the loop.
  d.host.off_path[idx(HostPart::ProcessOutputs)] = !v0;
  if (v0 && d.host.overlap)
    c.fail("async_scheduling", fmt::format("vLLM {}.{} (V0) has no asynchronous scheduling: it "
                                           "came with V1 (0.8 and later)",
                                           v.major, v.minor));
  auto& sizes = d.graphs.capture_sizes;
  sizes = {1, 2, 4};
  if (v0) {
    add_range(sizes, 8, 256, 8);
    const auto cover = std::lower_bound(sizes.begin(), sizes.end(), seqs);
    if (cover != sizes.end()) sizes.erase(cover + 1, sizes.end());
  } else if (v.before(0, 11)) {
    add_range(sizes, 8, 512, 8);
  } else {
    const auto max = static_cast<int32_t>(std::min<int64_t>(2 * seqs, 512));
    add_range(sizes, 8, std::min(max, 248), 8);
    add_range(sizes, 256, max, 16);
    sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](int32_t n) { return n > max; }),
                sizes.end());
  }
  d.graphs.graph_mixed_steps = !v0;
  return d;
}

// SGLang: the overlap scheduler (on by default since 0.4; enable_overlap_schedule), decode
// graphs for batches of 1, 2, 4, 8, then multiples of 8 up to cuda_graph_max_bs 160, padded.
EngineDefaults sglang_defaults(const Cfg& c) {
  EngineDefaults d;
  const Version v = read_engine_version(c, "sglang");
  d.host = vidur_a100_host();
  d.host.overlap = c.get_bool("enable_overlap_schedule", !v.before(0, 4));
  // Detokenization runs in SGLang's DetokenizerManager process, beside the scheduler's loop.
  d.host.off_path[idx(HostPart::ProcessOutputs)] = true;
  d.graphs.capture_sizes = {1, 2, 4, 8};
  add_range(d.graphs.capture_sizes, 16, 160, 8);
  return d;
}

// TensorRT-LLM: from 1.0 the PyTorch backend, a Python step loop like vLLM's, with its overlap
// scheduler unless disable_overlap_scheduler; before 1.0 the C++ executor over TensorRT engines,
// whose host time no public profile here measures, so `host_time: true` is refused there (give
// the components). cuda_graph_config's defaults: batch sizes 1, 2, 4, ..., 128, no padding.
EngineDefaults trtllm_defaults(const Cfg& c) {
  EngineDefaults d;
  const Version v = read_engine_version(c, "trtllm");
  d.host = vidur_a100_host();
  d.host.overlap = !c.get_bool("disable_overlap_scheduler", false);
  if (v.before(1, 0)) {
    d.host.overlap = false;
    if (c.has("host_time") && c.is_scalar("host_time") && c.get_bool("host_time", false))
      c.fail("host_time", fmt::format("TensorRT-LLM {}.{} runs the C++ executor, whose host time "
                                      "no public profile gives: give host_time as a map of "
                                      "schedule, prepare_inputs, sample and process_outputs",
                                      v.major, v.minor));
    d.host.parts = {};
  }
  d.graphs.capture_sizes = {1, 2, 4, 8, 16, 32, 64, 128};
  d.graphs.pad = false;
  return d;
}

/// The eager launch cost of a layer, in microseconds: about ten kernels per decoder layer at a
/// few microseconds of host launch time each. An assumption (docs/schedulers.md), not measured.
constexpr double k_eager_launch_us_per_layer = 40.0;

int64_t layers_of(const Cfg& step_time, const Cfg& graphs_owner, bool has_map) {
  if (has_map) {
    const Cfg g = graphs_owner.child("cuda_graphs");
    if (g.has("layers")) return g.get_int("layers", {1, 100000});
  }
  // Only the keys the step model itself reads (layer_profile's layers; the catalogue model of
  // operator and roofline), so that reading here never makes a stray key acceptable.
  const std::string kind = step_time.get_string("kind");
  if (kind == "layer_profile") return step_time.get_int("layers", {1, 100000});
  if ((kind == "operator" || kind == "roofline") && step_time.has("model"))
    return read_model(step_time, "model").layers;
  return 0;
}

// host_time: false (default) | true | a map of components, each {per_step_ms, per_seq_ms}. The
// overlap mode is the engine's own key (async_scheduling, enable_overlap_schedule,
// disable_overlap_scheduler), never a host_time key.
bool read_host(const Cfg& c, HostTime& h) {
  if (!c.has("host_time")) return false;
  if (c.is_scalar("host_time")) return c.get_bool("host_time", false);
  const Cfg m = c.child("host_time");
  static constexpr std::array<std::pair<HostPart, const char*>, k_host_parts> k_names{{
      {HostPart::Schedule, "schedule"},
      {HostPart::PrepareInputs, "prepare_inputs"},
      {HostPart::Sample, "sample"},
      {HostPart::ProcessOutputs, "process_outputs"},
  }};
  for (const auto& [part, name] : k_names) {
    const std::optional<Cfg> p = m.optional_child(name);
    if (!p) continue;
    HostCost& cost = h.parts[idx(part)];
    cost.per_step_ms = plausible_real(*p, "per_step_ms", cost.per_step_ms, units::k_cost_ms);
    cost.per_seq_ms = plausible_real(*p, "per_seq_ms", cost.per_seq_ms, units::k_cost_ms);
  }
  return true;
}

// cuda_graphs: absent (engine default when host_time is on, else untouched) | true | false |
// {enabled, capture_sizes: [..], enable_padding, eager_launch_us_per_layer, layers}.
bool read_graphs(const Cfg& c, CudaGraphs& g, double& launch_us) {
  if (!c.has("cuda_graphs")) return false;
  if (c.is_scalar("cuda_graphs")) {
    g.enabled = c.get_bool("cuda_graphs", true);
    return true;
  }
  const Cfg m = c.child("cuda_graphs");
  g.enabled = m.get_bool("enabled", true);
  launch_us = plausible_real(m, "eager_launch_us_per_layer", launch_us, units::k_latency_us);
  g.pad = m.get_bool("enable_padding", g.pad);
  if (m.has("capture_sizes")) {
    const YAML::Node list = m.node("capture_sizes");
    const auto bad = [&] {
      m.fail("capture_sizes",
             "must be a non-empty list of ascending batch sizes >= 1, e.g. "
             "[1, 2, 4, 8]");
    };
    if (!list.IsSequence() || list.size() == 0) bad();
    std::vector<int32_t> sizes;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].IsScalar()) bad();
      const std::string& text = list[i].Scalar();
      char* end = nullptr;
      const long n = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || end != text.c_str() + text.size() || n < 1 || n > (1 << 20) ||
          (!sizes.empty() && n <= sizes.back()))
        bad();
      sizes.push_back(static_cast<int32_t>(n));
    }
    g.capture_sizes = std::move(sizes);
  }
  return true;
}

}  // namespace

std::unique_ptr<StepTimeModel> with_host_time(std::unique_ptr<StepTimeModel> inner,
                                              const HostTime& host, const CudaGraphs& graphs,
                                              bool apply_graphs, int32_t data_parallel) {
  return std::make_unique<WithHostTime>(std::move(inner), host, graphs, apply_graphs,
                                        data_parallel);
}

std::unique_ptr<StepTimeModel> apply_engine_host(const Cfg& scheduler, const Cfg& step_time,
                                                 std::unique_ptr<StepTimeModel> inner) {
  const std::string kind = scheduler.get_string("kind");
  EngineDefaults d;
  if (kind == "vllm")
    d = vllm_defaults(scheduler);
  else if (kind == "sglang")
    d = sglang_defaults(scheduler);
  else if (kind == "trtllm")
    d = trtllm_defaults(scheduler);
  else
    return inner;  // host_time and cuda_graphs stay unread: unknown keys for other kinds
  d.graphs.enabled = true;
  const bool host_on = read_host(scheduler, d.host);
  double launch_us = k_eager_launch_us_per_layer;
  const bool graphs_given = read_graphs(scheduler, d.graphs, launch_us);
  if (!host_on) d.host = HostTime{};
  if (!host_on && !graphs_given) return inner;
  const bool has_map = graphs_given && !scheduler.is_scalar("cuda_graphs");
  const int64_t layers = layers_of(step_time, scheduler, has_map);
  if (layers == 0 && launch_us > 0)
    scheduler.fail("cuda_graphs",
                   "the eager launch cost needs the model's layer count, which the step_time "
                   "section does not give (no `layers`, no catalogue `model`): give "
                   "cuda_graphs: {layers: N} or eager_launch_us_per_layer: 0");
  d.graphs.eager_launch_ms = static_cast<double>(layers) * launch_us / 1000.0;
  // Data-parallel ranks: only a step model that itself reads `data_parallel` (layer_profile,
  // operator), so that reading it here never makes a stray key acceptable.
  const std::string model_kind = step_time.get_string("kind");
  const auto dp = static_cast<int32_t>(model_kind == "layer_profile" || model_kind == "operator"
                                           ? step_time.get_int("data_parallel", 1, {1, 1024})
                                           : 1);
  return with_host_time(std::move(inner), d.host, d.graphs, true, dp);
}

}  // namespace servesim
