#include "models/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <sstream>

#include "core/units.h"
#include "models/embedded_catalog.h"

namespace servesim {
namespace {

constexpr double k_dtype_bytes[k_dtype_count] = {4.0, 2.0, 2.0, 1.0, 1.0, 0.5};

// Wide enough for any real model, narrow enough that products of counts stay exact in double.
constexpr IntRange k_dim{1, int64_t{1} << 24};
constexpr IntRange k_count{1, int64_t{1} << 50};
/// The longest context any model has is ~10M tokens.
constexpr IntRange k_context_tokens{1, 100'000'000};

// Other names of the hardware catalogue's entries: how the data folders (AIConfigurator's
// h100_sxm, Vidur's a100 and h100, LLMServingSim's RTX4090), other tools and people write them.
// A name is matched after lower-casing it and reading '_' and ' ' as '-', so "H100_SXM" is the
// catalogue's h100-sxm and "RTX_PRO_6000_SERVER" an alias below. docs/hardware.md#aliases lists
// them; tests/cli/hardware_aliases_test.cpp checks that each names a catalogue entry.
constexpr std::array<HardwareAlias, 32> k_hardware_aliases{{
    {"h100", "h100-sxm"},
    {"h100-80gb", "h100-sxm"},
    {"h100-sxm5", "h100-sxm"},
    {"h100-sxm-80gb", "h100-sxm"},
    {"nvidia-h100-80gb-hbm3", "h100-sxm"},
    {"h100-nvl-94gb", "h100-nvl"},
    {"nvidia-h100-nvl", "h100-nvl"},
    {"h200-sxm", "h200"},
    {"h200-141gb", "h200"},
    {"h200-nvl-141gb", "h200-nvl"},
    {"nvidia-h200-nvl", "h200-nvl"},
    {"b200-sxm", "b200"},
    {"nvidia-gb200", "gb200"},
    {"gb200-nvl72", "gb200"},
    {"gb200-nvl4", "gb200"},
    {"a100", "a100-80gb"},
    {"a100-80g", "a100-80gb"},
    {"a100-sxm", "a100-80gb"},
    {"a100-sxm4-80gb", "a100-80gb"},
    {"a100-40g", "a100-40gb"},
    {"a100-sxm4-40gb", "a100-40gb"},
    {"rtx4090", "rtx-4090"},
    {"4090", "rtx-4090"},
    {"geforce-rtx-4090", "rtx-4090"},
    {"rtxpro6000", "rtx-pro-6000"},
    {"rtx-pro-6000-server", "rtx-pro-6000"},
    {"rtx-pro-6000-blackwell", "rtx-pro-6000"},
    {"m3-max", "apple-m3-max"},
    {"l40s-48gb", "l40s"},
    {"instinct-mi355x", "mi355x"},
    {"amd-instinct-mi355x", "mi355x"},
    {"mi355x-288gb", "mi355x"},
}};

struct Catalogue {
  const char* what;    // "model"
  const char* folder;  // "models", under configs/
  std::span<const EmbeddedFile> files;
  std::span<const HardwareAlias> aliases;  ///< matched on the normalized name (see above)
};

Catalogue model_catalogue() { return {"model", "models", embedded_models(), {}}; }
Catalogue hardware_catalogue() {
  return {"hardware", "hardware", embedded_hardware(), k_hardware_aliases};
}

/// Lower case, with '_' and ' ' read as '-'.
std::string normalized_name(const std::string& s) {
  std::string n = s;
  for (char& ch : n) {
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (ch == '_' || ch == ' ') ch = '-';
  }
  return n;
}

/// The catalogue name `s` stands for: itself, its normalized form or an alias's target; ""
/// when none.
std::string resolve_name(const Catalogue& cat, const std::string& s) {
  for (const EmbeddedFile& f : cat.files)
    if (s == f.name) return s;
  if (cat.aliases.empty()) return "";
  const std::string n = normalized_name(s);
  for (const EmbeddedFile& f : cat.files)
    if (n == f.name) return n;
  for (const HardwareAlias& a : cat.aliases)
    if (n == a.alias) return a.name;
  return "";
}

std::vector<std::string> names_of(const Catalogue& cat) {
  std::vector<std::string> out;
  for (const EmbeddedFile& f : cat.files) out.emplace_back(f.name);
  return out;
}

bool looks_like_path(const std::string& s) {
  auto ends_with = [&](std::string_view suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return s.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml");
}

/// A catalogue file's text and its name for messages, or why it could not be found.
struct Located {
  std::string text;
  std::string file;
  std::string error;                      // empty on success
  TextOrigin origin = TextOrigin::input;  // shipped: an embedded file
};

Located locate(const Catalogue& cat, const std::string& s, const std::string& base_dir) {
  const std::string name = resolve_name(cat, s);
  for (const EmbeddedFile& f : cat.files)
    if (name == f.name)
      return {
          f.text, fmt::format("configs/{}/{}.yaml", cat.folder, f.name), {}, TextOrigin::shipped};
  if (!looks_like_path(s)) {
    const std::vector<std::string> names = names_of(cat);
    // Close to an alias: suggest the entry it stands for.
    std::vector<std::string> candidates = names;
    for (const HardwareAlias& a : cat.aliases) candidates.emplace_back(a.alias);
    std::string hint = did_you_mean(cat.aliases.empty() ? s : normalized_name(s), candidates);
    for (const HardwareAlias& a : cat.aliases)
      if (hint == fmt::format(" (did you mean {}?)", a.alias))
        hint = fmt::format(" (did you mean {}?)", a.name);
    return {
        {},
        {},
        fmt::format("unknown {} {}{} (valid: {}{}; or a path to a {} YAML file)", cat.what,
                    quote_input(s), hint, join_names(names),
                    cat.aliases.empty() ? "" : ", or an alias of one (docs/hardware.md#aliases)",
                    cat.what)};
  }
  std::filesystem::path p(s);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  const std::string path = p.lexically_normal().string();
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  if (!in || !std::filesystem::is_regular_file(p, ec))
    return {{},
            {},
            fmt::format("cannot open {} file {} (relative paths are resolved against {})", cat.what,
                        printable(path, 1024),
                        base_dir == "." ? "the current folder" : printable(base_dir, 1024))};
  std::stringstream ss;
  ss << in.rdbuf();
  return {ss.str(), path, {}};
}

/// `attention:` (mha, gqa, mqa, mla; the default from kv_heads), `mla:` with `attention: mla`,
/// and a MoE model's `dense_layers`, `dense_intermediate_size` and `shared_experts`.
void read_layer_kinds(const Cfg& c, ModelSpec& m) {
  const std::string derived = m.kv_heads == m.attention_heads ? "mha"
                              : m.kv_heads == 1               ? "mqa"
                                                              : "gqa";
  const std::string kind = c.get_choice("attention", derived, {"gqa", "mha", "mla", "mqa"});
  if (kind != "mla" && kind != derived)
    c.fail("attention", fmt::format("is {} but kv_heads ({}) and attention_heads ({}) make it {}",
                                    kind, m.kv_heads, m.attention_heads, derived));
  m.attention = kind == "mha"   ? AttentionKind::Mha
                : kind == "gqa" ? AttentionKind::Gqa
                : kind == "mqa" ? AttentionKind::Mqa
                                : AttentionKind::Mla;
  if (m.is_mla()) {
    const Cfg a = c.child("mla");
    m.mla.q_lora_rank = a.get_int("q_lora_rank", 0, {0, int64_t{1} << 24});
    m.mla.kv_lora_rank = a.get_int("kv_lora_rank", k_dim);
    m.mla.qk_rope_head_dim = a.get_int("qk_rope_head_dim", k_dim);
    m.mla.qk_nope_head_dim = a.get_int("qk_nope_head_dim", k_dim);
    m.mla.v_head_dim = a.get_int("v_head_dim", k_dim);
  } else if (c.has("mla")) {
    c.fail("mla", "only with attention: mla");
  }
  const std::optional<int64_t> dense = c.optional_int("dense_layers", {0, int64_t{1} << 24});
  const std::optional<int64_t> width = c.optional_int("dense_intermediate_size", k_dim);
  const std::optional<int64_t> shared = c.optional_int("shared_experts", {0, 1 << 20});
  if (m.experts == 0) {
    for (const char* k : {"dense_layers", "dense_intermediate_size", "shared_experts"})
      if (c.has(k)) c.fail(k, "only for a mixture of experts (no experts given)");
    return;
  }
  m.dense_layers = dense.value_or(0);
  if (m.dense_layers >= m.layers)
    c.fail("dense_layers", fmt::format("must be below layers ({})", m.layers));
  if (m.dense_layers > 0 && !width)
    c.fail("dense_layers", "give dense_intermediate_size, the dense layers' MLP width");
  m.dense_intermediate_size = width.value_or(0);
  m.shared_experts = shared.value_or(0);
}

/// Cross-field rules, each naming both values.
void validate_model(const Cfg& c, ModelSpec& m, bool head_dim_given) {
  if (m.attention_heads % m.kv_heads != 0)
    c.fail("kv_heads", fmt::format("must divide attention_heads ({}): each KV head serves a whole "
                                   "group of query heads",
                                   m.attention_heads));
  if (!head_dim_given) {
    if (m.hidden_size % m.attention_heads != 0)
      c.fail(
          "attention_heads",
          fmt::format("does not divide hidden_size ({}); give head_dim explicitly", m.hidden_size));
    m.head_dim = m.hidden_size / m.attention_heads;
  }
  if (m.active_parameters > m.parameters)
    c.fail("active_parameters", fmt::format("must be <= parameters ({})", m.parameters));
  if ((m.experts > 0) != (m.experts_per_token > 0))
    c.fail(m.experts > 0 ? "experts" : "experts_per_token",
           "a mixture of experts needs both experts and experts_per_token");
  if (m.experts_per_token > m.experts)
    c.fail("experts_per_token", fmt::format("must be <= experts ({})", m.experts));
  if (m.experts == 0 && m.active_parameters != m.parameters)
    c.fail("active_parameters", fmt::format("a dense model (no experts) uses all its parameters "
                                            "({}) for every token",
                                            m.parameters));
}

}  // namespace

// ---------------------------------------------------------------- dtypes

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names{"fp32", "bf16", "fp16", "fp8", "int8", "int4"};
  return names;
}

const std::string& dtype_name(Dtype d) { return dtype_names()[static_cast<size_t>(d)]; }

double dtype_bytes(Dtype d) { return k_dtype_bytes[static_cast<size_t>(d)]; }

std::optional<Dtype> parse_dtype(const std::string& name) {
  const auto& names = dtype_names();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<Dtype>(it - names.begin());
}

Dtype read_dtype(const Cfg& c, const std::string& key, Dtype def) {
  return *parse_dtype(c.get_choice(key, dtype_name(def), dtype_names()));
}

// ---------------------------------------------------------------- specs

double ModelSpec::weight_bytes(Dtype d) const {
  return static_cast<double>(parameters) * dtype_bytes(d);
}

double ModelSpec::active_weight_bytes(Dtype d) const {
  return static_cast<double>(active_parameters) * dtype_bytes(d);
}

double ModelSpec::routed_expert_parameters() const {
  return static_cast<double>(moe_layers()) * static_cast<double>(experts) * 3.0 *
         static_cast<double>(hidden_size) * static_cast<double>(intermediate_size);
}

double ModelSpec::kv_bytes_per_token(Dtype d) const {
  if (is_mla()) return static_cast<double>(layers * mla.latent()) * dtype_bytes(d);
  return 2.0 * static_cast<double>(layers * kv_heads * head_dim) * dtype_bytes(d);
}

std::optional<double> HardwareSpec::peak_flops_per_s(Dtype d) const {
  const double tflops = peak_tflops[static_cast<size_t>(d)];
  if (tflops <= 0) return std::nullopt;
  return tflops * 1e12;
}

std::vector<std::string> HardwareSpec::supported_dtypes() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < k_dtype_count; ++i)
    if (peak_tflops[i] > 0) out.push_back(dtype_names()[i]);
  return out;
}

ModelSpec parse_model(const std::string& text, const std::string& file, TextOrigin origin) {
  auto doc = std::make_shared<Document>(text, file, origin);
  const Cfg c = Cfg::root(doc);
  ModelSpec m;
  m.name = c.get_string("name");
  m.source = c.get_string("source");
  m.layers = c.get_int("layers", k_dim);
  m.hidden_size = c.get_int("hidden_size", k_dim);
  m.attention_heads = c.get_int("attention_heads", k_dim);
  m.kv_heads = c.get_int("kv_heads", k_dim);
  const std::optional<int64_t> head_dim = c.optional_int("head_dim", k_dim);
  m.head_dim = head_dim.value_or(0);
  m.intermediate_size = c.get_int("intermediate_size", k_dim);
  m.vocab_size = c.get_int("vocab_size", k_dim);
  m.parameters = c.get_int("parameters", k_count);
  m.active_parameters = c.get_int("active_parameters", m.parameters, k_count);
  m.experts = c.optional_int("experts", {2, 1 << 20}).value_or(0);
  m.experts_per_token = c.optional_int("experts_per_token", {1, 1 << 20}).value_or(0);
  m.max_context_tokens = c.get_int("max_context_tokens", k_context_tokens);
  m.gated_mlp = c.get_choice("mlp", "gated", {"gated", "plain"}) == "gated";
  if (!m.gated_mlp && m.experts > 0)
    c.fail("mlp",
           "a mixture of experts' experts are gated here (the MoE tables measure gated "
           "experts): give mlp: gated or leave it out");
  read_layer_kinds(c, m);
  doc->check_all_read();
  validate_model(c, m, head_dim.has_value());
  return m;
}

const std::vector<std::string>& price_tier_names() {
  static const std::vector<std::string> names{"mixed", "on_demand"};
  return names;
}

const PriceQuote* HardwareSpec::price(const std::string& tier) const {
  for (const PriceQuote& q : prices)
    if (q.tier == tier) return &q;
  return nullptr;
}

const PriceQuote& HardwareSpec::require_price(const std::string& tier) const {
  if (const PriceQuote* q = price(tier)) return *q;
  std::vector<std::string> tiers;
  for (const PriceQuote& q : prices) tiers.push_back(q.tier);
  throw InputError(fmt::format("hardware {} has no {} price (its tiers: {}; every tier: {})",
                               quote_input(name), tier, tiers.empty() ? "none" : join_names(tiers),
                               join_names(price_tier_names())));
}

namespace {

/// `prices: {TIER: {usd_per_hour, source, date}, ...}`: at least one tier.
std::vector<PriceQuote> read_prices(const Cfg& c) {
  const Cfg prices = c.child("prices");
  std::vector<PriceQuote> out;
  for (const std::string& tier : price_tier_names()) {
    const std::optional<Cfg> q = prices.optional_child(tier);
    if (!q) continue;
    out.push_back({tier, plausible_real(*q, "usd_per_hour", units::k_usd_per_hour),
                   q->get_string("source"), q->get_string("date")});
  }
  if (out.empty())
    prices.fail("", fmt::format("give the price of at least one tier ({})",
                                join_names(price_tier_names())));
  return out;
}

/// `power: {idle_w, peak_w, source, idle_source, date}`, optional.
std::optional<PowerSpec> read_power(const Cfg& c) {
  const std::optional<Cfg> p = c.optional_child("power");
  if (!p) return std::nullopt;
  PowerSpec w;
  w.peak_w = plausible_real(*p, "peak_w", units::k_watts);
  w.idle_w = plausible_real(*p, "idle_w", units::k_idle_watts);
  if (w.idle_w >= w.peak_w)
    p->fail("idle_w", fmt::format("{} W is not below peak_w ({} W): idle_w is what the chip draws "
                                  "between steps, peak_w its rated maximum",
                                  w.idle_w, w.peak_w));
  w.source = p->get_string("source");
  w.idle_source = p->get_string("idle_source");
  w.date = p->get_string("date");
  return w;
}

std::optional<MeasuredShares> read_measured(const Cfg& c, const HardwareSpec& h) {
  const std::optional<Cfg> m = c.optional_child("measured");
  if (!m) return std::nullopt;
  MeasuredShares s;
  s.source = m->get_string("source");
  s.bandwidth_gb_per_s = plausible_real(*m, "memory_bandwidth_gb_per_s", units::k_gb_per_s);
  if (s.bandwidth_gb_per_s > h.memory_bandwidth_gb_per_s)
    m->fail("memory_bandwidth_gb_per_s",
            fmt::format("{} GB/s is more than the datasheet's {} GB/s", s.bandwidth_gb_per_s,
                        h.memory_bandwidth_gb_per_s));
  s.reference_bandwidth_share = m->get_real("reference_bandwidth_share", {0.0, 1.0, true});
  const std::string dtype = m->get_choice("matrix_dtype", "fp8", {"bf16", "fp8"});
  s.matrix_dtype = dtype == "bf16" ? Dtype::Bf16 : Dtype::Fp8;
  s.matrix_tflops = plausible_real(*m, "matrix_tflops", units::k_tflop_per_s);
  const double peak = h.peak_tflops[static_cast<size_t>(s.matrix_dtype)];
  if (!(peak > 0) || s.matrix_tflops > peak)
    m->fail("matrix_tflops", fmt::format("{} TFLOP/s must be at most the datasheet's {} peak ({})",
                                         s.matrix_tflops, dtype, peak));
  s.reference_matrix_share = m->get_real("reference_matrix_share", {0.0, 1.0, true});
  return s;
}

}  // namespace

namespace {

HardwareSpec parse_hardware_text(const std::string& text, const std::string& file,
                                 TextOrigin origin) {
  auto doc = std::make_shared<Document>(text, file, origin);
  const Cfg c = Cfg::root(doc);
  HardwareSpec h;
  h.name = c.get_string("name");
  h.source = c.get_string("source");
  h.memory_gb = plausible_real(c, "memory_gb", units::k_accelerator_gb);
  h.memory_gib = plausible_real(c, "memory_gib", units::k_accelerator_gib);
  // The device reports less than the datasheet (firmware, ECC); never more than 10 % over it (some
  // vendors quote GiB as "GB": 192 on an MI300X).
  if (h.memory_gib * 1073741824.0 > h.memory_gb * 1e9 * 1.1)
    c.fail("memory_gib", fmt::format("{} GiB is more than the datasheet's {} GB: memory_gib is "
                                     "the memory the device reports, in GiB (2^30 bytes)",
                                     h.memory_gib, h.memory_gb));
  // The folders of the AIConfigurator operator tables (data/timings/aiconfigurator).
  h.tables = c.get_choice("tables", {"a100_sxm", "b200_sxm", "h100_sxm", "h200_sxm", "l40s", "none",
                                     "rtx_pro_6000_server"});
  h.memory_bandwidth_gb_per_s = plausible_real(c, "memory_bandwidth_gb_per_s", units::k_gb_per_s);
  const Cfg peaks = c.child("peak_tflops");
  bool any = false;
  for (size_t i = 0; i < k_dtype_count; ++i) {
    h.peak_tflops[i] =
        optional_plausible_real(peaks, dtype_names()[i], units::k_tflop_per_s).value_or(0.0);
    any = any || h.peak_tflops[i] > 0;
  }
  if (!any) peaks.check_keys_read();  // a misspelt precision is named as such
  if (!any)
    peaks.fail("",
               fmt::format("give the dense peak of at least one of {}", join_names(dtype_names())));
  h.interconnect_gb_per_s = plausible_real(c, "interconnect_gb_per_s", units::k_gb_per_s);
  h.prices = read_prices(c);
  h.power = read_power(c);
  h.measured = read_measured(c, h);
  doc->check_all_read();
  return h;
}

}  // namespace

HardwareSpec parse_hardware(const std::string& text, const std::string& file, TextOrigin origin) {
  // A run reads its chip's file several times (the step model, the KV memory, the accelerator
  // and power figures), and parsing YAML is most of the cost: a file's spec is kept for the
  // process once it has parsed (a bad one throws each time). While a KeyLog records
  // (tests/cli/config_docs_test.cpp), every read goes to the parser, so that its keys are seen.
  if (KeyLog::recording()) return parse_hardware_text(text, file, origin);
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, HardwareSpec> parsed;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = parsed.find({text, file}); it != parsed.end()) return it->second;
  }
  HardwareSpec h = parse_hardware_text(text, file, origin);
  const std::lock_guard<std::mutex> lock(mutex);
  parsed.emplace(std::pair{text, file}, h);
  return h;
}

// ---------------------------------------------------------------- lookup

std::vector<std::string> model_names() { return names_of(model_catalogue()); }
std::vector<std::string> hardware_names() { return names_of(hardware_catalogue()); }
std::span<const HardwareAlias> hardware_aliases() { return k_hardware_aliases; }

ModelSpec load_model(const std::string& name_or_path, const std::string& base_dir) {
  const Located l = locate(model_catalogue(), name_or_path, base_dir);
  if (!l.error.empty()) throw InputError(l.error);
  return parse_model(l.text, l.file, l.origin);
}

HardwareSpec load_hardware(const std::string& name_or_path, const std::string& base_dir) {
  const Located l = locate(hardware_catalogue(), name_or_path, base_dir);
  if (!l.error.empty()) throw InputError(l.error);
  return parse_hardware(l.text, l.file, l.origin);
}

ModelSpec read_model(const Cfg& c, const std::string& key) {
  const Located l = locate(model_catalogue(), c.get_string(key), c.doc().base_dir());
  if (!l.error.empty()) c.fail(key, l.error);
  return parse_model(l.text, l.file, l.origin);
}

HardwareSpec read_hardware(const Cfg& c, const std::string& key) {
  const Located l = locate(hardware_catalogue(), c.get_string(key), c.doc().base_dir());
  if (!l.error.empty()) c.fail(key, l.error);
  return parse_hardware(l.text, l.file, l.origin);
}

}  // namespace servesim
