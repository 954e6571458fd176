// The labels the worst-points table of `servesim calibrate` prints for Splitwise's rows
// (models/measurements.cpp, read_splitwise): each row gives a prefill step of `batch` prompts
// and the mean decode step, whose context is the prompt plus half the reply.
#include <catch2/catch.hpp>

#include "models/measurements.h"
#include "tests/test_paths.h"

namespace t_models_measurement_labels_test {

using namespace servesim;

TEST_CASE("splitwise: each row's two steps are labelled with its line, batch and context",
          "[models]") {
  MeasurementFilter f;
  f.model = "llama2-70b";
  f.hardware = "h100-80gb";
  f.tp = 4;
  const MeasurementSet set =
      read_splitwise(std::string(SERVESIM_SOURCE_DIR) + "/tests/data/splitwise_excerpt.csv", f);
  REQUIRE(set.samples.size() >= 4);
  // Line 2: prompt 512, batch 1, reply 128: the mean decode step reads 512 + 128 / 2 = 576.
  CHECK(set.samples[0].label == "line 2: prefill 1 x 512 tokens");
  CHECK(set.samples[1].label == "line 2: decode batch 1, context 576");
  CHECK(set.samples[1].shape.decode_context_tokens == 576);
  // Line 3: batch 2 of the same prompt and reply.
  CHECK(set.samples[2].label == "line 3: prefill 2 x 512 tokens");
  CHECK(set.samples[3].label == "line 3: decode batch 2, context 576");
  CHECK(set.samples[3].shape.decode_context_tokens == 2 * 576);
}

}  // namespace t_models_measurement_labels_test
