// Which key a refusal of the operator tables points at (models/operator_tables.cpp,
// make_operator_tables): a GPU folder that is not there names `operators.gpu`, an engine folder
// that is not there names `operators.engine`, anything else `operators.path`; each message
// starts with the key, its value and where it was written.
#include <catch2/catch.hpp>
#include <string>

#include "core/config.h"
#include "core/errors.h"
#include "models/step_time_model.h"
#include "tests/test_paths.h"

namespace t_models_operator_refusal_keys_test {

using namespace servesim;

namespace {

std::string refusal(const std::string& operators) {
  const std::string yaml =
      "kind: operator\nmodel: llama-3.1-8b\nhardware: h100-sxm\noperators: {source: tables, " +
      operators + "}\n";
  try {
    (void)make_step_time_model(Cfg::root(std::make_shared<Document>(
        yaml, std::string(SERVESIM_SOURCE_DIR) + "/tests/models/grid.yaml")));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("operator tables: a refusal names the key whose folder is missing", "[models]") {
  const std::string tables = "path: ../../data/timings/aiconfigurator";
  CHECK_THAT(refusal(tables + ", gpu: h100_sxm, engine: sglang"),
             Catch::StartsWith("operators.engine = \"sglang\" at ") &&
                 Catch::Contains("engine \"sglang\": no such folder"));
  CHECK_THAT(refusal(tables + ", gpu: h400_sxm, engine: vllm"),
             Catch::StartsWith("operators.gpu = \"h400_sxm\" at ") &&
                 Catch::Contains("gpu \"h400_sxm\": no such folder"));
  CHECK_THAT(refusal("path: ../data/no-such-tables, gpu: h100_sxm, engine: vllm"),
             Catch::StartsWith("operators.path = \"../data/no-such-tables\" at "));
  // The engine folder's name as the message starts with it: a table missing there is the path's.
  CHECK(refusal(tables + ", gpu: h100_sxm, engine: vllm") == "(no error)");
}

}  // namespace t_models_operator_refusal_keys_test
