// `servesim explain`: the memory, bandwidth and arithmetic figures, checked against hand
// arithmetic, and its bad arguments.
#include <catch2/catch.hpp>
#include <sstream>

#include "cli/cli.h"
#include "cli/explain_cmd.h"
#include "tests/support.h"

namespace t_cli_explain_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("explain: Llama-2 13B in 16-bit fits 32 2,048-token conversations in 80 GB",
          "[cli][explain]") {
  // Weights: 13,015,864,320 x 2 bytes = 26.03 GB. KV: 819,200 bytes a token x 2,048 = 1.68 GB.
  // Whole memory: floor((80 - 26.03) / 1.678) = floor(32.17) = 32.
  // At utilization 0.9: floor((72 - 26.03) / 1.678) = floor(27.40) = 27.
  const ExplainOptions o;  // bf16, 2,048 tokens, tp 1, utilization 0.9
  const ExplainFigures f =
      explain_figures(load_model("llama-2-13b"), load_hardware("a100-80gb"), o);
  CHECK(f.weight_bytes == 26031728640.0);
  CHECK(f.kv_bytes_per_conversation == 1677721600.0);
  CHECK(f.conversations_whole_memory == 32);
  CHECK(f.conversations_utilized == 27);
  // Batch 1 reads every weight once: 26.03 GB / 2,039 GB/s = 12.767 ms.
  CHECK(f.decode_ms_batch1 == Approx(26031728640.0 / 2039e9 * 1e3));
  // Ridge: 312 TFLOP/s / 2,039 GB/s = 153.02 FLOP/byte; 16-bit weights give 1 FLOP per byte per
  // sequence, so decode turns compute-bound (weights only) at batch 154.
  CHECK(f.ridge_flops_per_byte == Approx(312e12 / 2039e9));
  CHECK(f.compute_bound_batch_weights_only == 154);
  // With 2,048 tokens of KV a sequence: per sequence 2 x 13.0e9 + 4 x 40 x 40 x 128 x 2,048 =
  // 27,709,450,240 FLOPs over 2,049 x 819,200 = 1,678,540,800 bytes, 16.5 FLOP/byte at most:
  // never compute-bound.
  CHECK_FALSE(f.compute_bound_batch.has_value());
  CHECK(f.intensity_limit == Approx(27709450240.0 / 1678540800.0));

  const CliResult r = cli({"explain", "--model", "llama-2-13b", "--hardware", "a100-80gb"});
  CHECK(r.err == "");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("13,015,864,320 parameters x 2 bytes (bf16) = 26.03 GB"));
  CHECK_THAT(r.out, Catch::Contains("= 819,200 bytes per token"));
  CHECK_THAT(r.out, Catch::Contains("1.68 GB per conversation of 2,048 tokens"));
  CHECK_THAT(r.out,
             Catch::Contains("32 conversations in the whole 80 GB ((80.00 - 26.03) / 1.68 GB)"));
  CHECK_THAT(r.out, Catch::Contains("27 conversations in 80 GB x utilization 0.9 = 72.00 GB"));
  CHECK_THAT(r.out, Catch::Contains("12.77 ms per token, 78.3 tokens/s"));
  CHECK_THAT(r.out, Catch::Contains("= 153.0 FLOP/byte"));
  CHECK_THAT(r.out, Catch::Contains("with int8 weights (KV bf16, compute int8)"));
  // int8 weights: 13.02 GB; floor((80 - 13.02) / 1.678) = 39.
  CHECK_THAT(r.out, Catch::Contains("weights 13.02 GB; 39 conversations fit in the whole memory"));
}

TEST_CASE("explain: GPT-2 small moves 497.8 MB of fp32 weights per token", "[cli][explain]") {
  ExplainOptions o;
  o.weight = o.kv = o.compute = Dtype::Fp32;
  o.context_tokens = 1024;
  const ExplainFigures f =
      explain_figures(load_model("gpt2-small"), load_hardware("apple-m3-max"), o);
  CHECK(f.weight_bytes == 124439808.0 * 4);
  CHECK(f.step_weight_bytes == 497759232.0);
  // A step that moved 507 MB in 9.1 ms ran at 507e6 / 9.1e-3 = 55.7 GB/s.
  CHECK(achieved_gb_per_s(507, 9.1) == Approx(55.714).epsilon(1e-4));

  const CliResult r =
      cli({"explain", "--model", "gpt2-small", "--hardware", "apple-m3-max", "--weight-dtype",
           "fp32", "--context", "1024", "--measured-mb", "507", "--measured-ms", "9.1"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("124,439,808 parameters x 4 bytes (fp32) = 497.8 MB"));
  CHECK_THAT(r.out, Catch::Contains("measured: 507 MB in 9.1 ms = 55.7 GB/s achieved, 13.9% of "
                                    "apple-m3-max's 400 GB/s"));
  // The measured step alone needs neither model nor hardware.
  const CliResult m = cli({"explain", "--measured-mb", "507", "--measured-ms", "9.1"});
  CHECK(m.code == 0);
  CHECK(m.out == "measured: 507 MB in 9.1 ms = 55.7 GB/s achieved\n");
}

TEST_CASE("explain: tensor parallelism pools memory and splits the weights read",
          "[cli][explain]") {
  // Llama 3.1 70B in bf16 over 4 H100s: 141.11 GB of weights, 35.28 GB read per accelerator a
  // step; KV 327,680 bytes a token, 671.1 MB per 2,048-token conversation;
  // floor((320 - 141.11) / 0.6711) = 266.
  const CliResult r =
      cli({"explain", "--model", "llama-3.1-70b", "--hardware", "h100-sxm", "--tp", "4"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("= 141.11 GB, 35.28 GB per accelerator"));
  CHECK_THAT(r.out, Catch::Contains("266 conversations in the whole 4 x 80 GB"));
  CHECK_THAT(r.out, Catch::Contains("35.28 GB / 3,350 GB/s = 10.53 ms per token"));
}

TEST_CASE("explain: bad arguments exit 2 with a message", "[cli][explain]") {
  const CliResult unknown = cli({"explain", "--model", "llama-2-13", "--hardware", "a100-80gb"});
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("--model: unknown model \"llama-2-13\" (did you mean "
                                          "llama-2-13b?)"));
  const CliResult big = cli({"explain", "--model", "llama-2-70b", "--hardware", "h100-sxm"});
  CHECK(big.code == 2);
  CHECK(big.out == "");
  CHECK_THAT(big.err, Catch::Contains("llama-2-70b in bf16 needs 137.95 GB for its weights, more "
                                      "than h100-sxm's 80 GB"));
  const CliResult dtype =
      cli({"explain", "--model", "gpt2-small", "--hardware", "l4", "--weight-dtype", "bf17"});
  CHECK(dtype.code == 2);
  CHECK_THAT(dtype.err,
             Catch::Contains("--weight-dtype \"bf17\": unknown dtype (did you mean bf16?)"));
  const CliResult peak =
      cli({"explain", "--model", "gpt2-small", "--hardware", "h100-sxm", "--weight-dtype", "int4"});
  CHECK(peak.code == 2);
  CHECK_THAT(peak.err, Catch::Contains("h100-sxm has no int4 peak"));
  CHECK(cli({"explain", "--model", "gpt2-small"}).code == 2);
  CHECK(cli({"explain", "--model", "gpt2-small", "--hardware", "l4", "--tp", "0"}).code == 2);
  CHECK(cli({"explain", "--measured-mb", "5"}).code == 2);
  CHECK(cli({"explain", "--bogus"}).code == 2);
}

}  // namespace t_cli_explain_test
