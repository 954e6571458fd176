// The model and hardware catalogues: every shipped file loads and is embedded; bad files are
// refused with the key, file and line.
#include "models/catalog.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "core/errors.h"
#include "models/embedded_catalog.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_catalog_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

std::set<std::string> stems_in(const std::string& folder) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(SERVESIM_SOURCE_DIR) / "configs" / folder))
    if (e.path().extension() == ".yaml") out.insert(e.path().stem().string());
  return out;
}

const std::string k_model = R"(name: toy
source: written for this test
layers: 2
hidden_size: 1024
attention_heads: 32
kv_heads: 8
intermediate_size: 4096
vocab_size: 1000
parameters: 1000000
max_context_tokens: 4096
)";

std::string model_error(const std::string& yaml) {
  try {
    (void)parse_model(yaml, "bad.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

}  // namespace

TEST_CASE("catalog: every model file is embedded, loads, validates and is named after its file",
          "[models][catalog]") {
  const std::set<std::string> files = stems_in("models");
  const std::vector<std::string> names = model_names();
  CHECK(std::set<std::string>(names.begin(), names.end()) == files);
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(names.size() >= 9);
  for (const std::string& name : names) {
    INFO(name);
    const ModelSpec m = load_model(name);
    CHECK(m.name == name);
    CHECK_FALSE(m.source.empty());
    CHECK(m.attention_heads % m.kv_heads == 0);
    CHECK(m.active_parameters <= m.parameters);
    // The same file read from the source tree by path gives the same figures.
    const ModelSpec by_path =
        load_model(std::string(SERVESIM_SOURCE_DIR) + "/configs/models/" + name + ".yaml");
    CHECK(by_path.parameters == m.parameters);
    CHECK(by_path.head_dim == m.head_dim);
  }
}

TEST_CASE("catalog: every hardware file is embedded, loads and is named after its file",
          "[models][catalog]") {
  const std::set<std::string> files = stems_in("hardware");
  const std::vector<std::string> names = hardware_names();
  CHECK(std::set<std::string>(names.begin(), names.end()) == files);
  CHECK(names.size() >= 11);
  for (const std::string& name : names) {
    INFO(name);
    const HardwareSpec h = load_hardware(name);
    CHECK(h.name == name);
    REQUIRE_FALSE(h.prices.empty());
    for (const PriceQuote& q : h.prices) {
      CHECK(q.usd_per_hour > 0);
      CHECK_FALSE(q.source.empty());
      CHECK_FALSE(q.date.empty());
    }
    // The default tier comes from one source and date for every chip that has it.
    if (const PriceQuote* q = h.price(k_default_price_tier)) {
      CHECK(q->date == "2026-03-10");
      CHECK_THAT(q->source, Catch::StartsWith("RunPod on-demand list (deploybase.ai"));
    }
    // The device reports no more than the datasheet (allowing for GiB sold as "GB").
    CHECK(h.memory_gib > 0);
    CHECK(h.reported_memory_bytes() <= h.memory_bytes() * 1.1);
    CHECK_FALSE(h.supported_dtypes().empty());
    CHECK(h.peak_flops_per_s(Dtype::Fp32).has_value());  // every chip in the catalogue has fp32
  }
}

TEST_CASE("catalog: every embedded file passes the checks its shipped parse skips",
          "[models][catalog]") {
  // A catalogue name is parsed as TextOrigin::shipped (one parse: no document count, no
  // duplicate-key walk). Each embedded text must pass those checks, and parse to the same tree.
  size_t files = 0;
  for (const auto& catalogue : {embedded_models(), embedded_hardware()})
    for (const EmbeddedFile& f : catalogue) {
      INFO(f.name);
      const Document checked(f.text, f.name);
      const Document shipped(f.text, f.name, TextOrigin::shipped);
      CHECK(YAML::Dump(checked.root()) == YAML::Dump(shipped.root()));
      ++files;
    }
  CHECK(files == model_names().size() + hardware_names().size());
  // What the skipped checks refuse, a shipped text would not (and an input text is refused).
  const std::string two = "name: a\n---\nname: b\n";
  CHECK_THROWS_AS(Document(two, "two.yaml"), InputError);
  CHECK_NOTHROW(Document(two, "two.yaml", TextOrigin::shipped));
  const std::string twice = "name: a\nname: b\n";
  CHECK_THROWS_AS(Document(twice, "twice.yaml"), InputError);
  CHECK_NOTHROW(Document(twice, "twice.yaml", TextOrigin::shipped));
}

TEST_CASE("catalog: figures worked out by hand", "[models][catalog]") {
  // GPT-2 small: 124,439,808 weights, 4 bytes each in fp32.
  const ModelSpec gpt2 = load_model("gpt2-small");
  CHECK(gpt2.parameters == 124439808);
  CHECK(gpt2.weight_bytes(Dtype::Fp32) == 497759232.0);
  // Llama-2 13B: 2 (K and V) x 40 layers x 40 KV heads x 128 x 2 bytes = 819,200 bytes a token.
  const ModelSpec l13 = load_model("llama-2-13b");
  CHECK(l13.kv_bytes_per_token(Dtype::Bf16) == 819200.0);
  CHECK(l13.kv_bytes_per_token(Dtype::Fp8) == 409600.0);
  // Llama 3.1 8B: 8 KV heads of 128 over 32 layers, 2 x 32 x 8 x 128 x 2 = 131,072 bytes.
  CHECK(load_model("llama-3.1-8b").kv_bytes_per_token(Dtype::Bf16) == 131072.0);
  // Qwen3 32B's heads are wider than hidden_size / attention_heads (5120 / 64 = 80).
  CHECK(load_model("qwen3-32b").head_dim == 128);
  const ModelSpec moe = load_model("qwen3-30b-a3b");
  CHECK(moe.is_moe());
  CHECK(moe.experts == 128);
  CHECK(moe.experts_per_token == 8);
  CHECK(moe.active_weight_bytes(Dtype::Bf16) == 2.0 * 3353032704.0);
  CHECK(moe.weight_bytes(Dtype::Bf16) == 2.0 * 30532122624.0);
  // head_dim defaults to hidden_size / attention_heads: 1024 / 32 = 32.
  CHECK(parse_model(k_model, "toy.yaml").head_dim == 32);
  // Code Llama 34B: 2 x 32,000 x 8,192 embedding and output, 48 layers of attention
  // (2 x 8,192^2 + 2 x 8,192 x 1,024) + MLP (3 x 8,192 x 22,016) + 2 norms (2 x 8,192), final norm:
  // 524,288,000 + 48 x 692,076,544 + 8,192 = 33,743,970,304; KV 2 x 48 x 8 x 128 x 2 = 196,608.
  const ModelSpec code = load_model("codellama-34b");
  CHECK(code.parameters ==
        524288000 +
            48 * (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * int64_t{8192} * 22016 + 2 * 8192) + 8192);
  CHECK(code.kv_bytes_per_token(Dtype::Bf16) == 196608.0);
  CHECK(code.gated_mlp);
  // OPT-13B (plain ReLU MLP, biases, 2,050 learned positions, tied output): 40 layers of
  // attention 4 x 5,120^2 + 4 x 5,120, MLP 2 x 5,120 x 20,480 + 20,480 + 5,120 and two norms
  // 4 x 5,120; tables 50,272 x 5,120 + 2,050 x 5,120; final norm 2 x 5,120.
  const ModelSpec opt = load_model("opt-13b");
  CHECK_FALSE(opt.gated_mlp);
  CHECK(opt.parameters == 40 * (4 * int64_t{5120} * 5120 + 4 * 5120 + 2 * int64_t{5120} * 20480 +
                                20480 + 5120 + 4 * 5120) +
                              int64_t{50272} * 5120 + 2050 * 5120 + 2 * 5120);
  CHECK_FALSE(load_model("gpt2-small").gated_mlp);
  // The MI325X: the MI300X's compute with 256 GB at 6 TB/s.
  const HardwareSpec mi325x = load_hardware("mi325x");
  const HardwareSpec mi300x = load_hardware("mi300x");
  CHECK(mi325x.memory_gb == 256);
  CHECK(mi325x.memory_bandwidth_gb_per_s == 6000);
  CHECK(mi325x.peak_flops_per_s(Dtype::Fp8) == mi300x.peak_flops_per_s(Dtype::Fp8));
  CHECK(mi325x.peak_flops_per_s(Dtype::Bf16) == mi300x.peak_flops_per_s(Dtype::Bf16));
  // The MI355X: 256 CUs x 2.4 GHz x 4,096 16-bit FLOPs per CU per clock, twice that in 8 bits.
  const HardwareSpec mi355x = load_hardware("mi355x");
  CHECK(*mi355x.peak_flops_per_s(Dtype::Bf16) == Approx(256 * 2.4e9 * 4096).epsilon(1e-4));
  CHECK(*mi355x.peak_flops_per_s(Dtype::Fp8) == Approx(256 * 2.4e9 * 8192).epsilon(1e-4));
  // GB200's GPU is the B200's die at up to 1,200 W: its tables stand in, its peaks 1/9 higher.
  const HardwareSpec gb200 = load_hardware("gb200");
  const HardwareSpec b200 = load_hardware("b200");
  CHECK(gb200.tables == b200.tables);
  CHECK(*gb200.peak_flops_per_s(Dtype::Fp8) == Approx(*b200.peak_flops_per_s(Dtype::Fp8) * 10 / 9));
  // The NVL cards: the SXM parts' dies at lower clocks (835.5 dense bf16 against 989.4), with
  // their own memory (the H200 NVL's is the H200's); no tables of their own.
  const HardwareSpec h200 = load_hardware("h200"), h200_nvl = load_hardware("h200-nvl");
  const HardwareSpec h100_nvl = load_hardware("h100-nvl");
  CHECK(h200_nvl.memory_gib == h200.memory_gib);
  CHECK(h200_nvl.memory_bandwidth_gb_per_s == h200.memory_bandwidth_gb_per_s);
  CHECK(h200_nvl.peak_flops_per_s(Dtype::Bf16) == h100_nvl.peak_flops_per_s(Dtype::Bf16));
  CHECK(*h200_nvl.peak_flops_per_s(Dtype::Bf16) == 835.5e12);
  CHECK(h100_nvl.tables == "none");
  CHECK(h200_nvl.tables == "none");
  CHECK(dtype_bytes(Dtype::Int4) == 0.5);
  CHECK(dtype_bytes(*parse_dtype("fp8")) == 1.0);
  CHECK_FALSE(parse_dtype("fp4").has_value());
}

TEST_CASE("catalog: a bad model file names the key, file, line and what is allowed",
          "[models][catalog]") {
  CHECK(model_error(k_model) == "no error");
  CHECK_THAT(model_error(k_model + "rope_theta: 10000\n"),
             Catch::Contains("rope_theta at bad.yaml:11:1: unknown key"));
  CHECK_THAT(
      model_error(replace(k_model, "kv_heads: 8", "kv_heads: 12")),
      Catch::Contains("kv_heads = \"12\" at bad.yaml:6:11: must divide attention_heads (32)"));
  CHECK_THAT(model_error(replace(k_model, "hidden_size: 1024", "hidden_size: 1000")),
             Catch::Contains("attention_heads = \"32\" at bad.yaml:5:18: does not divide "
                             "hidden_size (1000); give head_dim explicitly"));
  CHECK(model_error(replace(k_model, "hidden_size: 1024", "hidden_size: 1000\nhead_dim: 128")) ==
        "no error");
  CHECK_THAT(
      model_error(k_model + "active_parameters: 2000000\nexperts: 8\nexperts_per_token: 2\n"),
      Catch::Contains("active_parameters = \"2000000\" at bad.yaml:11:20: must be <= "
                      "parameters (1000000)"));
  CHECK_THAT(model_error(k_model + "experts: 8\n"),
             Catch::Contains("needs both experts and experts_per_token"));
  CHECK(model_error(k_model + "mlp: plain\n") == "no error");
  CHECK_THAT(
      model_error(k_model + "mlp: swiglu\n"),
      Catch::Contains("mlp = \"swiglu\" at bad.yaml:11:6") && Catch::Contains("gated, plain"));
  CHECK_THAT(model_error(k_model + "mlp: plain\nactive_parameters: 500000\nexperts: 8\n"
                                   "experts_per_token: 2\n"),
             Catch::Contains("mlp = \"plain\"") && Catch::Contains("experts are gated"));
  // The expert counts' ranges end at 2^20: one past is refused by the range itself (not by the
  // later experts_per_token <= experts check), at 2^20 a model is accepted.
  const std::string big = k_model + "active_parameters: 500000\nexperts: 1048576\n";
  CHECK(model_error(big + "experts_per_token: 1048576\n") == "no error");
  CHECK_THAT(model_error(big + "experts_per_token: 1048577\n"),
             Catch::Contains("experts_per_token = \"1048577\"") &&
                 Catch::Contains("must be an integer from 1 to 1048576"));
  CHECK_THAT(model_error(k_model + "active_parameters: 500000\nexperts: 1048577\n"
                                   "experts_per_token: 2\n"),
             Catch::Contains("experts = \"1048577\"") &&
                 Catch::Contains("must be an integer from 2 to 1048576"));
  CHECK_THAT(model_error(k_model + "active_parameters: 500000\n"),
             Catch::Contains("a dense model (no experts) uses all its parameters"));
  CHECK_THAT(model_error(replace(k_model, "layers: 2", "layers: 0")),
             Catch::Contains("layers = \"0\" at bad.yaml:3:9: must be an integer from 1"));
  CHECK_THAT(model_error(replace(k_model, "vocab_size: 1000\n", "")),
             Catch::Contains("vocab_size: required key missing"));
}

TEST_CASE("catalog: a bad hardware file names the key, file and line", "[models][catalog]") {
  const std::string good = R"(name: chip
source: written for this test
memory_gb: 10
memory_bandwidth_gb_per_s: 100
peak_tflops: {fp32: 1, bf16: 4}
interconnect_gb_per_s: 10
memory_gib: 9
tables: none
prices: {mixed: {usd_per_hour: 0.5, source: nobody, date: 2026-01}}
)";
  auto error = [](const std::string& yaml) -> std::string {
    try {
      (void)parse_hardware(yaml, "chip.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error(good) == "no error");
  CHECK(parse_hardware(good, "chip.yaml").supported_dtypes() ==
        std::vector<std::string>{"fp32", "bf16"});
  CHECK_THAT(error(replace(good, "bf16: 4", "fp4: 4")),
             Catch::Contains("peak_tflops.fp4 at chip.yaml:5:24: unknown key (did you mean fp8?) "
                             "(valid here: bf16, fp16, fp32, fp8, int4, int8)"));
  CHECK_THAT(
      error(replace(good, "memory_bandwidth_gb_per_s: 100", "memory_bandwidth_gb_per_s: -1")),
      Catch::Contains("memory_bandwidth_gb_per_s = \"-1\" at chip.yaml:4:28: must be > 0"));
  CHECK_THAT(error(replace(good, "{fp32: 1, bf16: 4}", "{}")),
             Catch::Contains("give the dense peak of at least one of fp32, bf16"));
  // Only a misspelt precision: named as unknown, not as a missing peak.
  CHECK_THAT(error(replace(good, "{fp32: 1, bf16: 4}", "{fp23: 1}")),
             Catch::Contains("peak_tflops.fp23 at chip.yaml:5:15: unknown key (did you mean "
                             "fp16?) (valid here: bf16, fp16, fp32, fp8, int4, int8)"));
  // A file is parsed once a process (parse_hardware keeps the spec): asked again, the same text
  // gives the same spec, another file name the same figures with its own name in messages, and
  // a bad file fails every time.
  const HardwareSpec a = parse_hardware(good, "chip.yaml"), b = parse_hardware(good, "chip.yaml");
  CHECK(a.name == b.name);
  CHECK(a.memory_bandwidth_gb_per_s == 100);
  CHECK(b.memory_bandwidth_gb_per_s == 100);
  CHECK(b.peak_tflops == a.peak_tflops);
  CHECK(b.prices.size() == 1);
  CHECK(parse_hardware(replace(good, "memory_gb: 10", "memory_gb: 20"), "chip.yaml").memory_gb ==
        20);
  const std::string bad = replace(good, "memory_gib: 9", "memory_gib: 90");
  for (const char* file : {"chip.yaml", "chip.yaml", "other.yaml"})
    CHECK_THROWS_WITH(parse_hardware(bad, file),
                      Catch::Contains(std::string("memory_gib = \"90\" at ") + file));
}

TEST_CASE("catalog: an unknown name gets the close one and the valid ones, a path is a file",
          "[models][catalog]") {
  CHECK_THROWS_WITH(load_model("llama-2-13"),
                    Catch::Contains("unknown model \"llama-2-13\" (did you mean llama-2-13b?) "
                                    "(valid: codellama-34b, deepseek-v3, gpt2-small, "));
  CHECK_THROWS_WITH(load_hardware("h100-sx"), Catch::Contains("(did you mean h100-sxm?)"));
  // The name is echoed through quote_input: bytes that are not UTF-8 come out escaped (a
  // fuzzer's find: the raw bytes went into the message).
  CHECK_THROWS_WITH(load_hardware("uu\xC0\xC0"),
                    Catch::StartsWith("unknown hardware \"uu\\xC0\\xC0\" (valid: "));
  CHECK_THROWS_WITH(load_model("/nonexistent/toy.yaml"),
                    Catch::Contains("cannot open model file /nonexistent/toy.yaml"));
  // A user's own file, by absolute path or relative to a base folder.
  const std::string path = write_temp("toy.yaml", k_model);
  CHECK(load_model(path).name == "toy");
  const fs::path p(path);
  CHECK(load_model(p.filename().string(), p.parent_path().string()).layers == 2);
}

TEST_CASE("catalog: power figures are read, checked and named in messages", "[models][catalog]") {
  const std::string good = R"(name: chip
source: written for this test
memory_gb: 10
memory_bandwidth_gb_per_s: 100
peak_tflops: {bf16: 4}
interconnect_gb_per_s: 10
memory_gib: 9
tables: none
prices: {mixed: {usd_per_hour: 0.5, source: nobody, date: 2026-01}}
power: {peak_w: 300, idle_w: 45, source: a datasheet, idle_source: a study, date: 2026-12}
)";
  const HardwareSpec h = parse_hardware(good, "chip.yaml");
  REQUIRE(h.power);
  CHECK(h.power->peak_w == 300);
  CHECK(h.power->idle_w == 45);
  CHECK(h.power->idle_source == "a study");
  auto error = [](const std::string& yaml) -> std::string {
    try {
      (void)parse_hardware(yaml, "chip.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(error(replace(good, "idle_w: 45", "idle_w: 300")),
             Catch::Contains("power.idle_w") && Catch::Contains("chip.yaml:10") &&
                 Catch::Contains("is not below peak_w (300 W)"));
  CHECK_THAT(error(replace(good, "peak_w: 300", "peak_w: 300000")),
             Catch::Contains("power.peak_w") && Catch::Contains("did you give mW?"));
  CHECK_THAT(error(replace(good, "peak_w: 300", "peak_w: 0")),
             Catch::Contains("power.peak_w") && Catch::Contains("must be > 0"));
  CHECK_THAT(error(replace(good, "idle_w: 45", "idle_w: -1")), Catch::Contains("power.idle_w"));
  CHECK_THAT(error(replace(good, "idle_source: a study, ", "")),
             Catch::Contains("power.idle_source"));
  CHECK_THAT(error(replace(good, "date: 2026-12}", "date: 2026-12, tdp_w: 3}")),
             Catch::Contains("power.tdp_w") && Catch::Contains("unknown key"));
  // Every catalogue chip but the M3 Max (Apple publishes no power rating) has its power.
  for (const std::string& name : hardware_names()) {
    const HardwareSpec c = load_hardware(name);
    CHECK((c.power.has_value() || name == "apple-m3-max"));
    if (c.power) CHECK(c.power->idle_w < c.power->peak_w);
  }
}

}  // namespace t_models_catalog_test
