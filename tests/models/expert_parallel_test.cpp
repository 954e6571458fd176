// Wide expert parallelism's pieces (models/expert_parallel.h), each worked by hand: the busiest
// data-parallel rank, the all-to-all from a measured table and from the link model, the dispatch
// bytes, and a MoE block wider than the tables measured.
#include "models/expert_parallel.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "core/errors.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_expert_parallel_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// A source whose MoE block is measured up to moe_ep 8: 0.001 ms per expert-token pair on a GPU.
class FakeSource final : public OperatorSource {
 public:
  std::string describe() const override { return "fake"; }
  double gemm_ms(double, double, double, const std::string&) const override { return 1; }
  double context_attention_ms(double, double, const AttentionHeads&, const std::string&,
                              const std::string&) const override {
    return 1;
  }
  double generation_attention_ms(double, double, const AttentionHeads&, const std::string&,
                                 const std::string&) const override {
    return 1;
  }
  double moe_ms(double tokens, const MoeShape& s, const std::string&,
                const std::string&) const override {
    if (s.moe_ep > 8) throw InputError("no rows at moe_ep " + std::to_string(s.moe_ep));
    return 0.001 * tokens * s.top_k / s.moe_ep;
  }
  double allreduce_ms(double, double) const override { return 1; }
  double elementwise_ms(double) const override { return 1; }
};

}  // namespace

TEST_CASE("expert_parallel: the busiest rank takes each count's share rounded up", "[models]") {
  // 4 ranks; 7 decodes reading 700 KV tokens, 3 prefill chunks of 100 tokens.
  StepShape s;
  s.sequences = 10;
  s.decode_sequences = 7;
  s.prefill_tokens = 300;
  s.prefill_tokens_sq = 3 * 100.0 * 100.0;
  s.prefill_context_tokens = 60;
  s.decode_context_tokens = 700;
  s.decode_context_max = 150;
  const StepShape r = busiest_rank(s, 4);
  CHECK(r.decode_sequences == 2);  // ceil(7 / 4)
  CHECK(r.sequences == 3);         // 2 decodes + ceil(3 chunks / 4)
  // ceil(300 / 4) = 75 is below the largest chunk, 30000 / 300 = 100: one chunk, a third.
  CHECK(r.prefill_tokens == 100);
  CHECK(r.prefill_tokens_sq == Approx(10000));
  CHECK(r.prefill_context_tokens == 20);
  CHECK(r.decode_context_tokens == 200);  // 700 x 2 / 7
  CHECK(r.decode_context_max == 150);
  // One rank: the step itself.
  const StepShape one = busiest_rank(s, 1);
  CHECK(one.sequences == 10);
  CHECK(one.prefill_tokens == 300);
}

TEST_CASE("expert_parallel: the link model times an all-to-all across two nodes", "[models]") {
  // 16 GPUs, 8 a node, each sending 16 MB: 7/16 of it over NVLink at 450 GB/s (15.6 us), 8/16
  // over the network at 50 GB/s (160 us), at once, plus 10 us: 0.170 ms.
  const AllToAllLinks links{8, 450e6, 50e6, 0.01};
  CHECK(link_all_to_all_ms(links, 16e6, 16) == Approx(0.01 + 8e6 / 50e6));
  // In one node only NVLink: 7/8 x 16 MB / 450 GB/s + 10 us.
  CHECK(link_all_to_all_ms(links, 16e6, 8) == Approx(0.01 + 14e6 / 450e6));
  const AllToAll a2a(links, "");
  CHECK_FALSE(a2a.measured(8));
  CHECK(a2a.ms(16e6, 16) == Approx(0.17));
  CHECK(a2a.ms(16e6, 1) == 0);
}

TEST_CASE("expert_parallel: an all-to-all in one node is read from nccl's alltoall rows",
          "[models]") {
  const std::string csv = write_temp("nccl.csv",
                                     "op_name,nccl_dtype,num_gpus,message_size,latency_ms\n"
                                     "all_reduce,half,8,1024,5\n"
                                     "alltoall,int8,8,1024,5\n"
                                     "alltoall,half,8,1024,0.01\n"
                                     "alltoall,half,8,1048576,0.1\n");
  const AllToAll a2a(AllToAllLinks{8, 450e6, 50e6, 0.01}, csv);
  CHECK(a2a.measured(8));
  CHECK_FALSE(a2a.measured(4));  // not measured: the link model
  // 2048 bytes = 1024 half elements, a measured point.
  CHECK(a2a.ms(2048, 8) == Approx(0.01));
  // 32768 elements, halfway in logs between 1024 and 1048576: the geometric mean.
  CHECK(a2a.ms(65536, 8) == Approx(std::sqrt(0.01 * 0.1)));
  // 16 GPUs span two nodes: the link model, 0.17 ms as above.
  CHECK(a2a.ms(16e6, 16) == Approx(0.17));
}

TEST_CASE("expert_parallel: dispatch sends each token once to each GPU its experts are on",
          "[models]") {
  // top-8 of experts on 16 GPUs: 16 (1 - (15/16)^8) = 7.1 GPUs a token.
  CHECK(distinct_hit(16, 8) == Approx(16 * (1 - std::pow(15.0 / 16, 8))));
  MoeShape s{4096, 1536, 128, 8, 1, 16};
  CHECK(dispatch_bytes(10, s, 1, 1.5) == Approx(10 * distinct_hit(16, 8) * 4096 * 1.5));
}

TEST_CASE("expert_parallel: a MoE block wider than the tables scales the widest measured one",
          "[models]") {
  const FakeSource src;
  const MoeShape s{1024, 512, 64, 4, 1, 32};
  // Compute-bound roofs (tiny bandwidth cost): the ratio is 1, so 32-wide at T tokens is the
  // 8-wide block at T / 4: 0.001 x (T / 4) x 4 / 8.
  const MoeRoofs compute{1, 1e30, 1e6};
  double measured = 0;
  CHECK(wide_moe_ms(src, 800, s, "fp8", "balanced", compute, measured) ==
        Approx(0.001 * 200 * 4 / 8));
  CHECK(measured == 8);
  // Bandwidth-bound roofs: the ratio is the weights touched, 2 local experts at 32-wide (all
  // touched by 100 pairs) against 8 at 8-wide: a quarter of the measured time.
  const MoeRoofs memory{1, 1, 1e30};
  measured = 0;
  const double touched32 = distinct_hit(2, 800 * 4 / 32.0);
  const double touched8 = distinct_hit(8, 200 * 4 / 8.0);
  CHECK(wide_moe_ms(src, 800, s, "fp8", "balanced", memory, measured) ==
        Approx(0.001 * 200 * 4 / 8 * touched32 / touched8));
  // Measured widths are read as they are.
  const MoeShape narrow{1024, 512, 64, 4, 1, 4};
  measured = 0;
  CHECK(wide_moe_ms(src, 800, narrow, "fp8", "balanced", memory, measured) == Approx(0.001 * 800));
}

namespace {

const std::string k_tiny = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/aic-tiny";

std::unique_ptr<StepTimeModel> tiny_moe(const std::string& extra) {
  auto doc =
      doc_of("kind: operator\nmodel: " + k_tiny +
             "/tiny-moe.yaml\nhardware: h100-sxm\noperators: {source: tables, path: " + k_tiny +
             ", gpu: tiny_gpu, engine: vllm}\n" + extra);
  auto m = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  return m;
}

StepShape decodes(int n) {
  StepShape s;
  s.sequences = s.decode_sequences = n;
  s.decode_context_tokens = 100 * n;
  s.decode_context_max = s.decode_context_min = 100;
  return s;
}

}  // namespace

TEST_CASE("expert_parallel: a data-parallel step is the busiest rank plus the experts",
          "[models]") {
  // tests/data/aic-tiny (README there; tiny-moe: 2 layers, hidden 256, 4 experts of 128, top 2;
  // moe.csv measures moe_ep 1 only, 0.06 ms at 1 to 16 tokens). Two ranks, two decodes: each
  // rank runs one, as one GPU runs one decode alone, except that a layer's MoE block
  // (0.06 ms at 1 token) becomes
  //   dispatch + combine: link model in one node, 10 us + 1/2 x (1 token x 1.5 GPUs x 256 x 2 B)
  //     / 450 GB/s each (1.5 = 2 (1 - 1/4), the GPUs a token's 2 experts are on)
  //   + the experts at the step's 2 tokens on 2 GPUs: the 1-GPU block at 1 token (the same 2
  //     expert-token pairs) times the weights touched, 2 (1 - 1/4) = 1.5 of 2 local experts
  //     against 4 (1 - 9/16) = 1.75 of 4 (bandwidth-bound on an H100): x 6/7.
  auto one = tiny_moe("");
  auto two = tiny_moe("data_parallel: 2\n");
  const double a2a = 0.01 + 0.5 * 1.5 * 256 * 2 / 450e6;
  const double moe = 0.06;
  CHECK(two->step_ms(decodes(2)) - one->step_ms(decodes(1)) ==
        Approx(2 * (2 * a2a + moe * 6 / 7 - moe)).epsilon(1e-4));
  // A third decode goes to one of the ranks: the busiest now runs two.
  CHECK(two->step_ms(decodes(3)) > two->step_ms(decodes(2)));
}

TEST_CASE("expert_parallel: the wide keys are refused where they mean nothing", "[models]") {
  CHECK_THROWS_WITH(
      tiny_moe("expert_skew: 1.5\n"),
      Catch::Contains("expert_skew") && Catch::Contains("only with data_parallel > 1"));
  CHECK_THROWS_WITH(tiny_moe("data_parallel: 2\nexpert_parallel: 1\n"),
                    Catch::Contains("must be tensor_parallel x data_parallel (2)"));
  CHECK_THROWS_WITH(tiny_moe("data_parallel: 2\nexpert_skew: 0.5\n"),
                    Catch::Contains("expert_skew"));
  CHECK_THROWS_WITH(tiny_moe("data_parallel: 2\ndispatch_dtype: int4\n"),
                    Catch::Contains("dispatch_dtype"));
  // A chip stating no interconnect bandwidth (a hardware file requires one above 0; a chip built
  // in code may not) leaves nothing to time the all-to-all with: the key to give is named.
  HardwareSpec no_link;
  no_link.name = "no-link";
  auto wide = doc_of("data_parallel: 2\n");
  CHECK_THROWS_WITH(read_wide_ep(Cfg::root(wide), no_link, 2),
                    Catch::Contains("intra_node_gb_per_s") && Catch::Contains("no-link") &&
                        Catch::Contains("NVLink"));
  auto doc = doc_of("kind: operator\nmodel: " + k_tiny +
                    "/tiny-dense.yaml\nhardware: h100-sxm\ndata_parallel: 2\noperators: "
                    "{source: tables, path: " +
                    k_tiny + ", gpu: tiny_gpu, engine: vllm}\n");
  CHECK_THROWS_WITH(make_step_time_model(Cfg::root(doc)),
                    Catch::Contains("data_parallel") && Catch::Contains("is dense"));
}

}  // namespace t_models_expert_parallel_test
