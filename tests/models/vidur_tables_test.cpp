// --input-format vidur on an excerpt of Vidur's A100 tables (tests/data/vidur-a100: CodeLlama-34B's
// shape at tensor parallel 2), and the cpu_overhead key every step-time model takes.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "cli/calibrate_cmd.h"
#include "models/measurements.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_vidur_tables_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const fs::path k_dir = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/vidur-a100";

// mlp.csv, per layer (ms): attn_pre_proj + attn_rope + attn_post_proj + mlp_up_proj + mlp_act
// + mlp_down_proj + input_layernorm + post_attention_layernorm + add.
constexpr double k_ops_8 = 0.06 + 0.004 + 0.046 + 0.2315 + 0.009 + 0.118 + 0.007 + 0.007 + 0.002;
constexpr double k_ops_16 = 0.06 + 0.004 + 0.046 + 0.233 + 0.009 + 0.121 + 0.007 + 0.007 + 0.002;
constexpr double k_ops_64 = 0.061 + 0.004 + 0.048 + 0.242 + 0.008 + 0.119 + 0.007 + 0.008 + 0.003;
// all_reduce.csv at 2 workers on 2 a node: 0.01, 0.011 and 0.068 ms; the running median over
// 9 sizes covers all three, so every size reads 0.011. Two a layer.
constexpr double k_all_reduce_2 = 2 * 0.011;

MeasurementSet read(const fs::path& dir, int layers = 2) {
  MeasurementFilter f;
  f.layers = layers;
  return read_vidur_tables(dir.string(), f);
}

/// A copy of the excerpt folder without `leave_out`, with `replace` written over its files.
fs::path copy_excerpt(const std::vector<std::string>& leave_out,
                      const std::vector<std::pair<std::string, std::string>>& replace = {}) {
  const fs::path d = temp_dir();
  for (const auto& e : fs::directory_iterator(k_dir))
    if (std::find(leave_out.begin(), leave_out.end(), e.path().filename()) == leave_out.end())
      fs::copy_file(e.path(), d / e.path().filename());
  for (const auto& [name, text] : replace) std::ofstream(d / name, std::ios::trunc) << text;
  return d;
}

std::string file_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("vidur: a composed step is the hand-summed operators of the excerpt", "[models]") {
  const MeasurementSet set = read(k_dir);
  REQUIRE(set.samples.size() == 4);  // the continuing chunk (prefix 32) is skipped
  // In key order: decodes (batch 1 at KV 32, batch 1 at KV 1,024, batch 9 at KV 64), then the
  // prefill of 64. Decode tokens round up to 8 (1 -> 8, 9 -> 16), as Vidur rounds them.
  const auto& d1 = set.samples[0];
  CHECK(d1.ms == Approx(2 * (0.015 + k_ops_8 + k_all_reduce_2)).epsilon(1e-12));
  CHECK(d1.shape.sequences == 1);
  CHECK(d1.shape.decode_sequences == 1);
  CHECK(d1.shape.decode_context_tokens == 33);  // stored KV and the token computed
  // Two identical profiles of batch 1 at KV 1,024 (0.017 ms each) are averaged into one step.
  CHECK(set.samples[1].ms == Approx(2 * (0.017 + k_ops_8 + k_all_reduce_2)).epsilon(1e-12));
  const auto& d9 = set.samples[2];
  CHECK(d9.ms == Approx(2 * (0.012 + k_ops_16 + k_all_reduce_2)).epsilon(1e-12));
  CHECK(d9.shape.decode_context_tokens == 9 * 65);
  const auto& p = set.samples[3];
  CHECK(p.ms == Approx(2 * (0.015 + k_ops_64 + k_all_reduce_2)).epsilon(1e-12));
  CHECK(p.shape.prefill_tokens == 64);
  CHECK(p.shape.prefill_tokens_sq == 64.0 * 64.0);
  CHECK(p.shape.decode_sequences == 0);
  CHECK_THAT(set.description,
             Catch::Contains("n_embd 8192, 64 heads, 8 KV heads, MLP 22016, TP 2") &&
                 Catch::Contains("1 chunk-continuation rows skipped, 1 repeated"));
}

TEST_CASE("vidur: token operators are interpolated and all-reduces smoothed", "[models]") {
  // Without the 16-token row, 16 tokens lie 8/56 of the way from 8 to 64. The all-reduce table
  // holds 10 sizes (1 to 10 tokens of 16,384 bytes), 0.01 ms except one 0.5 ms outlier, which
  // the running median over 9 sizes removes.
  std::string ar = ",collective,num_workers,devices_per_node,size,time_stats.all_reduce.median\n";
  for (int k = 1; k <= 10; ++k)
    ar += fmt::format("{},all_reduce,2,2,{},{}\n", k, 16384 * k, k == 5 ? 0.5 : 0.01);
  const fs::path d = copy_excerpt({}, {{"all_reduce.csv", ar}});
  {  // keep the header and the 64- and 8-token rows
    std::istringstream in(file_text(k_dir / "mlp.csv"));
    std::string header, r64, r16, r8;
    std::getline(in, header), std::getline(in, r64), std::getline(in, r16), std::getline(in, r8);
    std::ofstream(d / "mlp.csv", std::ios::trunc) << header << "\n" << r64 << "\n" << r8 << "\n";
  }
  const MeasurementSet set = read(d);
  const double ops_16 = k_ops_8 + 8.0 / 56.0 * (k_ops_64 - k_ops_8);
  CHECK(set.samples[2].ms == Approx(2 * (0.012 + ops_16 + 2 * 0.01)).epsilon(1e-12));
  CHECK(set.samples[0].ms == Approx(2 * (0.015 + k_ops_8 + 2 * 0.01)).epsilon(1e-12));
}

TEST_CASE("vidur: a folder without attention.csv says the step is incomplete", "[models]") {
  const fs::path d = copy_excerpt({"attention.csv", "all_reduce.csv", "cpu_overheads.csv"});
  CHECK_THAT(message_of([&] { (void)read(d); }),
             Catch::Contains("Vidur's tables here do not make a complete step: attention.csv is "
                             "missing") &&
                 Catch::Contains("this folder has mlp.csv"));
  // Detected as Vidur's layout by its mlp.csv, so auto gives the same message.
  MeasurementFilter f;
  f.layers = 2;
  CHECK_THAT(message_of([&] { (void)read_measurements(d.string(), "auto", f); }),
             Catch::Contains("attention.csv is missing"));
  const fs::path no_ar = copy_excerpt({"all_reduce.csv"});
  CHECK_THAT(message_of([&] { (void)read(no_ar); }),
             Catch::Contains("complete step at TP 2: all_reduce.csv is missing"));
}

TEST_CASE("vidur: a bad cell is reported with its file, line and column", "[models]") {
  const std::string good = file_text(k_dir / "mlp.csv");
  const size_t line3 = good.find('\n', good.find('\n') + 1) + 1;  // the 16-token row
  std::string bad_emb = good;                                     // its time_stats.emb.min
  bad_emb.replace(line3, bad_emb.find(',', line3) - line3, "abc");
  std::string bad_up = good;
  // time_stats.mlp_up_proj.median is the 34th field of the header.
  size_t pos = line3;
  for (int i = 0; i < 33; ++i) pos = bad_up.find(',', pos) + 1;
  bad_up.replace(pos, bad_up.find(',', pos) - pos, "abc");
  const fs::path d = copy_excerpt({}, {{"mlp.csv", bad_up}});
  CHECK_THAT(message_of([&] { (void)read(d); }),
             Catch::Contains("mlp.csv:3: column time_stats.mlp_up_proj.median = \"abc\": must be "
                             "a finite number"));
  // A column the composition does not read may hold anything.
  CHECK(read(copy_excerpt({}, {{"mlp.csv", bad_emb}})).samples.size() == 4);
  // An all-reduce over no workers is no measurement: num_workers and devices_per_node start at 1.
  std::string ar =
      ",collective,num_workers,devices_per_node,size,time_stats.all_reduce.median\n"
      "0,all_reduce,0,2,16384,0.01\n";
  CHECK_THAT(message_of([&] {
               (void)read(copy_excerpt({}, {{"all_reduce.csv", ar}}));
             }),
             Catch::Contains("all_reduce.csv:2: column num_workers = \"0\""));
  ar = ",collective,num_workers,devices_per_node,size,time_stats.all_reduce.median\n"
       "0,all_reduce,2,0,16384,0.01\n";
  CHECK_THAT(message_of([&] {
               (void)read(copy_excerpt({}, {{"all_reduce.csv", ar}}));
             }),
             Catch::Contains("all_reduce.csv:2: column devices_per_node = \"0\""));
}

TEST_CASE("vidur: the selection options are checked against the tables", "[models]") {
  MeasurementFilter f;
  CHECK_THAT(message_of([&] { (void)read_vidur_tables(k_dir.string(), f); }),
             Catch::Contains("give the model's layer count with --layers"));
  f.layers = 2;
  f.tp = 4;
  CHECK_THAT(message_of([&] { (void)read_vidur_tables(k_dir.string(), f); }),
             Catch::Contains("no model shape and TP degree match") &&
                 Catch::Contains("n_embd 8192, 64 heads, 8 KV heads, MLP 22016, TP 2"));
  f.tp.reset();
  f.model_shape = "llama-3.1-8b";
  CHECK_THAT(message_of([&] { (void)read_vidur_tables(k_dir.string(), f); }),
             Catch::Contains("no model shape and TP degree match"));
  // The excerpt's shape is CodeLlama-34B's: chosen by it, and by TP 2 beside it; Llama-2-70B
  // differs only in its MLP (28,672) and matches nothing.
  f.model_shape = "codellama-34b";
  CHECK(read_vidur_tables(k_dir.string(), f).samples.size() == 4);
  f.tp = 2;
  CHECK(read_vidur_tables(k_dir.string(), f).samples.size() == 4);
  f.tp.reset();
  f.model_shape = "llama-2-70b";
  CHECK_THAT(message_of([&] { (void)read_vidur_tables(k_dir.string(), f); }),
             Catch::Contains("no model shape and TP degree match"));
  f.model_shape.reset();
  f.model = "no/such-model";
  CHECK_THAT(message_of([&] { (void)read_vidur_tables(k_dir.string(), f); }),
             Catch::Contains("--source-model no/such-model: no rows at TP 2 (models there: "
                             "codellama/CodeLlama-34b-Instruct-hf)"));
}

TEST_CASE("vidur: the CPU overhead is fitted to cpu_overheads.csv", "[models]") {
  // Batch 8 and 16, the sums of the schedule, sampler_e2e, prepare_inputs_e2e and
  // process_model_outputs medians: two points, so the line goes through both.
  const double at8 =
      0.040884610192028964 + 0.6511595104851139 + 0.1421317051292333 + 0.3182236372229695;
  const double at16 =
      0.0643768350782817 + 0.653769365627484 + 0.16251237834750595 + 0.6194020760935474;
  const MeasurementSet set = read(k_dir);
  REQUIRE(set.cpu_overhead);
  CHECK(set.cpu_overhead->overhead.per_sequence_ms == Approx((at16 - at8) / 8).epsilon(1e-9));
  CHECK(set.cpu_overhead->overhead.per_step_ms == Approx(at8 - 8 * (at16 - at8) / 8).epsilon(1e-9));
  CHECK(set.cpu_overhead->mape == Approx(0).margin(1e-9));

  // calibrate reports it and writes it beside the fitted GPU form.
  const fs::path out = temp_dir() / "step_time.yaml";  // calibrate's name in its --out folder
  std::ostringstream report;
  REQUIRE(cmd_calibrate({k_dir.string(), "--input-format", "vidur", "--layers", "2", "--form",
                         "linear", "--out", out.parent_path().string()},
                        report) == 0);
  CHECK_THAT(report.str(), Catch::Contains("cpu overhead a step") &&
                               Catch::Contains("codellama/CodeLlama-34b-Instruct-hf at TP 2"));
  const auto doc = Document::load_file(out.string());
  const auto model = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  CHECK(file_text(out).find("cpu_overhead: {per_step_ms: ") != std::string::npos);
}

TEST_CASE("cpu_overhead: adds exactly its figure to any model's step", "[models]") {
  StepShape s;
  s.sequences = s.decode_sequences = 4;
  s.decode_context_tokens = 4000;
  const std::string ovh = "cpu_overhead: {per_step_ms: 0.5, per_sequence_ms: 0.25}\n";
  for (const std::string base : {"kind: linear\nbase_ms: 2\nper_context_token_ms: 0.001\n",
                                 "kind: table\npoints: [{batch: 1, ms: 3}, {batch: 8, ms: 10}]\n",
                                 "kind: roofline\nmodel: llama-3.1-8b\nhardware: h100-sxm\n"}) {
    INFO(base);
    const auto plain = make_step_time_model(Cfg::root(doc_of(base)));
    const auto doc = doc_of(base + ovh);
    const auto with = make_step_time_model(Cfg::root(doc));
    doc->check_all_read();
    CHECK(with->step_ms(s) == Approx(plain->step_ms(s) + 0.5 + 4 * 0.25).epsilon(1e-12));
    const auto c = with->cost(s);
    if (c) CHECK(c->step_ms == Approx(with->step_ms(s)).epsilon(1e-12));
  }
  const auto doc = doc_of("kind: linear\nbase_ms: 2\ncpu_overhead: {per_step_ms: -1}\n");
  CHECK_THROWS_WITH(
      make_step_time_model(Cfg::root(doc)),
      Catch::Contains("cpu_overhead.per_step_ms = \"-1\" at test.yaml:3:29: must be >= 0"));
  const auto typo = doc_of("kind: linear\nbase_ms: 2\ncpu_overhead: {per_step: 1}\n");
  (void)make_step_time_model(Cfg::root(typo));
  CHECK_THROWS_WITH(typo->check_all_read(), Catch::Contains("per_step"));
}

}  // namespace t_models_vidur_tables_test
