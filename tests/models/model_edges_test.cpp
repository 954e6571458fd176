// Step models and their readers at the edges of their ranges: the roofline fit's search grid at
// both ends, the skew fit's interpolation between chunks when no profiled corner answers, and
// the MoE table's list of what it has for a shape it lacks, each consecutive row that differs
// in one key column only.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "models/catalog.h"
#include "models/expert_parallel.h"
#include "models/fit.h"
#include "models/layer_profile.h"
#include "models/operator_source.h"
#include "models/operator_table_readers.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_model_edges_test {

using namespace servesim;
using namespace servesim::test;

namespace {

StepShape decode_step(int32_t seqs, int64_t ctx) {
  StepShape s;
  s.sequences = s.decode_sequences = seqs;
  s.decode_context_tokens = ctx;
  return s;
}

StepShape prefill_step(int64_t prefill) {
  StepShape s;
  s.sequences = 1;
  s.prefill_tokens = prefill;
  s.prefill_tokens_sq = static_cast<double>(prefill) * static_cast<double>(prefill);
  return s;
}

// Memory-bound decodes and compute-bound prefills, timed by a roofline of the given settings,
// each time multiplied by `scale`.
std::vector<StepSample> roofline_samples(const std::string& settings, double scale) {
  const std::string base = "kind: roofline\nmodel: llama-3.1-8b\nhardware: h100-sxm\n";
  const auto truth = make_step_time_model(Cfg::root(doc_of(base + settings)));
  std::vector<StepSample> out;
  for (const StepShape& s :
       {decode_step(1, 1000), decode_step(8, 8000), prefill_step(2048), prefill_step(8192)})
    out.push_back({s, truth->step_ms(s) * scale, ""});
  return out;
}

const std::string k_roofline = "kind: roofline\nmodel: llama-3.1-8b\nhardware: h100-sxm\n";

}  // namespace

TEST_CASE(
    "roofline fit: the efficiency grid runs from 5% to 100% in each roof, both ends "
    "included",
    "[models][fit]") {
  // Data made at 5% of each roof with 1 ms overhead: the grid's first point fits it exactly.
  const auto low = make_roofline_fitter(k_roofline)(roofline_samples(
      "bandwidth_efficiency: 0.05\ncompute_efficiency: 0.05\noverhead_ms: 1\n", 1.0));
  CHECK_THAT(low->yaml(), Catch::Contains("bandwidth_efficiency: 0.05\n"));
  CHECK_THAT(low->yaml(), Catch::Contains("compute_efficiency: 0.05\n"));
  CHECK_THAT(low->yaml(), Catch::Contains("overhead_ms: 1\n"));
  // Steps twice as fast as the ideal roofline: no efficiency above 100% is tried, so both stop
  // at 1 and the overhead at its floor of 0.
  const auto fast = make_roofline_fitter(k_roofline)(
      roofline_samples("bandwidth_efficiency: 1\ncompute_efficiency: 1\noverhead_ms: 0\n", 0.5));
  CHECK_THAT(fast->yaml(), Catch::Contains("bandwidth_efficiency: 1\n"));
  CHECK_THAT(fast->yaml(), Catch::Contains("compute_efficiency: 1\n"));
  CHECK_THAT(fast->yaml(), Catch::Contains("overhead_ms: 0\n"));
}

TEST_CASE(
    "skew fit: with no profiled corner a chunk between two chunks blends their pooled "
    "alphas linearly in log chunk",
    "[models]") {
  // Cells (chunk 16, n 2, share 1/2) alpha 0.2 and (chunk 64, n 4, share 1/4) alpha 0.5. At n 2
  // and share 1/4 neither is a corner of any chunk, so each chunk's pooled alpha answers.
  const auto dir = temp_dir();
  std::ofstream(dir / "skew.csv") << "pc,n,nb,kvs,kv_big,t_mean_us,t_max_us,t_skew_us\n"
                                  << "16,2,1,256,1024,100,110,102\n"
                                  << "64,4,1,256,1024,50,60,55\n";
  const SkewFit fit(SkewFit::read((dir / "skew.csv").string()));
  CHECK(fit.cells() == 2);
  // At a chunk of the grid (and clamped below the first and above the last) its own alpha.
  CHECK(fit.alpha(16, 2, 0.25, 1024) == Approx(0.2).epsilon(1e-12));
  CHECK(fit.alpha(4, 2, 0.25, 1024) == Approx(0.2).epsilon(1e-12));
  CHECK(fit.alpha(64, 2, 0.25, 1024) == Approx(0.5).epsilon(1e-12));
  CHECK(fit.alpha(1000, 2, 0.25, 1024) == Approx(0.5).epsilon(1e-12));
  // Midway in log chunk (32) the mean; a quarter of the way (16 x 4^(1/4)) 3/4 and 1/4.
  CHECK(fit.alpha(32, 2, 0.25, 1024) == Approx(0.35).epsilon(1e-12));
  CHECK(fit.alpha(16 * std::sqrt(2.0), 2, 0.25, 1024) ==
        Approx(0.75 * 0.2 + 0.25 * 0.5).epsilon(1e-12));
}

namespace {

const std::string k_moe_header =
    "moe_dtype,hidden_size,inter_size,num_experts,topk,moe_tp_size,moe_ep_size,num_tokens,"
    "latency_ms_balanced\n";

std::string moe_error(const std::string& rows, const MoeShape& s, const std::string& dtype) {
  const std::string path = write_temp("moe.csv", k_moe_header + rows);
  Breakpoints bp;
  try {
    (void)read_moe_table(path, s, dtype, "balanced", bp);
  } catch (const InputError& e) {
    const std::string what = e.what();
    const auto at = what.find(": no rows");
    return at == std::string::npos ? what : what.substr(at + 2);
  }
  return "no error";
}

MoeShape moe_shape(double hidden, double inter, double experts, double top_k) {
  MoeShape s;
  s.hidden_size = hidden;
  s.inter_size = inter;
  s.experts = experts;
  s.top_k = top_k;
  return s;
}

}  // namespace

TEST_CASE(
    "moe table: a shape not measured names every shape there, rows differing from the "
    "row before in one column only included",
    "[models][operator]") {
  // The model is not there: each row differs from the one before in one of hidden, inter,
  // experts and top-k, and each is named once (a repeated row is named once too).
  CHECK(moe_error("fp8,256,128,4,2,1,1,1,0.1\n"
                  "fp8,256,128,4,2,1,1,2,0.2\n"
                  "fp8,512,128,4,2,1,1,1,0.1\n"
                  "fp8,512,256,4,2,1,1,1,0.1\n"
                  "fp8,512,256,8,2,1,1,1,0.1\n"
                  "fp8,512,256,8,4,1,1,1,0.1\n",
                  moe_shape(1024, 128, 4, 2), "fp8") ==
        "no rows for 4 experts of hidden 1024 x inter 128, top-2, in fp8 at moe_tp 1 moe_ep 1 "
        "(hidden/inter/experts/top-k there: 256/128/4/2, 512/128/4/2, 512/256/4/2, "
        "512/256/8/2, 512/256/8/4)");
  // The model is there in other formats and splits: each row differs from the one before in
  // the dtype, moe_tp or moe_ep only.
  CHECK(moe_error("fp8,256,128,4,2,1,1,1,0.1\n"
                  "nvfp4,256,128,4,2,1,1,1,0.1\n"
                  "nvfp4,256,128,4,2,2,1,1,0.1\n"
                  "nvfp4,256,128,4,2,2,2,1,0.1\n"
                  "fp8,512,128,4,2,1,1,1,0.1\n",
                  moe_shape(256, 128, 4, 2), "bfloat16") ==
        "no rows for 4 experts of hidden 256 x inter 128, top-2, in bfloat16 at moe_tp 1 moe_ep 1 "
        "(that model is there as: fp8 moe_tp 1 moe_ep 1, nvfp4 moe_tp 1 moe_ep 1, nvfp4 moe_tp 2 "
        "moe_ep 1, nvfp4 moe_tp 2 moe_ep 2)");
}

namespace {

std::string skew_error(const std::string& row) {
  const auto dir = temp_dir();
  std::ofstream(dir / "skew.csv") << "pc,n,nb,kvs,kv_big,t_mean_us,t_max_us,t_skew_us\n"
                                  << row << "\n";
  try {
    (void)SkewFit::read((dir / "skew.csv").string());
  } catch (const InputError& e) {
    const std::string what = e.what();
    return what.substr(what.find("skew.csv:"));
  }
  return "(no error)";
}

std::string range(const char* column, int64_t v, int64_t lo, int64_t hi) {
  return fmt::format("skew.csv:2: column {} = \"{}\": must be an integer from {} to {}", column, v,
                     lo, hi);
}

}  // namespace

TEST_CASE("csv ranges: each skew.csv column is accepted at its ends and refused one past them",
          "[models]") {
  constexpr int64_t k24 = int64_t{1} << 24, k40 = int64_t{1} << 40;
  // pc (the prefill chunk) 0 to 2^24; n (decodes) 1 to 2^24; nb (long decodes) 1 to n; kvs 0
  // to 2^40; kv_big from kvs + 1 to 2^40.
  CHECK(skew_error("0,1,1,0,1,100,110,102") == "(no error)");
  CHECK(skew_error(fmt::format("{},{},{},{},{},100,110,102", k24, k24, k24, k40 - 1, k40)) ==
        "(no error)");
  CHECK_THAT(skew_error("-1,2,1,256,1024,100,110,102"), Catch::StartsWith(range("pc", -1, 0, k24)));
  CHECK_THAT(skew_error(fmt::format("{},2,1,256,1024,100,110,102", k24 + 1)),
             Catch::StartsWith(range("pc", k24 + 1, 0, k24)));
  CHECK_THAT(skew_error("0,0,1,256,1024,100,110,102"), Catch::StartsWith(range("n", 0, 1, k24)));
  CHECK_THAT(skew_error(fmt::format("0,{},1,256,1024,100,110,102", k24 + 1)),
             Catch::StartsWith(range("n", k24 + 1, 1, k24)));
  CHECK_THAT(skew_error("0,2,0,256,1024,100,110,102"), Catch::StartsWith(range("nb", 0, 1, 2)));
  CHECK_THAT(skew_error("0,2,3,256,1024,100,110,102"), Catch::StartsWith(range("nb", 3, 1, 2)));
  CHECK_THAT(skew_error("0,2,1,-1,1024,100,110,102"), Catch::StartsWith(range("kvs", -1, 0, k40)));
  CHECK_THAT(skew_error(fmt::format("0,2,1,{},{},100,110,102", k40 + 1, k40)),
             Catch::StartsWith(range("kvs", k40 + 1, 0, k40)));
  CHECK_THAT(skew_error("0,2,1,256,256,100,110,102"),
             Catch::StartsWith(range("kv_big", 256, 257, k40)));
  CHECK_THAT(skew_error(fmt::format("0,2,1,256,{},100,110,102", k40 + 1)),
             Catch::StartsWith(range("kv_big", k40 + 1, 257, k40)));
}

namespace {

// nccl.csv's alltoall rows (half) for 2 and 8 GPUs, and one for 16; rows of other operations
// or formats, and a slower repeat, that the reader must pass over.
const char* k_alltoall =
    "op_name,nccl_dtype,num_gpus,message_size,latency_ms\n"
    "alltoall,half,2,1000,0.01\n"
    "alltoall,half,2,4000,0.04\n"
    "alltoall,half,2,4000,0.08\n"
    "all_reduce,half,2,2000,0.001\n"
    "alltoall,float,2,2000,0.001\n"
    "alltoall,half,8,1000,0.02\n"
    "alltoall,half,16,1000,0.5\n";

}  // namespace

TEST_CASE("all-to-all: measured GPU counts within a node read the table, the rest the link model",
          "[models]") {
  const AllToAllLinks links{8, 450e6, 50e6, 0.01};
  const AllToAll a(links, write_temp("nccl.csv", k_alltoall));
  CHECK_FALSE(a.measured(1));
  CHECK(a.measured(2));
  CHECK_FALSE(a.measured(4));
  CHECK(a.measured(8));
  CHECK_FALSE(a.measured(16));  // measured, but across nodes
  CHECK(a.ms(1e6, 1) == 0);
  // The table's elements are bytes / 2: its points exactly, the fastest of a repeat, log-log
  // between them (2,000 elements: the geometric mean), the smallest below.
  CHECK(a.ms(2000, 2) == Approx(0.01).epsilon(1e-12));
  CHECK(a.ms(8000, 2) == Approx(0.04).epsilon(1e-12));
  CHECK(a.ms(4000, 2) == Approx(0.02).epsilon(1e-12));
  CHECK(a.ms(2, 2) == Approx(0.01).epsilon(1e-12));
  CHECK(a.ms(1, 2) == Approx(0.01).epsilon(1e-12));
  CHECK(a.ms(2000, 8) == Approx(0.02).epsilon(1e-12));
  // Not measured: latency + max(7/16 x bytes / NVLink, 8/16 x bytes / network).
  const double b = 1.6e9;
  CHECK(a.ms(b, 16) == Approx(0.01 + std::max(7.0 / 16 * b / 450e6, 8.0 / 16 * b / 50e6)));
  CHECK(a.ms(b, 4) == Approx(0.01 + 3.0 / 4 * b / 450e6));
  CHECK(link_all_to_all_ms(links, b, 16) == Approx(0.01 + 0.5 * b / 50e6).epsilon(1e-12));
  // Its columns' ranges: num_gpus 1 to 2^20, message_size 1 to 2^40.
  const auto error = [](const std::string& row) {
    try {
      const AllToAll bad(AllToAllLinks{},
                         write_temp("nccl.csv", std::string(k_alltoall) + row + "\n"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error("alltoall,half,1048576,1099511627776,1") == "(no error)");
  CHECK_THAT(error("alltoall,half,0,1000,1"),
             Catch::Contains("nccl.csv:9: column num_gpus = \"0\": must be an integer from 1 to "
                             "1048576"));
  CHECK_THAT(error("alltoall,half,1048577,1000,1"),
             Catch::Contains("column num_gpus = \"1048577\": must be an integer from 1 to"));
  CHECK_THAT(error("alltoall,half,2,0,1"),
             Catch::Contains("column message_size = \"0\": must be an integer from 1 to "
                             "1099511627776"));
  CHECK_THAT(error("alltoall,half,2,1099511627777,1"),
             Catch::Contains("column message_size = \"1099511627777\""));
}

TEST_CASE("catalog: a hardware file's one dense peak may be of 1 TFLOPS or less", "[models]") {
  // The file must give at least one peak above 0 (a map of none is refused, see
  // catalog_test.cpp); a small one counts.
  const std::string chip = R"(name: chip
source: written for this test
memory_gb: 10
memory_bandwidth_gb_per_s: 100
peak_tflops: {bf16: PEAK}
interconnect_gb_per_s: 10
memory_gib: 9
tables: none
prices: {mixed: {usd_per_hour: 0.5, source: nobody, date: 2026-01}}
)";
  for (const char* peak : {"1", "0.5"}) {
    std::string yaml = chip;
    yaml.replace(yaml.find("PEAK"), 4, peak);
    CHECK(parse_hardware(yaml, "chip.yaml").supported_dtypes() == std::vector<std::string>{"bf16"});
  }
}

TEST_CASE(
    "operator: without data parallelism a MoE's expert_parallel need not span the "
    "tensor-parallel group",
    "[models][operator]") {
  // tiny-moe at tensor_parallel 2 with the default expert_parallel 1 passes the settings' checks
  // (only data_parallel > 1 ties expert_parallel to the whole group) and goes on to the tables,
  // which measured moe_tp 1 only.
  const std::string tiny = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";
  const auto build = [&](const std::string& extra) {
    (void)make_step_time_model(
        Cfg::root(doc_of("kind: operator\nmodel: " + tiny +
                         "/tiny-moe.yaml\nhardware: h100-sxm\noperators: "
                         "{source: tables, path: " +
                         tiny + ", gpu: tiny_gpu, engine: vllm}\n" + extra)));
  };
  CHECK_THROWS_WITH(build("tensor_parallel: 2\n"),
                    Catch::Contains("no rows for 4 experts of hidden 256 x inter 128, top-2, in "
                                    "bfloat16 at moe_tp 2 moe_ep 1"));
  CHECK_THROWS_WITH(build("tensor_parallel: 2\nexpert_parallel: 1\n"),
                    Catch::Contains("at moe_tp 2 moe_ep 1"));
}

}  // namespace t_models_model_edges_test
