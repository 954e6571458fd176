// The measurement readers at their edges: which Splitwise filters pick one group out of several,
// and which layer-profile attention rows become whole-step samples and with what shape.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "models/fit.h"
#include "models/layer_profile.h"
#include "models/measurements.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_measurement_edges_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

TEST_CASE("measurements: any one of model, hardware and tp is a selection from several groups",
          "[models][fit]") {
  // Two groups: (m1, h1, tp 1) and (m2, h1, tp 2), one row each.
  const std::string path = write_temp(
      "split.csv",
      "model,hardware,tensor_parallel,prompt_size,batch_size,token_size,prompt_time,token_time\n"
      "m1,h1,1,16,1,8,10,5\n"
      "m2,h1,2,32,2,8,20,6\n");
  CHECK_THROWS_WITH(read_splitwise(path, MeasurementFilter{}),
                    Catch::Contains("the file holds several model/hardware/tp groups"));
  MeasurementFilter model;
  model.model = "m1";
  CHECK(read_splitwise(path, model).samples.size() == 2);
  MeasurementFilter hardware;  // both groups run on h1: both are read
  hardware.hardware = "h1";
  CHECK(read_splitwise(path, hardware).samples.size() == 4);
  MeasurementFilter tp;
  tp.tp = 2;
  const auto two = read_splitwise(path, tp);
  REQUIRE(two.samples.size() == 2);
  CHECK(two.samples[0].shape.prefill_tokens == 64);
  CHECK(two.samples[0].ms == 20);
  // A single group needs no selection.
  const std::string one = write_temp(
      "one.csv",
      "model,hardware,tensor_parallel,prompt_size,batch_size,token_size,prompt_time,token_time\n"
      "m1,h1,1,16,1,8,10,5\n");
  CHECK(read_splitwise(one, MeasurementFilter{}).samples.size() == 2);
}

TEST_CASE(
    "measurements: each attention row with a whole-step form is a sample, a one-token "
    "chunk one more sequence",
    "[models][fit]") {
  const fs::path src = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/llmservingsim-tp1";
  const fs::path dir = temp_dir();
  for (const char* f : {"dense.csv", "per_sequence.csv"}) fs::copy_file(src / f, dir / f);
  // Rows: no work (skipped); a one-token chunk alone; a 16-token chunk beside 16 decodes (the
  // chunk and decode counts equal); a chunk continuing a prefix (skipped); 4 decodes alone.
  std::ofstream(dir / "attention.csv") << "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n"
                                       << "0,0,0,0,5\n"
                                       << "1,0,0,0,6\n"
                                       << "16,0,16,64,7\n"
                                       << "16,128,0,0,8\n"
                                       << "0,0,4,64,9\n";
  MeasurementFilter f;
  f.layers = 2;
  const MeasurementSet set = read_layer_profile(dir.string(), f);
  CHECK(set.description == "3 steps composed from the layer profiles in " + dir.string() +
                               " x 2 layers (2 chunk-continuation rows skipped)");
  REQUIRE(set.samples.size() == 3);
  const LayerProfile p(dir.string(), 2);
  const struct {
    int32_t seqs, decodes;
    int64_t context, prefill;
    double tokens, time_us;
  } want[] = {{1, 0, 0, 1, 1, 6}, {17, 16, 1024, 16, 32, 7}, {4, 4, 256, 0, 4, 9}};
  for (size_t i = 0; i < 3; ++i) {
    const StepShape& s = set.samples[i].shape;
    INFO(i);
    CHECK(s.sequences == want[i].seqs);
    CHECK(s.decode_sequences == want[i].decodes);
    CHECK(s.decode_context_tokens == want[i].context);
    CHECK(s.prefill_tokens == want[i].prefill);
    CHECK(s.prefill_tokens_sq == static_cast<double>(want[i].prefill * want[i].prefill));
    CHECK(set.samples[i].ms ==
          Approx((2 * want[i].time_us + p.non_attention_us(want[i].tokens, want[i].seqs)) / 1000)
              .epsilon(1e-12));
  }
}

}  // namespace t_models_measurement_edges_test
