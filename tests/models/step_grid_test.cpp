// The step-model answer grid (issue 35, seventh round): every step model the repository can
// build, over a grid of step shapes chosen to reach the edges (1-token prefill, one decode,
// batches just below, at and above the engines' CUDA-graph capture sizes, mixed steps around
// the largest captured size, contexts beyond the tables, continuing chunks, uneven decode
// lengths), with every figure a model returns pinned in tests/data/golden/step_models.txt.
//
// Like the config goldens (docs/testing.md, "Golden answers"), these are today's answers, right
// or wrong: a change that moves any of them fails here, naming the model, the shape and the
// figure, old -> new. When the change is meant, rewrite the file and let its diff show what
// moved:
//
//   SERVESIM_REWRITE_STEP_GRID=1 build/tests/servesim_tests "[step-grid]"
//
// The models: the step_time sections of every shipped config (each `step_time` with its
// scheduler's host time and CUDA graphs, each pool's, each speculative draft's, and the files of
// configs/step_times/), the extra sections below (every operator-table GPU and engine, the
// shape roofline, all-reduce choices, expert and data parallelism, two-batch overlap, pipeline
// schedules, layer-profile options, host-time variants) and the three fitted forms over the
// repository's measurements. Only the repository's own files are read (data/, tests/data/).
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "models/catalog.h"
#include "models/fit.h"
#include "models/host_time.h"
#include "models/kv_memory.h"
#include "models/measurements.h"
#include "models/step_time_model.h"
#include "tests/test_paths.h"

namespace t_models_step_grid_test {

using namespace servesim;
namespace fs = std::filesystem;

namespace {

const fs::path k_root = SERVESIM_SOURCE_DIR;
const fs::path k_golden = k_root / "tests/data/golden/step_models.txt";

struct NamedShape {
  std::string name;
  StepShape shape;
};

StepShape prefill(int64_t tokens, int32_t chunks = 1, int64_t context = 0) {
  StepShape s;
  s.sequences = chunks;
  s.prefill_tokens = tokens;
  const double each = static_cast<double>(tokens) / chunks;
  s.prefill_tokens_sq = chunks * each * each;
  s.prefill_context_tokens = context;
  return s;
}

StepShape decode(int32_t n, int64_t each, int64_t longest = -1, int64_t shortest = -1) {
  StepShape s;
  s.sequences = s.decode_sequences = n;
  s.decode_context_tokens = n * each;
  s.decode_context_max = longest < 0 ? each : longest;
  s.decode_context_min = shortest < 0 ? each : shortest;
  return s;
}

StepShape mixed(int64_t prompt, int32_t n, int64_t each, int64_t context = 0) {
  StepShape s = decode(n, each);
  s.sequences = n + 1;
  s.prefill_tokens = prompt;
  s.prefill_tokens_sq = static_cast<double>(prompt) * static_cast<double>(prompt);
  s.prefill_context_tokens = context;
  return s;
}

std::vector<NamedShape> shapes() {
  std::vector<NamedShape> v;
  for (int64_t t :
       {1, 17, 128, 255, 256, 257, 511, 512, 513, 2048, 8192, 8193, 16384, 32768, 131072})
    v.push_back({fmt::format("prefill {}", t), prefill(t)});
  v.push_back({"prefill 4 chunks of 256", prefill(1024, 4)});
  v.push_back({"prefill 512 after 7680", prefill(512, 1, 7680)});
  v.push_back({"prefill 3 chunks of 2048 after 30000", prefill(6144, 3, 30000)});
  for (int32_t n : {1,   2,   3,   4,   5,   8,   9,   16,  17,  24,  25,  32,  33,   64,  100,
                    128, 129, 160, 161, 248, 255, 256, 257, 264, 511, 512, 513, 1024, 5000})
    v.push_back({fmt::format("decode {} x 1000", n), decode(n, 1000)});
  v.push_back({"decode 1 x 1", decode(1, 1)});
  v.push_back({"decode 1 x 131072", decode(1, 131072)});
  v.push_back({"decode 8 x 600000", decode(8, 600000)});
  v.push_back({"decode 4 uneven 10..7000", decode(4, 2000, 7000, 10)});
  v.push_back({"decode 64 uneven 1..30000", decode(64, 1000, 30000, 1)});
  v.push_back({"mixed 1 + 1", mixed(1, 1, 100)});
  for (const auto& [p, n] : std::vector<std::pair<int64_t, int32_t>>{{224, 31},
                                                                     {224, 32},
                                                                     {224, 33},
                                                                     {480, 31},
                                                                     {480, 32},
                                                                     {480, 33},
                                                                     {8160, 31},
                                                                     {8160, 32},
                                                                     {8160, 33}})
    v.push_back({fmt::format("mixed {} + {} x 1000", p, n), mixed(p, n, 1000)});
  v.push_back({"mixed 512 after 4096 + 64 x 2000", mixed(512, 64, 2000, 4096)});
  // Steps whose prefill minus decodes would fit a graph that their sum does not.
  for (const auto& [p, n] :
       std::vector<std::pair<int64_t, int32_t>>{{7, 8}, {8, 8}, {9, 9}, {300, 300}})
    v.push_back({fmt::format("mixed {} + {} x 1000", p, n), mixed(p, n, 1000)});
  // Uneven decode lengths beside a prefill chunk (the skew corrections' chunk axis).
  for (const auto& [p, n] :
       std::vector<std::pair<int64_t, int32_t>>{{96, 4}, {300, 16}, {1500, 48}}) {
    StepShape u = mixed(p, n, 2000);
    u.decode_context_max = 9000;
    u.decode_context_min = 10;
    v.push_back({fmt::format("mixed {} + {} uneven 10..9000", p, n), u});
  }
  v.push_back({"decode 20000 x 100", decode(20000, 100)});
  StepShape padded = decode(3, 500);
  padded.sequences = padded.decode_sequences = 4;
  v.push_back({"decode 3 padded to 4", padded});
  return v;
}

using Figures = std::vector<std::pair<std::string, double>>;

void figures_of(const StepTimeModel& m, const StepShape& s, Figures& out) {
  out.emplace_back("step_ms", m.step_ms(s));
  if (const auto c = m.cost(s)) {
    out.emplace_back("bytes", c->bytes);
    out.emplace_back("flops", c->flops);
    out.emplace_back("bandwidth_bound", c->bandwidth_bound ? 1.0 : 0.0);
    out.emplace_back("ideal_ms_bandwidth", c->ideal_ms_bandwidth);
    out.emplace_back("ideal_ms_compute", c->ideal_ms_compute);
    out.emplace_back("peak_bytes_per_s", c->peak_bytes_per_s);
    out.emplace_back("peak_flops_per_s", c->peak_flops_per_s);
    out.emplace_back("cost.step_ms", c->step_ms);
  }
  const PipelineInfo p = m.pipeline();
  if (p.stages > 0) {
    out.emplace_back("stages", p.stages);
    out.emplace_back("micro_batches", p.micro_batches ? 1.0 : 0.0);
    std::vector<double> busy(static_cast<size_t>(p.stages), -1.0);
    out.emplace_back("stage_calls", m.pipeline_stage_ms(s, busy));
    for (size_t i = 0; i < busy.size(); ++i)
      out.emplace_back(fmt::format("stage_ms[{}]", i), busy[i]);
  }
}

struct Entry {
  std::string name;
  // Called for each shape; appends that shape's figures.
  std::function<void(const StepShape&, Figures&)> figures;
  bool per_shape = true;  ///< false: figures of no shape (measurements, catalogue, KV memory)
};

// A step_time section with the scheduler beside it (as sim/scenario.cpp builds it).
std::function<void(const StepShape&, Figures&)> model_figures(const Cfg& section,
                                                              const std::optional<Cfg>& scheduler) {
  std::unique_ptr<StepTimeModel> built = make_step_time_model(section);
  if (scheduler) built = apply_engine_host(*scheduler, section, std::move(built));
  std::shared_ptr<StepTimeModel> m = std::move(built);
  return [m](const StepShape& s, Figures& out) { figures_of(*m, s, out); };
}

std::optional<Cfg> scheduler_of(const Cfg& owner, const Cfg& root) {
  if (owner.has("scheduler")) return owner.child("scheduler");
  if (root.has("scheduler")) return root.child("scheduler");
  return std::nullopt;
}

// What the model of `section` (with `scheduler`) depends on, to build each distinct one once:
// the section as written, the folder its paths are relative to, and the scheduler's host-time
// and CUDA-graph keys.
std::string identity(const Cfg& section, const YAML::Node& node,
                     const std::optional<Cfg>& scheduler) {
  YAML::Emitter e;
  e << node;
  std::string id = section.doc().base_dir() + "\n" + e.c_str();
  if (scheduler)
    for (const char* k :
         {"kind", "version", "max_num_seqs", "async_scheduling", "enable_overlap_schedule",
          "disable_overlap_scheduler", "host_time", "cuda_graphs"})
      if (scheduler->has(k)) {
        YAML::Emitter v;
        v << scheduler->node(k);
        id += fmt::format("\n{}: {}", k, v.c_str());
      }
  return id;
}

// The step_time sections of the shipped configs, in path order, each distinct one once (named
// after the first config that holds it).
void shipped(std::vector<Entry>& out) {
  std::set<std::string> built;
  const auto add = [&](const std::string& name, const Cfg& section, const YAML::Node& node,
                       const std::optional<Cfg>& scheduler) {
    if (built.insert(identity(section, node, scheduler)).second)
      out.push_back({name, model_figures(section, scheduler)});
  };
  const fs::path configs = k_root / "configs";
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(configs); it != fs::end(it); ++it) {
    const fs::path rel = fs::relative(it->path(), configs);
    const std::string top = rel.begin()->string();
    if (it->is_directory() &&
        (top == "models" || top == "hardware" || top == "shape-roofline" || top == "sweeps")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".yaml") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const std::string name = fs::relative(f, k_root).generic_string();
    const auto doc = Document::load_file(f.string());
    const Cfg root = Cfg::root(doc);
    if (root.has("kind")) {  // a step_time section of its own (configs/step_times/)
      add(name, root, doc->root(), std::nullopt);
      continue;
    }
    if (!root.has("step_time")) continue;
    if (root.is_scalar("step_time")) {
      const auto sdoc =
          Document::load_file(root.existing_file("step_time", "step-time model file"));
      add(name, Cfg::root(sdoc), sdoc->root(), scheduler_of(root, root));
    } else {
      add(name, root.child("step_time"), root.node("step_time"), scheduler_of(root, root));
    }
    if (const auto cluster = root.optional_child("cluster"); cluster && cluster->has("pools")) {
      const std::vector<Cfg> pools = cluster->list_of_maps("pools");
      for (size_t i = 0; i < pools.size(); ++i)
        if (pools[i].has("step_time") && !pools[i].is_scalar("step_time"))
          add(fmt::format("{} pools[{}]", name, i), pools[i].child("step_time"),
              pools[i].node("step_time"), scheduler_of(pools[i], root));
    }
    if (const auto kv = root.optional_child("kv"); kv && kv->has("memory")) {
      const Cfg memory = kv->child("memory");
      if (built.insert("kv.memory\n" + identity(memory, kv->node("memory"), std::nullopt)).second) {
        const KvMemory k = read_kv_memory(memory);
        out.push_back({name + " kv.memory",
                       [k](const StepShape&, Figures& out_figs) {
                         out_figs.emplace_back("capacity_tokens",
                                               static_cast<double>(k.capacity_tokens));
                         out_figs.emplace_back("bytes_per_token", k.bytes_per_token);
                       },
                       false});
      }
    }
    if (const auto spec = root.optional_child("speculative")) {
      if (const auto p = spec->optional_child("proposer"); p && p->has("step_time"))
        add(name + " draft", p->child("step_time"), p->node("step_time"), std::nullopt);
    }
  }
}

// Sections no shipped config holds: each written as a scenario's step_time (and scheduler)
// with paths relative to tests/models/.
const std::vector<std::pair<std::string, std::string>>& extra_sections() {
  static const std::vector<std::pair<std::string, std::string>> k{
      {"operator a100 vllm llama-3.1-8b",
       "step_time: {kind: operator, model: llama-3.1-8b, hardware: a100-80gb, operators: {source: "
       "tables, path: ../../data/timings/aiconfigurator, gpu: a100_sxm, engine: vllm}}"},
      {"operator a100 trtllm llama-2-13b tp2 int8_wo",
       "step_time: {kind: operator, model: llama-2-13b, hardware: a100-80gb, tensor_parallel: 2, "
       "weight_dtype: int8_wo, operators: {source: tables, path: "
       "../../data/timings/aiconfigurator, gpu: a100_sxm, engine: trtllm}}"},
      {"operator a100 tables for a100-40gb scaled",
       "step_time: {kind: operator, model: llama-3.1-8b, hardware: a100-40gb, operators: {source: "
       "tables, path: ../../data/timings/aiconfigurator, gpu: a100_sxm, engine: vllm-0.14.0, "
       "scale_to_hardware: true}}"},
      {"operator b200 vllm llama-3.1-70b tp4 fp8",
       "step_time: {kind: operator, model: llama-3.1-70b, hardware: b200, tensor_parallel: 4, "
       "weight_dtype: fp8, kv_dtype: fp8, operators: {source: tables, path: "
       "../../data/timings/aiconfigurator, gpu: b200_sxm, engine: vllm}}"},
      {"operator b200 trtllm llama-3.1-8b nvfp4",
       "step_time: {kind: operator, model: llama-3.1-8b, hardware: b200, weight_dtype: nvfp4, "
       "operators: {source: tables, path: ../../data/timings/aiconfigurator, gpu: b200_sxm, "
       "engine: trtllm}}"},
      {"operator h200 vllm qwen3-30b-a3b tp2 ep2",
       "step_time: {kind: operator, model: qwen3-30b-a3b, hardware: h200, tensor_parallel: 2, "
       "expert_parallel: 2, operators: {source: tables, path: ../../data/timings/aiconfigurator, "
       "gpu: h200_sxm, engine: vllm}}"},
      {"operator h200 trtllm deepseek-v3 tp8 fp8_block",
       "step_time: {kind: operator, model: deepseek-v3, hardware: h200, tensor_parallel: 8, "
       "weight_dtype: fp8_block, moe_distribution: balanced, operators: {source: tables, path: "
       "../../data/timings/aiconfigurator, gpu: h200_sxm, engine: trtllm}}"},
      {"operator h100 vllm mixtral-8x22b tp8",
       "step_time: {kind: operator, model: mixtral-8x22b, hardware: h100-sxm, tensor_parallel: 8, "
       "weight_dtype: fp8, operators: {source: tables, path: ../../data/timings/aiconfigurator, "
       "gpu: h100_sxm, engine: vllm}}"},
      {"operator h100 trtllm llama-2-7b nccl",
       "step_time: {kind: operator, model: llama-2-7b, hardware: h100-sxm, tensor_parallel: 2, "
       "operators: {source: tables, path: ../../data/timings/aiconfigurator, gpu: h100_sxm, "
       "engine: trtllm, allreduce: nccl}}"},
      {"operator a100 vllm opt-13b tp2 plain mlp",
       "step_time: {kind: operator, model: opt-13b, hardware: a100-80gb, tensor_parallel: 2, "
       "operators: {source: tables, path: ../../data/timings/aiconfigurator, gpu: a100_sxm, "
       "engine: vllm}}"},
      {"operator l40s vllm-0.24.0 qwen3-8b",
       "step_time: {kind: operator, model: qwen3-8b, hardware: l40s, operators: {source: tables, "
       "path: ../../data/timings/aiconfigurator, gpu: l40s, engine: vllm-0.24.0}}"},
      {"operator l40s trtllm llama-2-70b tp4",
       "step_time: {kind: operator, model: llama-2-70b, hardware: l40s, tensor_parallel: 4, "
       "weight_dtype: fp8, operators: {source: tables, path: ../../data/timings/aiconfigurator, "
       "gpu: l40s, engine: trtllm}}"},
      {"operator rtxpro6000 trtllm qwen3-32b tp2 link",
       "step_time: {kind: operator, model: qwen3-32b, hardware: rtx-pro-6000, tensor_parallel: 2, "
       "operators: {source: tables, path: ../../data/timings/aiconfigurator, gpu: "
       "rtx_pro_6000_server, engine: trtllm, allreduce: link, link_efficiency: 0.5, "
       "link_latency_us: 10}}"},
      {"operator rtxpro6000 vllm mistral-7b lm_head fp8 overhead",
       "step_time: {kind: operator, model: mistral-7b, hardware: rtx-pro-6000, weight_dtype: fp8, "
       "lm_head_dtype: fp8, overhead_ms: 0.25, operators: {source: tables, path: "
       "../../data/timings/aiconfigurator, gpu: rtx_pro_6000_server, engine: vllm}}"},
      {"operator shape roofline mi325x qwen3-235b-a22b tp8",
       "step_time: {kind: operator, model: qwen3-235b-a22b, hardware: mi325x, tensor_parallel: 8, "
       "weight_dtype: fp8, operators: {source: roofline, fit: fit-without-h100_sxm}}"},
      {"operator shape roofline l4 llama-3.1-8b",
       "step_time: {kind: operator, model: llama-3.1-8b, hardware: l4, operators: {source: "
       "roofline}}"},
      {"operator h100 vllm llama-3.1-70b tp2 pp2 micro_batches",
       "step_time: {kind: operator, model: llama-3.1-70b, hardware: h100-sxm, tensor_parallel: 2, "
       "pipeline_parallel: 2, pipeline_schedule: micro_batches, operators: {source: tables, path: "
       "../../data/timings/aiconfigurator, gpu: h100_sxm, engine: vllm}}"},
      {"operator h100 vllm qwen3-30b-a3b dp4 ep4 overlap",
       "step_time: {kind: operator, model: qwen3-30b-a3b, hardware: h100-sxm, data_parallel: 4, "
       "expert_skew: 1.5, two_batch_overlap: true, gpus_per_node: 2, operators: {source: tables, "
       "path: ../../data/timings/aiconfigurator, gpu: h100_sxm, engine: vllm}}"},
      {"operator h100 vllm qwen3-30b-a3b dp16 one 16-GPU node fp8 dispatch",
       "step_time: {kind: operator, model: qwen3-30b-a3b, hardware: h100-sxm, data_parallel: 16, "
       "gpus_per_node: 16, dispatch_dtype: fp8, operators: {source: tables, path: "
       "../../data/timings/aiconfigurator, "
       "gpu: h100_sxm, engine: vllm}}"},
      {"operator shape roofline l4 tp2 on a 0.5 GB/s link",
       "step_time: {kind: operator, model: llama-3.1-8b, hardware: "
       "../data/step_grid/l4-slow-link.yaml, "
       "tensor_parallel: 2, operators: {source: roofline}}"},
      {"roofline deepseek-v3 h200 tp8 fp8",
       "step_time: {kind: roofline, model: deepseek-v3, hardware: h200, tensor_parallel: 8, "
       "weight_dtype: fp8}"},
      {"roofline mixtral-8x7b a100-80gb tp2",
       "step_time: {kind: roofline, model: mixtral-8x7b, hardware: a100-80gb, tensor_parallel: 2, "
       "bandwidth_efficiency: 0.7, compute_efficiency: 0.5}"},
      {"roofline qwen3-235b-a22b b200 tp4 fp8",
       "step_time: {kind: roofline, model: qwen3-235b-a22b, hardware: b200, tensor_parallel: 4, "
       "weight_dtype: fp8, kv_dtype: bf16}"},
      {"roofline llama-3.1-405b mi300x tp8 fp8 pp2",
       "step_time: {kind: roofline, model: llama-3.1-405b, hardware: mi300x, tensor_parallel: 4, "
       "pipeline_parallel: 2, weight_dtype: fp8, pipeline_link_gb_per_s: 50, "
       "pipeline_link_latency_us: 5}"},
      {"roofline gpt2-small rtx-4090 fp32",
       "step_time: {kind: roofline, model: gpt2-small, hardware: rtx-4090, weight_dtype: fp32, "
       "overhead_ms: 0.1}"},
      {"roofline llama-2-7b l4 int4 kv fp8 compute fp16",
       "step_time: {kind: roofline, model: llama-2-7b, hardware: l4, weight_dtype: int4, kv_dtype: "
       "fp8, compute_dtype: fp16}"},
      {"roofline codellama-34b apple-m3-max int8",
       "step_time: {kind: roofline, model: codellama-34b, hardware: apple-m3-max, weight_dtype: "
       "int8, compute_dtype: fp16, cpu_overhead: {per_step_ms: 0.5, per_sequence_ms: 0.01}}"},
      {"roofline qwen3-14b l40s tp2 pp3 micro_batches",
       "step_time: {kind: roofline, model: qwen3-14b, hardware: l40s, tensor_parallel: 2, "
       "pipeline_parallel: 3, pipeline_schedule: micro_batches}"},
      {"layer_profile rtxpro6000 llama skew_alpha profile",
       "step_time: {kind: layer_profile, path: "
       "../../data/timings/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1, layers: "
       "32, skew_alpha: profile, overhead_ms: 0.3}"},
      {"layer_profile rtxpro6000 llama skew 0.4 tp2 link",
       "step_time: {kind: layer_profile, path: "
       "../../data/timings/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1, layers: "
       "32, skew_alpha: 0.4, tensor_parallel: 2, hidden_size: 4096, link_gb_per_s: 32, "
       "link_latency_us: 8, activation_bytes: 4}"},
      {"layer_profile rtxpro6000 qwen3-30b-a3b ep4",
       "step_time: {kind: layer_profile, path: "
       "../../data/timings/llmservingsim/perf/RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16/"
       "tp1, layers: 48, experts: 128, experts_per_token: 8, expert_parallel: 4, data_parallel: 4, "
       "hidden_size: 2048, link_gb_per_s: 16}"},
      {"layer_profile moe fixture tp2",
       "step_time: {kind: layer_profile, path: ../data/llmservingsim-moe/tp2, layers: 4, "
       "tensor_parallel: 2, hidden_size: 2048, link_gb_per_s: 16}"},
      {"layer_profile fixture tp1 cpu_overhead",
       "step_time: {kind: layer_profile, path: ../data/llmservingsim-tp1, layers: 8, cpu_overhead: "
       "{per_sequence_ms: 0.02}}"},
      {"layer_profile rtxpro6000 qwen3-30b-a3b top-16",
       "step_time: {kind: layer_profile, path: "
       "../../data/timings/llmservingsim/perf/RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16/"
       "tp1, layers: 48, experts: 128, experts_per_token: 16}"},
      {"host vllm max_num_seqs 8 cheap linear",
       "step_time: {kind: linear, base_ms: 0.1, per_prefill_token_ms: 0.001}\nscheduler: {kind: "
       "vllm, max_num_seqs: 8, cuda_graphs: {layers: 40}}"},
      {"host vllm cheap linear",
       "step_time: {kind: linear, base_ms: 0.1, per_prefill_token_ms: 0.001}\nscheduler: {kind: "
       "vllm, host_time: true, cuda_graphs: {layers: 40}}"},
      {"linear every term",
       "step_time: {kind: linear, base_ms: 1.5, per_seq_ms: 0.02, per_context_token_ms: 0.00001, "
       "per_prefill_token_ms: 0.003, per_prefill_token_sq_ms: 0.0000001, "
       "per_mixed_context_token_ms: 0.000002, per_token_above_knee_ms: 0.004, knee_tokens: 300}"},
      {"table points",
       "step_time: {kind: table, points: [{batch: 1, ms: 6}, {batch: 8, ms: 7.5}, {batch: 64, ms: "
       "12}, {batch: 256, ms: 30}], prefill_ms_per_token: 0.02}"},
      {"host vllm 0.7 V0 max_num_seqs 100",
       "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}\nscheduler: {kind: "
       "vllm, version: '0.7.3', max_num_seqs: 100, host_time: true}"},
      {"host vllm 0.10 async",
       "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}\nscheduler: {kind: "
       "vllm, version: '0.10.1', async_scheduling: true, host_time: true}"},
      {"host vllm max_num_seqs 200 graphs only",
       "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}\nscheduler: {kind: "
       "vllm, max_num_seqs: 200, cuda_graphs: true}"},
      {"host vllm graph map no padding",
       "step_time: {kind: linear, base_ms: 2, per_seq_ms: 0.01, per_prefill_token_ms: "
       "0.001}\nscheduler: {kind: vllm, host_time: {schedule: {per_step_ms: 0.2, per_seq_ms: "
       "0.002}, sample: {per_step_ms: 0.1}}, cuda_graphs: {capture_sizes: [1, 2, 4, 8, 16, 32], "
       "enable_padding: false, eager_launch_us_per_layer: 30, layers: 10}}"},
      {"host vllm graphs off",
       "step_time: {kind: roofline, model: qwen3-8b, hardware: h100-sxm}\nscheduler: {kind: vllm, "
       "host_time: true, cuda_graphs: false}"},
      {"host sglang",
       "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}\nscheduler: {kind: "
       "sglang, host_time: true}"},
      {"host sglang 0.3 no overlap",
       "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}\nscheduler: {kind: "
       "sglang, version: '0.3.6', host_time: true}"},
      {"host trtllm 1.0 no overlap",
       "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}\nscheduler: {kind: "
       "trtllm, version: '1.0.0', disable_overlap_scheduler: true, host_time: true}"},
      {"host trtllm 0.20 components",
       "step_time: {kind: roofline, model: llama-3.1-8b, hardware: h100-sxm}\nscheduler: {kind: "
       "trtllm, version: '0.20.0', host_time: {prepare_inputs: {per_step_ms: 0.3, per_seq_ms: "
       "0.004}, process_outputs: {per_step_ms: 0.1}}}"},
      {"host layer_profile dp2 vllm async",
       "step_time: {kind: layer_profile, path: "
       "../../data/timings/llmservingsim/perf/RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16/"
       "tp1, layers: 48, experts: 128, experts_per_token: 8, data_parallel: 2, hidden_size: 2048, "
       "link_gb_per_s: 16}\nscheduler: {kind: vllm, async_scheduling: true, host_time: true}"},
  };
  return k;
}

void extras(std::vector<Entry>& out) {
  for (const auto& [name, yaml] : extra_sections()) {
    const auto doc =
        std::make_shared<Document>(yaml, (k_root / "tests/models/step_grid.yaml").string());
    const Cfg root = Cfg::root(doc);
    out.push_back({name, model_figures(root.child("step_time"), scheduler_of(root, root))});
  }
}

// The fitted forms (servesim calibrate) over the repository's measurements.
void fitted(std::vector<Entry>& out) {
  struct Set {
    std::string name, path, format;
    MeasurementFilter filter;
  };
  std::vector<Set> sets;
  {
    MeasurementFilter f;
    f.model = "llama2-70b";
    f.hardware = "h100-80gb";
    f.tp = 4;
    sets.push_back({"splitwise llama2-70b h100 tp4",
                    (k_root / "data/timings/splitwise/perf_model.csv.gz").string(), "splitwise",
                    f});
  }
  {
    MeasurementFilter f;
    f.layers = 32;
    sets.push_back(
        {"layer profile rtxpro6000 llama-3.1-8b",
         (k_root / "data/timings/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1")
             .string(),
         "llmservingsim", f});
  }
  {
    MeasurementFilter f;
    f.layers = 2;
    sets.push_back({"vidur fixture a100", (k_root / "tests/data/vidur-a100").string(), "vidur", f});
  }
  for (const Set& set : sets) {
    const auto ms =
        std::make_shared<MeasurementSet>(read_measurements(set.path, set.format, set.filter));
    out.push_back(
        {set.name + " measurements",
         [ms](const StepShape&, Figures& f) {
           f.emplace_back("samples", static_cast<double>(ms->samples.size()));
           double sum = 0;
           for (const StepSample& s : ms->samples) sum += s.ms;
           f.emplace_back("sum_ms", sum);
           if (ms->cpu_overhead) {
             f.emplace_back("overhead.per_step_ms", ms->cpu_overhead->overhead.per_step_ms);
             f.emplace_back("overhead.per_sequence_ms", ms->cpu_overhead->overhead.per_sequence_ms);
           }
         },
         false});
    const std::pair<const char*, std::unique_ptr<FittedModel> (*)(const std::vector<StepSample>&)>
        forms[] = {{"linear", &fit_linear}, {"hinge", &fit_hinge}, {"table", &fit_table}};
    for (const auto& [form, fit] : forms) {
      std::shared_ptr<FittedModel> m = fit(ms->samples);
      out.push_back({fmt::format("{} fit {}", set.name, form), [m](const StepShape& s, Figures& f) {
                       f.emplace_back("ms", m->predict_ms(s));
                     }});
    }
  }
}

// The catalogue's figures a step model reads (every model's weight and KV bytes in every dtype,
// every chip's bandwidth, memory and peaks), and the KV capacity `kv.memory` gives: the shipped
// configs' sections, every catalogue model on a group of eight B200s, and the explicit forms.
void catalogue(std::vector<Entry>& out) {
  for (const std::string& name : model_names()) {
    const auto m = std::make_shared<ModelSpec>(load_model(name));
    out.push_back({"catalogue model " + name,
                   [m](const StepShape&, Figures& f) {
                     for (const std::string& d : dtype_names()) {
                       const Dtype t = *parse_dtype(d);
                       f.emplace_back("weight_bytes " + d, m->weight_bytes(t));
                       f.emplace_back("active_weight_bytes " + d, m->active_weight_bytes(t));
                       f.emplace_back("kv_bytes_per_token " + d, m->kv_bytes_per_token(t));
                     }
                     f.emplace_back("routed_expert_parameters", m->routed_expert_parameters());
                     f.emplace_back("moe_layers", static_cast<double>(m->moe_layers()));
                   },
                   false});
  }
  for (const std::string& name : hardware_names()) {
    const auto h = std::make_shared<HardwareSpec>(load_hardware(name));
    out.push_back({"catalogue hardware " + name,
                   [h](const StepShape&, Figures& f) {
                     f.emplace_back("bandwidth_bytes_per_s", h->bandwidth_bytes_per_s());
                     f.emplace_back("memory_bytes", h->memory_bytes());
                     f.emplace_back("reported_memory_bytes", h->reported_memory_bytes());
                     for (const std::string& d : dtype_names())
                       f.emplace_back("peak_flops_per_s " + d,
                                      h->peak_flops_per_s(*parse_dtype(d)).value_or(-1.0));
                   },
                   false});
  }
  std::vector<std::pair<std::string, std::string>> sections;
  for (const std::string& name : model_names())
    for (const char* form : {"tensor_parallel: 8, weight_dtype: fp8, kv_dtype: fp8",
                             "tensor_parallel: 4, weight_dtype: nvfp4, utilization: 0.85, "
                             "reserved_gib: 3",
                             "tensor_parallel: 16, free_gpu_memory_fraction: 0.5"})
      sections.emplace_back(fmt::format("kv.memory {} b200 {}", name, form),
                            fmt::format("{{model: {}, hardware: b200, {}}}", name, form));
  sections.emplace_back("kv.memory explicit figures",
                        "{accelerator_gib: 24, parameters: 7.2e9, layers: 32, kv_heads: 8, "
                        "head_dim: 128, weight_dtype: int4_wo, kv_dtype: fp8, "
                        "free_gpu_memory_fraction: 0.85, reserved_gib: 1.5}");
  sections.emplace_back(
      "kv.memory replicated KV heads",
      "{accelerator_gib: 80, utilization: 0.9, parameters: 70.6e9, layers: 80, "
      "kv_heads: 8, head_dim: 128, tensor_parallel: 32, weight_dtype: fp8_block}");
  for (const auto& [name, yaml] : sections) {
    const auto doc = std::make_shared<Document>(yaml, (k_root / "tests/models/grid.yaml").string());
    double capacity = -1, bytes = -1;  // -1: refused (no room, or a split the heads refuse)
    try {
      const KvMemory kv = read_kv_memory(Cfg::root(doc));
      capacity = static_cast<double>(kv.capacity_tokens);
      bytes = kv.bytes_per_token;
    } catch (const InputError&) {
    }
    out.push_back({name,
                   [capacity, bytes](const StepShape&, Figures& f) {
                     f.emplace_back("capacity_tokens", capacity);
                     f.emplace_back("bytes_per_token", bytes);
                   },
                   false});
  }
}

// Twelve significant digits: a rounding error of 5e-13, far inside the 1e-9 compared.
std::string number(double x) { return fmt::format("{:.12g}", x); }

}  // namespace

TEST_CASE("step models: every model's figures over the shape grid match the pinned answers",
          "[models][step-grid]") {
  std::vector<Entry> entries;
  shipped(entries);
  extras(entries);
  fitted(entries);
  catalogue(entries);
  const std::vector<NamedShape> grid = shapes();

  // Keyed "entry \t shape \t figure", in the order computed.
  std::vector<std::pair<std::string, double>> now;
  Figures figs;
  for (const Entry& e : entries) {
    for (const NamedShape& s : grid) {
      figs.clear();
      e.figures(s.shape, figs);
      for (const auto& [fig, value] : figs) {
        if (fig == "cost.step_ms" && value == figs.front().second) continue;  // as it should be
        // The peaks are the chip's: pinned at the first shape.
        if (fig.starts_with("peak_") && &s != &grid.front()) continue;
        now.emplace_back(fmt::format("{}\t{}\t{}", e.name, e.per_shape ? s.name : "-", fig), value);
      }
      if (!e.per_shape) break;  // not a function of the shape
    }
  }

  if (std::getenv("SERVESIM_REWRITE_STEP_GRID") != nullptr) {
    std::ofstream f(k_golden, std::ios::binary);
    f << "# step-model answer grid: tests/models/step_grid_test.cpp; rewrite with\n"
         "# SERVESIM_REWRITE_STEP_GRID=1 build/tests/servesim_tests \"[step-grid]\"\n";
    // One "@ entry" line, then "shape \t figure \t value" lines for that entry.
    std::string entry;
    for (const auto& [key, value] : now) {
      const size_t tab = key.find('\t');
      if (key.compare(0, tab, entry) != 0 || entry.size() != tab) {
        entry = key.substr(0, tab);
        f << "@ " << entry << '\n';
      }
      f << key.substr(tab + 1) << '\t' << number(value) << '\n';
    }
    WARN("rewrote " << k_golden.string() << ": " << now.size() << " figures");
    return;
  }

  std::ifstream in(k_golden, std::ios::binary);
  REQUIRE(in.good());
  std::map<std::string, double> pinned;
  std::string line, entry;
  size_t unreadable = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.starts_with("@ ")) {
      entry = line.substr(2);
      continue;
    }
    const size_t tab = line.rfind('\t');
    if (tab == std::string::npos) {
      ++unreadable;
      continue;
    }
    pinned[entry + '\t' + line.substr(0, tab)] = std::strtod(line.c_str() + tab + 1, nullptr);
  }
  CHECK(unreadable == 0);

  std::vector<std::string> moved;
  std::map<std::string, bool> seen;
  for (const auto& [key, value] : now) {
    seen[key] = true;
    const auto it = pinned.find(key);
    if (it == pinned.end()) {
      moved.push_back(fmt::format("{}: new figure {}", key, number(value)));
      continue;
    }
    const double old = it->second;
    const bool same = old == value || std::abs(value - old) <= 1e-9 * std::abs(old);
    if (!same) moved.push_back(fmt::format("{}: {} -> {}", key, number(old), number(value)));
  }
  for (const auto& [key, value] : pinned)
    if (!seen.count(key)) moved.push_back(fmt::format("{}: gone (was {})", key, number(value)));

  std::string report;
  for (size_t i = 0; i < moved.size() && i < 40; ++i) report += moved[i] + "\n";
  INFO(moved.size() << " of " << now.size() << " figures moved (model, shape, figure: old -> new;"
                    << " rewrite: docs/testing.md, \"Seventh round\"):\n"
                    << report);
  CHECK(moved.empty());
  CHECK(now.size() == pinned.size());
}

}  // namespace t_models_step_grid_test
