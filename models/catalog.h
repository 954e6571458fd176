#pragma once
// Model and hardware catalogues: the architecture figures of a model and the datasheet figures of
// an accelerator, each read from one YAML file (configs/models/NAME.yaml,
// configs/hardware/NAME.yaml; docs/hardware.md lists them).
//
// The catalogue files are embedded in the binary at build time, so a name works from any working
// directory; a user's own file is named by its path instead. Files are read through Cfg: an
// unknown key, a wrong type or an inconsistent figure throws InputError naming the file and line.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/config.h"

namespace servesim {

/// Number formats for weights, KV and arithmetic.
enum class Dtype : uint8_t { Fp32, Bf16, Fp16, Fp8, Int8, Int4 };
inline constexpr size_t k_dtype_count = 6;

/// "fp32", "bf16", "fp16", "fp8", "int8", "int4", in enum order.
[[nodiscard]] const std::vector<std::string>& dtype_names();
[[nodiscard]] const std::string& dtype_name(Dtype d);
/// Bytes per element: fp32 4, bf16 and fp16 2, fp8 and int8 1, int4 0.5.
[[nodiscard]] double dtype_bytes(Dtype d);
[[nodiscard]] std::optional<Dtype> parse_dtype(const std::string& name);
/// Reads `key` of `c` as a dtype name, `def` when absent; the message lists the valid names.
[[nodiscard]] Dtype read_dtype(const Cfg& c, const std::string& key, Dtype def);

/// Multi-head latent attention (DeepSeek-V2/V3, `attention: mla`): queries through a rank
/// q_lora_rank bottleneck, keys and values from one compressed latent of kv_lora_rank per token
/// plus a shared rotary key of qk_rope_head_dim; the KV cache stores that latent and rotary key
/// alone (docs/mla.md).
struct MlaSpec {
  int64_t q_lora_rank = 0;  ///< 0: the queries are projected directly from the hidden state
  int64_t kv_lora_rank = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t v_head_dim = 0;
  /// One token's cache entry in one layer, in elements: kv_lora_rank + qk_rope_head_dim.
  [[nodiscard]] int64_t latent() const { return kv_lora_rank + qk_rope_head_dim; }
};

/// How a model's attention stores K and V: one pair per query head (mha), per group of them
/// (gqa), one for all (mqa), or one compressed latent (mla).
enum class AttentionKind : uint8_t { Mha, Gqa, Mqa, Mla };

struct ModelSpec {
  std::string name;
  std::string source;  ///< the published config the figures come from
  int64_t layers = 0;
  int64_t hidden_size = 0;
  int64_t attention_heads = 0;
  int64_t kv_heads = 0;           ///< divides attention_heads (grouped-query attention)
  int64_t head_dim = 0;           ///< hidden_size / attention_heads unless given
  int64_t intermediate_size = 0;  ///< MLP width; per expert for a mixture of experts
  int64_t vocab_size = 0;
  int64_t parameters = 0;         ///< all weights
  int64_t active_parameters = 0;  ///< weights used for one token; == parameters when dense
  int64_t experts = 0;            ///< 0 for a dense model
  int64_t experts_per_token = 0;  ///< 0 for a dense model
  int64_t max_context_tokens = 0;
  AttentionKind attention = AttentionKind::Mha;  ///< `attention:`, else from kv_heads
  MlaSpec mla;                                   ///< `mla:`, with attention == Mla only
  int64_t dense_layers = 0;             ///< the first layers of a MoE model with a dense MLP
  int64_t dense_intermediate_size = 0;  ///< their MLP width
  int64_t shared_experts = 0;  ///< experts every token runs besides its routed ones, each layer
  /// `mlp: gated` (gate, up and down projections, SwiGLU: Llama and most models since) or
  /// `plain` (up and down with one activation between: GPT-2, OPT).
  bool gated_mlp = true;

  [[nodiscard]] bool is_moe() const { return experts > 0; }
  [[nodiscard]] bool is_mla() const { return attention == AttentionKind::Mla; }
  /// Layers with a mixture of experts: layers - dense_layers (0 for a dense model).
  [[nodiscard]] int64_t moe_layers() const { return is_moe() ? layers - dense_layers : 0; }
  /// The routed experts' weights: moe_layers x experts x 3 x hidden x intermediate (gate, up and
  /// down of each), the part that wide expert parallelism spreads over the group.
  [[nodiscard]] double routed_expert_parameters() const;
  /// Bytes of all weights stored as `d`.
  [[nodiscard]] double weight_bytes(Dtype d) const;
  /// Bytes of the weights one token uses (all of them for a dense model).
  [[nodiscard]] double active_weight_bytes(Dtype d) const;
  /// One token's K and V over all layers: 2 x layers x kv_heads x head_dim x bytes; with MLA the
  /// latent and rotary key, layers x (kv_lora_rank + qk_rope_head_dim) x bytes.
  [[nodiscard]] double kv_bytes_per_token(Dtype d) const;
};

/// The price tiers a hardware file may give, sorted: `on_demand` (every chip's on-demand list
/// price from one named source and date, so that "cheapest" means the same for every chip) and
/// `mixed` (the earlier figures, each from the source its file names).
[[nodiscard]] const std::vector<std::string>& price_tier_names();
/// The tier a sweep prices with unless it names another (`price_tier:`).
inline constexpr const char* k_default_price_tier = "on_demand";

/// One price of one accelerator for one hour.
struct PriceQuote {
  std::string tier;  ///< one of price_tier_names()
  double usd_per_hour = 0;
  std::string source;
  std::string date;
};

/// An accelerator's power draw (docs/hardware.md#power): its rated maximum (the board's TDP) and
/// what it draws between steps with a model loaded; metrics/energy.h turns these into joules.
struct PowerSpec {
  double idle_w = 0;        ///< >= 0, below peak_w
  double peak_w = 0;        ///< > 0: the datasheet's TDP (maximum board power)
  std::string source;       ///< where peak_w comes from
  std::string idle_source;  ///< where idle_w comes from, or the assumption it is
  std::string date;         ///< when the figures were read
};

/// `measured:` a chip's public microbenchmark figures beside those of the NVIDIA chips the shape
/// roofline's efficiency curves were fitted on, from one suite (docs/hardware.md#measured-figures).
/// The shape roofline moves this chip's datasheet by (share here) / (share on the references), so
/// that the NVIDIA-fitted curves carry NVIDIA's software efficiency only as far as the chip's own
/// measurements say.
struct MeasuredShares {
  double bandwidth_gb_per_s = 0;         ///< achieved memory bandwidth (a stream copy)
  double reference_bandwidth_share = 0;  ///< achieved / datasheet bandwidth on the references
  double matrix_tflops = 0;              ///< achieved dense GEMM throughput in `matrix_dtype`
  Dtype matrix_dtype = Dtype::Fp8;
  double reference_matrix_share = 0;  ///< achieved / datasheet GEMM throughput on the references
  std::string source;
};

struct HardwareSpec {
  std::string name;
  std::string source;    ///< the datasheet the figures come from
  double memory_gb = 0;  ///< decimal GB (10^9 bytes), as vendors state it (for display)
  /// The memory the device reports (nvidia-smi's total, in GiB): what a serving framework
  /// divides between weights, activations and the KV cache. Less than memory_gb x 10^9 / 2^30
  /// on most chips (an H100 SXM reports 81,559 MiB = 79.65 GiB, not 80).
  double memory_gib = 0;
  std::string tables;  ///< the AIConfigurator operator-table folder (h100_sxm...), or "none"
  double memory_bandwidth_gb_per_s = 0;
  std::array<double, k_dtype_count> peak_tflops{};  ///< dense peak by Dtype; 0: not supported
  double interconnect_gb_per_s = 0;                 ///< per accelerator, as the vendor states it
  std::vector<PriceQuote> prices;                   ///< by tier, in price_tier_names() order
  std::optional<PowerSpec> power;                   ///< `power:`; none: no energy figures
  std::optional<MeasuredShares> measured;           ///< `measured:`; none: datasheet only

  [[nodiscard]] double memory_bytes() const { return memory_gb * 1e9; }
  /// memory_gib in bytes: the figure KV capacity is computed from.
  [[nodiscard]] double reported_memory_bytes() const { return memory_gib * 1073741824.0; }
  /// The price in `tier`, or nullptr when the file gives none for it.
  [[nodiscard]] const PriceQuote* price(const std::string& tier) const;
  /// The price in `tier`; throws InputError naming the chip, the tier and the tiers it has.
  [[nodiscard]] const PriceQuote& require_price(const std::string& tier) const;
  [[nodiscard]] double bandwidth_bytes_per_s() const { return memory_bandwidth_gb_per_s * 1e9; }
  /// Dense peak FLOP/s (OP/s for integers) in `d`, or nullopt when the chip has none.
  [[nodiscard]] std::optional<double> peak_flops_per_s(Dtype d) const;
  /// The dtypes with a peak, in enum order.
  [[nodiscard]] std::vector<std::string> supported_dtypes() const;
};

/// Names of the embedded catalogue files, sorted.
[[nodiscard]] std::vector<std::string> model_names();
[[nodiscard]] std::vector<std::string> hardware_names();

/// Another name for a hardware catalogue entry (as data folders and other tools write it).
struct HardwareAlias {
  const char* alias;  ///< lower case, '-' between words
  const char* name;   ///< the catalogue entry
};
/// Every alias, in the table's order (docs/hardware.md#aliases). load_hardware and read_hardware
/// take them, and any name in other case or with '_' or ' ' for '-'.
[[nodiscard]] std::span<const HardwareAlias> hardware_aliases();

/// Parses and validates one catalogue file's text; `file` names it in messages. `origin`
/// shipped: an embedded catalogue file (core/config.h's TextOrigin).
[[nodiscard]] ModelSpec parse_model(const std::string& text, const std::string& file,
                                    TextOrigin origin = TextOrigin::input);
[[nodiscard]] HardwareSpec parse_hardware(const std::string& text, const std::string& file,
                                          TextOrigin origin = TextOrigin::input);

/// A catalogue name, or a path to a YAML file (one containing '/' or ending in .yaml or .yml;
/// a relative path is resolved against `base_dir`). Throws InputError for an unknown name (with
/// the close names and the valid ones), an unreadable file or a bad one.
[[nodiscard]] ModelSpec load_model(const std::string& name_or_path,
                                   const std::string& base_dir = ".");
[[nodiscard]] HardwareSpec load_hardware(const std::string& name_or_path,
                                         const std::string& base_dir = ".");

/// Reads `key` of `c` as a model (hardware) name or path; a relative path is resolved against
/// the config file's folder. An unknown name is reported at the key's file and line.
[[nodiscard]] ModelSpec read_model(const Cfg& c, const std::string& key);
[[nodiscard]] HardwareSpec read_hardware(const Cfg& c, const std::string& key);

}  // namespace servesim
