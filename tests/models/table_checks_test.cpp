// Measured tables checked as they are read (models/table_checks.h, docs/data.md): a latency that
// is not a finite number > 0 is refused with its file, line and column; a latency that falls
// strongly as the work grows is warned about, naming the lines.
#include "models/table_checks.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"
#include "tests/text.h"

namespace t_models_table_checks_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

const std::string k_data = std::string(SERVESIM_SOURCE_DIR) + "/tests/data";

/// A copy of tests/data/`folder` in a fresh folder, with `from` replaced by `to` in `file`.
fs::path edited_copy(const std::string& folder, const std::string& file, const std::string& from,
                     const std::string& to) {
  const fs::path dir = temp_dir() / "tables";
  fs::copy(k_data + "/" + folder, dir, fs::copy_options::recursive);
  std::ifstream in(dir / file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  std::ofstream(dir / file, std::ios::trunc) << text.replace(at, from.size(), to);
  return dir;
}

/// The message of building a step model from `yaml`, or "no error".
std::string model_error(const std::string& yaml) {
  try {
    (void)make_step_time_model(Cfg::root(doc_of(yaml)));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string layer_profile(const fs::path& dir) {
  return "kind: layer_profile\npath: " + dir.string() + "\nlayers: 2\n";
}

/// What spdlog's default logger wrote while `f` ran.
template <class F>
std::string logged(F f) {
  std::ostringstream text;
  const std::shared_ptr<spdlog::logger> before = spdlog::default_logger();
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
  sink->set_pattern("%l: %v");
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  try {
    f();
  } catch (...) {
    spdlog::set_default_logger(before);
    throw;
  }
  spdlog::set_default_logger(before);
  return text.str();
}

}  // namespace

TEST_CASE("table checks: a strong drop is flagged, noise and repeated sizes are not",
          "[models][tables]") {
  LatencyDrops d("t.csv", "ms", "batch");
  // 2 -> 4: 10 to 4 is noise (above 1/3); 4 -> 8: 4 to 1 is a drop; 8 twice: the fastest kept.
  d.add({{1, 9, 2}, {2, 10, 3}, {4, 4, 4}, {8, 1, 5}, {8, 30, 6}, {16, 2, 7}});
  CHECK(d.lines() == std::vector<size_t>{5});
  CHECK(d.message() ==
        "t.csv: ms falls to less than 1/3 of the time at the next smaller batch on 1 row (line "
        "5): measurement noise or rows of another table? They are used as given");
  LatencyDrops none("u.csv", "ms", "batch");
  none.add({{1, 1, 2}, {2, 0.5, 3}, {4, 0.4, 4}});
  CHECK(none.message().empty());
}

TEST_CASE("table checks: a negative, zero or NaN time in a layer profile is refused",
          "[models][tables]") {
  for (const char* bad : {"-2.848", "0", "nan", "inf"}) {
    const fs::path dir = edited_copy("llmservingsim-tp1", "dense.csv", "act_fn,2,2.848",
                                     std::string("act_fn,2,") + bad);
    CHECK(model_error(layer_profile(dir)) == (dir / "dense.csv").string() +
                                                 ":3: column time_us = \"" + bad +
                                                 "\": must be a finite number > 0");
  }
  const fs::path dir = edited_copy("llmservingsim-tp1", "attention.csv", "\n", "\n0,0,1,1,-1\n");
  CHECK_THAT(model_error(layer_profile(dir)),
             Catch::StartsWith((dir / "attention.csv").string() + ":2: column time_us = \"-1\""));
}

TEST_CASE("table checks: a negative latency in an operator table is refused", "[models][tables]") {
  const fs::path dir = edited_copy("aic-tiny", "tiny_gpu/vllm-0.1.0/gemm.csv", "16,128,128,0.0025,",
                                   "16,128,128,-0.0025,");
  const std::string yaml = "kind: operator\nmodel: " + k_data +
                           "/aic-tiny/tiny-dense.yaml\nhardware: h100-sxm\noperators: {source: "
                           "tables, path: " +
                           dir.string() + ", gpu: tiny_gpu, engine: vllm}\n";
  // The tables a model needs are read when it is built, before any request runs.
  CHECK(model_error(yaml) ==
        "operators at test.yaml:4:12: tiny_gpu vllm-0.1.0 tables cannot time tiny-dense: " +
            (dir / "tiny_gpu/vllm-0.1.0/gemm.csv").string() +
            ":3: column latency_ms_bfloat16 = \"-0.0025\": must be a finite number > 0");
}

TEST_CASE("table checks: a layer whose time falls strongly as tokens grow is warned about",
          "[models][tables]") {
  const fs::path dir =
      edited_copy("llmservingsim-tp1", "dense.csv", "act_fn,16,2.987", "act_fn,16,0.5");
  const std::string log = logged([&] { CHECK(model_error(layer_profile(dir)) == "no error"); });
  CHECK(log == "warning: " + (dir / "dense.csv").string() +
                   ": time_us falls to less than 1/3 of the time at the next smaller tokens of "
                   "the same layer on 1 row (line 4): measurement noise or rows of another "
                   "table? They are used as given\n");
  // The shipped excerpt has no such row: nothing is logged for it.
  CHECK(logged([&] { (void)model_error(layer_profile(k_data + "/llmservingsim-tp1")); }).empty());
}

}  // namespace t_models_table_checks_test
