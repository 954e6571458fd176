#include "models/kv_memory.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/capacity_error.h"
#include "core/units.h"
#include "models/catalog.h"

namespace servesim {
namespace {

constexpr double k_gib = 1073741824.0;
constexpr int64_t k_max_capacity_tokens = int64_t{1} << 50;  // as kv.capacity_tokens

/// The figures the arithmetic needs, all per accelerator of the group.
struct KvMemoryFigures {
  double device_bytes = 0;   ///< memory the device reports
  double utilization = 0.9;  ///< the share of it the server may use, (0, 1]
  /// TensorRT-LLM's free_gpu_memory_fraction: the KV pool is this share of what the weights and
  /// the reserve leave (utilization is then 1). Unset: utilization applies.
  std::optional<double> free_fraction;
  double weight_bytes = 0;        ///< weights on one accelerator (all of them / tensor_parallel)
  double reserved_bytes = 0;      ///< activations, CUDA graphs, workspace: taken before the KV pool
  double kv_bytes_per_token = 0;  ///< one token's K and V on one accelerator
};

/// Cfg::fail's message, thrown as a CapacityError: the memory cannot hold the deployment (a
/// sizing sweep marks the point infeasible rather than stopping).
[[noreturn]] void fail_capacity(const Cfg& m, const std::string& key, const std::string& why) {
  try {
    m.fail(key, why);
  } catch (const CapacityError&) {
    throw;
  } catch (const InputError& e) {
    throw CapacityError(e.what());
  }
}

// The explicit figures that `model:` stands for.
const std::vector<std::string> k_model_keys{"head_dim", "kv_heads", "layers", "parameters"};

/// The model's shape, from the catalogue or from the explicit keys.
struct Shape {
  double parameters = 0;
  int64_t layers = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t mla_latent = 0;        ///< MLA: the cached latent and rotary key a layer; 0 otherwise
  double expert_parameters = 0;  ///< the routed experts' weights (a catalogue MoE model)
  std::string key;               ///< where a weights error points: "model" or "parameters"
};

Shape read_shape(const Cfg& m) {
  if (!m.has("model") && !m.has("parameters")) (void)m.one_of({"model", "parameters"});
  if (!m.has("model")) {
    Shape s;
    s.parameters = plausible_real(m, "parameters", units::k_parameters);
    s.layers = m.get_int("layers", {1, 100000});
    s.kv_heads = m.get_int("kv_heads", {1, 100000});
    s.head_dim = m.get_int("head_dim", {1, 100000});
    s.key = "parameters";
    return s;
  }
  const ModelSpec spec = read_model(m, "model");
  for (const std::string& k : k_model_keys)
    if (m.has(k))
      m.fail(k, fmt::format("given with {} (\"{}\", whose catalogue entry already says it): give "
                            "the model's name or its figures, not both",
                            m.key_path("model"), spec.name));
  return {static_cast<double>(spec.parameters),
          spec.layers,
          spec.kv_heads,
          spec.head_dim,
          spec.is_mla() ? spec.mla.latent() : 0,
          spec.routed_expert_parameters(),
          "model"};
}

/// The device memory in bytes and how to name it in messages.
std::pair<double, std::string> read_device(const Cfg& m) {
  if (!m.has("hardware") && !m.has("accelerator_gib"))
    (void)m.one_of({"accelerator_gib", "hardware"});
  if (!m.has("hardware"))
    return {plausible_real(m, "accelerator_gib", units::k_accelerator_gib) * k_gib,
            "accelerator_gib"};
  const HardwareSpec hw = read_hardware(m, "hardware");
  if (m.has("accelerator_gib"))
    m.fail("accelerator_gib",
           fmt::format("given with {} (\"{}\", which reports {} GiB): give the hardware's name or "
                       "its memory, not both",
                       m.key_path("hardware"), hw.name, hw.memory_gib));
  return {hw.reported_memory_bytes(), fmt::format("{}'s memory_gib of {}", hw.name, hw.memory_gib)};
}

double read_dtype_bytes(const Cfg& m, const std::string& key) {
  return dtype_bytes(read_dtype(m, key, Dtype::Fp16));
}

/// A way of storing weights and what one parameter takes in it, scales included.
struct WeightFormat {
  const char* name;
  double bytes_per_parameter;
};

// The catalogue's dtypes, then the 4-bit floats and the operator model's GEMM variants, so that
// a sweep's weight_dtype axis (which sets step_time.weight_dtype and kv.memory.weight_dtype
// together) is accepted by both. nvfp4 stores a 4-bit value per weight plus one fp8 (E4M3) scale
// per block of 16: 0.5 + 1 / 16 = 0.5625 bytes (its one fp32 scale per tensor is left out);
// fp4 is the 4-bit values alone, 0.5 bytes. fp8_block's fp32 scale per 128 x 128 block adds
// 1/4,096 of a byte and is left out, as are int4_wo's and sq's per-group or per-channel scales.
constexpr std::array<WeightFormat, 12> k_weight_formats{{{"fp32", 4.0},
                                                         {"bf16", 2.0},
                                                         {"fp16", 2.0},
                                                         {"fp8", 1.0},
                                                         {"int8", 1.0},
                                                         {"int4", 0.5},
                                                         {"fp4", 0.5},
                                                         {"nvfp4", 0.5625},
                                                         {"fp8_block", 1.0},
                                                         {"int8_wo", 1.0},
                                                         {"int4_wo", 0.5},
                                                         {"sq", 1.0}}};

double read_weight_bytes(const Cfg& m) {
  return *kv_memory_weight_bytes(m.get_choice("weight_dtype", "fp16", kv_memory_weight_dtypes()));
}

}  // namespace

const std::vector<std::string>& kv_memory_weight_dtypes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const WeightFormat& f : k_weight_formats) out.emplace_back(f.name);
    return out;
  }();
  return names;
}

std::optional<double> kv_memory_weight_bytes(const std::string& name) {
  for (const WeightFormat& f : k_weight_formats)
    if (name == f.name) return f.bytes_per_parameter;
  return std::nullopt;
}

double kv_bytes_per_token_per_accelerator(int64_t layers, int64_t kv_heads, int64_t head_dim,
                                          double dtype_bytes, int64_t tensor_parallel) {
  const int64_t heads = kv_heads >= tensor_parallel ? kv_heads / tensor_parallel : 1;
  return 2.0 * static_cast<double>(layers * heads * head_dim) * dtype_bytes;
}

KvMemory read_kv_memory(const Cfg& m) {
  const auto [device_bytes, device_name] = read_device(m);
  const Shape shape = read_shape(m);
  KvMemoryFigures f;
  f.device_bytes = device_bytes;
  if (m.has("free_gpu_memory_fraction")) {
    if (m.has("utilization"))
      m.fail("free_gpu_memory_fraction",
             "give utilization (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static: a "
             "share of the whole memory) or free_gpu_memory_fraction (TensorRT-LLM's: a share of "
             "the memory left after the weights and the reserve), not both");
    f.free_fraction = m.get_real("free_gpu_memory_fraction", {0.0, 1.0, true});
    f.utilization = 1.0;
  } else {
    f.utilization = m.get_real("utilization", 0.9, {0.0, 1.0, true});
  }
  const double wbytes = read_weight_bytes(m);
  const double kvbytes = read_dtype_bytes(m, "kv_dtype");
  const int64_t tp = m.get_int("tensor_parallel", 1, {1, 1024});
  f.reserved_bytes = plausible_real(m, "reserved_gib", 0.0, units::k_reserved_gib) * k_gib;
  // Data-parallel attention ranks (docs/expert-parallelism.md): each holds its own requests' KV
  // and a copy of the non-expert weights; the routed experts are spread over all of them.
  const int64_t dp = m.get_int("data_parallel", 1, {1, 1024});
  if (dp > 1 && shape.expert_parameters <= 0)
    m.fail("data_parallel",
           "only with a catalogue mixture-of-experts model (`model:`): its "
           "routed experts are what the ranks share");
  // MLA's latent is one "head" that every accelerator of a tensor-parallel group holds whole.
  if (shape.mla_latent == 0 &&
      (shape.kv_heads >= tp ? shape.kv_heads % tp != 0 : tp % shape.kv_heads != 0))
    m.fail("tensor_parallel",
           fmt::format("{} accelerators cannot share {} KV heads: tensor_parallel must divide the "
                       "KV heads, or be a multiple of them (each head is then replicated)",
                       tp, shape.kv_heads));
  // Pipeline stages (models/pipeline.h): each group of tp accelerators holds its stage's layers'
  // weights and KV; the largest stage, ceil(layers / pp) layers, bounds the tokens the replica
  // holds.
  const int64_t pp = m.get_int("pipeline_parallel", 1, {1, 1024});
  if (pp > shape.layers)
    m.fail("pipeline_parallel",
           fmt::format("more stages than the model's {} layers", shape.layers));
  const int64_t stage_layers = (shape.layers + pp - 1) / pp;
  f.weight_bytes = shape.parameters * wbytes / static_cast<double>(tp * pp);
  if (dp > 1)
    f.weight_bytes = ((shape.parameters - shape.expert_parameters) / static_cast<double>(tp) +
                      shape.expert_parameters / static_cast<double>(tp * dp)) *
                     wbytes / static_cast<double>(pp);
  f.kv_bytes_per_token = shape.mla_latent > 0
                             ? static_cast<double>(stage_layers * shape.mla_latent) * kvbytes
                             : kv_bytes_per_token_per_accelerator(stage_layers, shape.kv_heads,
                                                                  shape.head_dim, kvbytes, tp);

  // Per accelerator: weights and KV heads are split tp ways; capacity counts the whole group.
  const double usable = f.device_bytes * f.utilization;
  if (f.weight_bytes >= usable)
    fail_capacity(
        m, shape.key,
        fmt::format("the weights ({:.2f} GB{}) do not fit in {:.2f} GB usable "
                    "accelerator memory ({} x utilization {})",
                    f.weight_bytes / 1e9,
                    tp * pp > 1 ? fmt::format(" on each of {} accelerators", tp * pp) : "",
                    usable / 1e9, device_name, f.utilization));
  if (f.weight_bytes + f.reserved_bytes >= usable)
    fail_capacity(
        m, "reserved_gib",
        fmt::format("the reserve ({:.2f} GiB) and the weights ({:.2f} GiB) leave no room for "
                    "KV in {:.2f} GiB usable accelerator memory ({} x utilization {})",
                    f.reserved_bytes / k_gib, f.weight_bytes / k_gib, usable / k_gib, device_name,
                    f.utilization));
  const double pool_bytes =
      (usable - f.weight_bytes - f.reserved_bytes) * f.free_fraction.value_or(1.0);
  const double tokens =
      std::floor(pool_bytes / f.kv_bytes_per_token) * static_cast<double>(dp);  // every rank's
  if (tokens < 1) fail_capacity(m, shape.key, "no memory left for the KV cache after the weights");
  // The same bound as capacity_tokens; also keeps an absurd accelerator_gib (1e300, whose
  // usable memory overflows to infinity) from reaching the integer conversion.
  if (!(tokens <= static_cast<double>(k_max_capacity_tokens)))
    m.fail(m.has("hardware") ? "hardware" : "accelerator_gib",
           fmt::format("leaves room for {:.4g} KV tokens, more than the limit of {} (2^50)", tokens,
                       k_max_capacity_tokens));
  return {static_cast<int64_t>(tokens), f.kv_bytes_per_token};
}

}  // namespace servesim
