#include "cli/explain_cmd.h"

#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/cli_options.h"
#include "core/errors.h"

namespace po = boost::program_options;

namespace servesim {
namespace {

std::string with_commas(int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out = v < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// "26.03 GB", "497.8 MB" or "819.2 kB" (decimal units).
std::string bytes_text(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  return fmt::format("{:.1f} kB", b / 1e3);
}

/// Decimal GB with enough digits to show a small figure.
std::string gb_text(double b) {
  return b >= 1e9 ? fmt::format("{:.2f}", b / 1e9) : fmt::format("{:.4f}", b / 1e9);
}

std::string number_text(double v) {
  return v == std::floor(v) ? with_commas(static_cast<int64_t>(v)) : fmt::format("{:g}", v);
}

int64_t conversations(double memory_bytes, double weight_bytes, double per_conversation) {
  if (memory_bytes <= weight_bytes) return 0;
  return static_cast<int64_t>(std::floor((memory_bytes - weight_bytes) / per_conversation));
}

Dtype dtype_option(const po::variables_map& vm, const char* name, Dtype def) {
  if (!vm.count(name)) return def;
  const std::string v = vm[name].as<std::string>();
  if (const auto d = parse_dtype(v)) return *d;
  throw InputError(fmt::format("--{} {}: unknown dtype{} (valid: {})", name, quote_input(v),
                               did_you_mean(v, dtype_names()), join_names(dtype_names())));
}

template <typename Spec, typename Loader>
Spec load_option(const po::variables_map& vm, const char* name, Loader load) {
  try {
    return load(vm[name].as<std::string>(), ".");
  } catch (const InputError& e) {
    throw InputError(fmt::format("--{}: {}", name, e.what()));
  }
}

void print_memory(std::ostream& out, const ModelSpec& m, const HardwareSpec& hw,
                  const ExplainOptions& o, const ExplainFigures& f) {
  const double bytes = dtype_bytes(o.weight);
  out << fmt::format("memory\n  weights      {} parameters x {} bytes ({}) = {}",
                     with_commas(m.parameters), number_text(bytes), dtype_name(o.weight),
                     bytes_text(f.weight_bytes));
  if (o.tensor_parallel > 1)
    out << fmt::format(", {} per accelerator",
                       bytes_text(f.weight_bytes / static_cast<double>(o.tensor_parallel)));
  out << fmt::format(
      "\n  KV cache     2 x {} layers x {} KV heads x {} x {} bytes ({}) = {} bytes "
      "per token\n               {} per conversation of {} tokens{}\n",
      m.layers, m.kv_heads, m.head_dim, number_text(dtype_bytes(o.kv)), dtype_name(o.kv),
      with_commas(std::llround(f.kv_bytes_per_token)), bytes_text(f.kv_bytes_per_conversation),
      with_commas(o.context_tokens),
      o.context_tokens > m.max_context_tokens
          ? fmt::format(" (beyond the model's {}-token context)", with_commas(m.max_context_tokens))
          : "");
  const std::string memory =
      o.tensor_parallel > 1
          ? fmt::format("{} x {} GB", o.tensor_parallel, number_text(hw.memory_gb))
          : fmt::format("{} GB", number_text(hw.memory_gb));
  out << fmt::format("  fit          {} conversations in the whole {} (({} - {}) / {} GB)\n",
                     with_commas(f.conversations_whole_memory), memory, gb_text(f.memory_bytes),
                     gb_text(f.weight_bytes), gb_text(f.kv_bytes_per_conversation));
  out << fmt::format(
      "               {} conversations in {} x utilization {} = {:.2f} GB, as a "
      "server reserving memory would\n",
      with_commas(f.conversations_utilized), memory, number_text(o.utilization),
      f.memory_bytes * o.utilization / 1e9);
}

void print_decode(std::ostream& out, const ModelSpec& m, const HardwareSpec& hw,
                  const ExplainOptions& o, const ExplainFigures& f) {
  out << fmt::format("decode (each step reads every weight once{})\n",
                     m.is_moe() ? "; for a mixture of experts, only the active ones, an "
                                  "approximation that holds at small batch"
                                : "");
  out << fmt::format("  batch 1      {} / {} GB/s = {:.2f} ms per token, {:.1f} tokens/s at most\n",
                     bytes_text(f.step_weight_bytes), number_text(hw.memory_bandwidth_gb_per_s),
                     f.decode_ms_batch1, 1e3 / f.decode_ms_batch1);
  out << fmt::format("  ridge point  {} TFLOP/s ({}) / {} GB/s = {:.1f} FLOP/byte\n",
                     number_text(f.peak_flops_per_s / 1e12), dtype_name(o.compute),
                     number_text(hw.memory_bandwidth_gb_per_s), f.ridge_flops_per_byte);
  out << fmt::format("  {:>7}{:>18}{:>16}{:>14}   (each sequence at {} tokens of context)\n",
                     "batch", "FLOP/byte", "step bound ms", "tokens/s",
                     with_commas(o.context_tokens));
  const auto tp = static_cast<double>(o.tensor_parallel);
  for (const int64_t b : {1, 8, 64, 256}) {
    const auto n = static_cast<double>(b);
    const double intensity = decode_intensity(m, o, b);
    const double bytes = (f.step_weight_bytes * tp +
                          n * static_cast<double>(o.context_tokens + 1) * f.kv_bytes_per_token) /
                         tp;
    const double step_s =
        std::max(bytes / hw.bandwidth_bytes_per_s(), intensity * bytes / f.peak_flops_per_s);
    out << fmt::format("  {:>7}{:>18.1f}{:>16.2f}{:>14.0f}   {}\n", b, intensity, step_s * 1e3,
                       n / step_s,
                       intensity >= f.ridge_flops_per_byte ? "compute-bound" : "bandwidth-bound");
  }
  out << fmt::format("  compute-bound from batch {} counting weights only; ",
                     with_commas(f.compute_bound_batch_weights_only));
  if (f.compute_bound_batch)
    out << fmt::format("from batch {} with the KV reads\n", with_commas(*f.compute_bound_batch));
  else
    out << fmt::format("never with the KV reads (FLOP/byte tends to {:.1f} as batch grows)\n",
                       f.intensity_limit);
}

void print_measured(std::ostream& out, double mb, double ms,
                    const std::optional<HardwareSpec>& hw) {
  const double gbs = achieved_gb_per_s(mb, ms);
  out << fmt::format("measured: {} MB in {} ms = {:.1f} GB/s achieved", number_text(mb),
                     number_text(ms), gbs);
  if (hw)
    out << fmt::format(", {:.1f}% of {}'s {} GB/s", 100.0 * gbs / hw->memory_bandwidth_gb_per_s,
                       hw->name, number_text(hw->memory_bandwidth_gb_per_s));
  out << "\n";
}

void print_int8(std::ostream& out, const ModelSpec& m, const HardwareSpec& hw,
                const ExplainOptions& o) {
  ExplainOptions q = o;
  q.weight = Dtype::Int8;
  // W8A8 where the chip computes in int8; otherwise int8 storage dequantised to o.compute.
  if (hw.peak_flops_per_s(Dtype::Int8)) q.compute = Dtype::Int8;
  const ExplainFigures g = explain_figures(m, hw, q);
  out << fmt::format("\nwith int8 weights (KV {}, compute {})\n", dtype_name(q.kv),
                     dtype_name(q.compute));
  out << fmt::format(
      "  weights {}; {} conversations fit in the whole memory, {} at utilization {}\n",
      bytes_text(g.weight_bytes), with_commas(g.conversations_whole_memory),
      with_commas(g.conversations_utilized), number_text(q.utilization));
  out << fmt::format(
      "  batch 1 {:.2f} ms per token, {:.1f} tokens/s at most; compute-bound from "
      "batch {} counting weights only\n",
      g.decode_ms_batch1, 1e3 / g.decode_ms_batch1,
      with_commas(g.compute_bound_batch_weights_only));
}

ExplainOptions read_options(const po::variables_map& vm, const HardwareSpec& hw) {
  ExplainOptions o;
  o.weight = dtype_option(vm, "weight-dtype", Dtype::Bf16);
  o.kv = dtype_option(vm, "kv-dtype", o.weight);
  o.compute = dtype_option(vm, "compute-dtype", o.weight);
  o.context_tokens = vm["context"].as<int64_t>();
  o.tensor_parallel = vm["tp"].as<int64_t>();
  o.utilization = vm["utilization"].as<double>();
  if (!hw.peak_flops_per_s(o.compute))
    throw InputError(fmt::format("explain: {} has no {} peak (it has {}); give --compute-dtype",
                                 hw.name, dtype_name(o.compute),
                                 join_names(hw.supported_dtypes())));
  return o;
}

}  // namespace

double decode_intensity(const ModelSpec& m, const ExplainOptions& o, int64_t batch) {
  const auto b = static_cast<double>(batch);
  const auto context = static_cast<double>(o.context_tokens);
  const double attention = 4.0 * static_cast<double>(m.layers * m.attention_heads * m.head_dim);
  const double flops = (2.0 * static_cast<double>(m.active_parameters) + attention * context) * b;
  const double bytes =
      m.active_weight_bytes(o.weight) + b * (context + 1) * m.kv_bytes_per_token(o.kv);
  return flops / bytes;
}

ExplainFigures explain_figures(const ModelSpec& m, const HardwareSpec& hw,
                               const ExplainOptions& o) {
  ExplainFigures f;
  const auto tp = static_cast<double>(o.tensor_parallel);
  f.weight_bytes = m.weight_bytes(o.weight);
  f.memory_bytes = hw.memory_bytes() * tp;
  if (f.weight_bytes >= f.memory_bytes)
    throw InputError(fmt::format(
        "{} in {} needs {} for its weights, more than {}'s {} GB{}: try a larger --tp or a "
        "smaller --weight-dtype",
        m.name, dtype_name(o.weight), bytes_text(f.weight_bytes), hw.name,
        number_text(hw.memory_gb),
        o.tensor_parallel > 1 ? fmt::format(" x {}", o.tensor_parallel) : ""));
  f.step_weight_bytes = m.active_weight_bytes(o.weight) / tp;
  f.kv_bytes_per_token = m.kv_bytes_per_token(o.kv);
  f.kv_bytes_per_conversation = f.kv_bytes_per_token * static_cast<double>(o.context_tokens);
  f.conversations_whole_memory =
      conversations(f.memory_bytes, f.weight_bytes, f.kv_bytes_per_conversation);
  f.conversations_utilized =
      conversations(f.memory_bytes * o.utilization, f.weight_bytes, f.kv_bytes_per_conversation);
  f.decode_ms_batch1 = f.step_weight_bytes / hw.bandwidth_bytes_per_s() * 1e3;
  f.peak_flops_per_s = hw.peak_flops_per_s(o.compute).value_or(0.0);
  f.ridge_flops_per_byte = f.peak_flops_per_s / hw.bandwidth_bytes_per_s();
  // Weights only: intensity = 2 P b / (P x weight bytes) reaches the ridge at this batch.
  const double weight_flops_per_byte = 2.0 / dtype_bytes(o.weight);
  f.compute_bound_batch_weights_only =
      static_cast<int64_t>(std::ceil(f.ridge_flops_per_byte / weight_flops_per_byte - 1e-9));
  // With KV: b (2P + aC - ridge kv (C+1)) >= ridge W, when the bracket is positive.
  const auto context = static_cast<double>(o.context_tokens);
  const double per_seq_flops =
      2.0 * static_cast<double>(m.active_parameters) +
      4.0 * static_cast<double>(m.layers * m.attention_heads * m.head_dim) * context;
  const double per_seq_bytes = (context + 1) * f.kv_bytes_per_token;
  f.intensity_limit = per_seq_flops / per_seq_bytes;
  const double margin = per_seq_flops - f.ridge_flops_per_byte * per_seq_bytes;
  if (margin > 0)
    f.compute_bound_batch = static_cast<int64_t>(
        std::ceil(f.ridge_flops_per_byte * m.active_weight_bytes(o.weight) / margin - 1e-9));
  return f;
}

CommandLine explain_command_line() {
  CommandLine cl("explain", "--model M --hardware H [options]",
                 "Works out what serving a model on an accelerator costs in memory and time.");
  // clang-format off
  cl.options()
      ("model", po::value<std::string>(), "catalogue name or YAML path")
      ("hardware", po::value<std::string>(), "catalogue name (or an alias: docs/hardware.md#aliases) or YAML path")
      ("weight-dtype", po::value<std::string>(), "fp32, bf16, fp16, fp8, int8, int4 (default bf16)")
      ("kv-dtype", po::value<std::string>(), "default: the weight dtype")
      ("compute-dtype", po::value<std::string>(), "default: the weight dtype");
  // clang-format on
  cl.int_option("context", 1, 1'000'000'000, "tokens per conversation", 2048);
  cl.int_option("tp", 1, 1024, "tensor-parallel accelerators", 1);
  cl.real_option("utilization", 0, 1, "", "share of memory usable", 0.9, true);
  cl.real_option("measured-mb", 0, 1e12, "MB", "a measured step's bytes moved", std::nullopt, true);
  cl.real_option("measured-ms", 0, 1e12, "ms", "that step's duration", std::nullopt, true);
  return cl;
}

double achieved_gb_per_s(double megabytes, double ms) {
  return megabytes * 1e6 / (ms * 1e-3) / 1e9;
}

int cmd_explain(const std::vector<std::string>& args, std::ostream& out_stream) {
  const std::optional<po::variables_map> parsed = explain_command_line().parse(args, out_stream);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const CommonOptions c = common_options(vm);
  std::ostream sink(nullptr);  // the text, unless -q or --json
  std::ostream& out = c.tables() ? out_stream : sink;
  if (vm.count("measured-mb") != vm.count("measured-ms"))
    throw InputError("explain: give --measured-mb and --measured-ms together");
  const bool measured = vm.count("measured-mb") > 0;
  std::optional<HardwareSpec> hw;
  if (vm.count("hardware")) hw = load_option<HardwareSpec>(vm, "hardware", &load_hardware);
  nlohmann::ordered_json j{{"command", "explain"}};
  auto measured_json = [&] {
    const double mb = vm["measured-mb"].as<double>(), ms = vm["measured-ms"].as<double>();
    const double gbs = achieved_gb_per_s(mb, ms);
    nlohmann::ordered_json m{{"megabytes", mb}, {"ms", ms}, {"achieved_gb_per_s", gbs}};
    if (hw) m["share_of_peak_bandwidth"] = gbs / hw->memory_bandwidth_gb_per_s;
    return m;
  };
  if (!vm.count("model")) {
    if (!measured) throw InputError("explain: --model and --hardware are required");
    print_measured(out, vm["measured-mb"].as<double>(), vm["measured-ms"].as<double>(), hw);
    if (hw) j["hardware"] = hw->name;
    j["measured"] = measured_json();
    if (c.json) print_json(out_stream, c, j);
    return 0;
  }
  const ModelSpec m = load_option<ModelSpec>(vm, "model", &load_model);
  if (!hw) throw InputError("explain: --hardware is required with --model");
  const ExplainOptions o = read_options(vm, *hw);

  const ExplainFigures f = explain_figures(m, *hw, o);
  j.update({{"model", m.name},
            {"hardware", hw->name},
            {"weight_dtype", dtype_name(o.weight)},
            {"kv_dtype", dtype_name(o.kv)},
            {"compute_dtype", dtype_name(o.compute)},
            {"context_tokens", o.context_tokens},
            {"tensor_parallel", o.tensor_parallel},
            {"utilization", o.utilization},
            {"weight_bytes", f.weight_bytes},
            {"step_weight_bytes", f.step_weight_bytes},
            {"kv_bytes_per_token", f.kv_bytes_per_token},
            {"kv_bytes_per_conversation", f.kv_bytes_per_conversation},
            {"memory_bytes", f.memory_bytes},
            {"conversations_whole_memory", f.conversations_whole_memory},
            {"conversations_utilized", f.conversations_utilized},
            {"decode_ms_batch1", f.decode_ms_batch1},
            {"peak_flops_per_s", f.peak_flops_per_s},
            {"ridge_flops_per_byte", f.ridge_flops_per_byte},
            {"compute_bound_batch_weights_only", f.compute_bound_batch_weights_only},
            {"compute_bound_batch", f.compute_bound_batch
                                        ? nlohmann::ordered_json(*f.compute_bound_batch)
                                        : nlohmann::ordered_json()},
            {"intensity_limit", f.intensity_limit}});
  if (measured) j["measured"] = measured_json();
  out << fmt::format(
      "{} on {}{}: weights {}, KV {}, compute {}\n", m.name, hw->name,
      o.tensor_parallel > 1 ? fmt::format(" x {} (tensor parallel)", o.tensor_parallel) : "",
      dtype_name(o.weight), dtype_name(o.kv), dtype_name(o.compute));
  const PriceQuote* price = hw->price(k_default_price_tier);
  if (!price) price = &hw->prices.front();  // parse_hardware requires one tier
  out << fmt::format("  model: {}\n  chip:  {}\n  price: ${:.2f}/h, {} tier ({}, {})\n\n", m.source,
                     hw->source, price->usd_per_hour, price->tier, price->source, price->date);
  print_memory(out, m, *hw, o, f);
  out << "\n";
  print_decode(out, m, *hw, o, f);
  if (o.weight != Dtype::Int8 && m.weight_bytes(Dtype::Int8) < f.memory_bytes)
    print_int8(out, m, *hw, o);
  if (measured) {
    out << "\n";
    print_measured(out, vm["measured-mb"].as<double>(), vm["measured-ms"].as<double>(), hw);
  }
  if (c.json) print_json(out_stream, c, j);
  return 0;
}

}  // namespace servesim
