// The measurement readers at their edges: which Splitwise filters pick one group out of several,
// and which layer-profile attention rows become whole-step samples and with what shape.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

namespace {

/// Vidur's excerpt with `cpu_overheads.csv` replaced by `rows` (model_name, TP, batch and four
/// medians that sum to the step's CPU time); what read_vidur_tables makes of it at TP 2.
MeasurementSet vidur_with_overheads(const std::string& rows) {
  const fs::path src = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/vidur-a100";
  const fs::path d = temp_dir();
  for (const auto& e : fs::directory_iterator(src))
    fs::copy_file(e.path(), d / e.path().filename());
  std::ofstream(d / "cpu_overheads.csv", std::ios::trunc)
      << "model_name,tensor_parallel_degree,batch_size,schedule_median,sampler_e2e_median,"
         "prepare_inputs_e2e_median,process_model_outputs_median\n"
      << rows;
  MeasurementFilter f;
  f.layers = 2;
  return read_vidur_tables(d.string(), f);
}

}  // namespace

TEST_CASE("vidur: the CPU overhead is fitted to the rows of the tables' TP degree only",
          "[models][vidur]") {
  // At TP 2, model A: 1 ms at batch 8 and 2 ms at batch 16 (0.125 ms a sequence, 0 a step).
  // Rows at TP 4, of A and of another model, are passed over.
  const MeasurementSet set = vidur_with_overheads(
      "A,2,8,0.25,0.25,0.25,0.25\n"
      "A,4,8,1,1,1,1\n"
      "B,4,8,1,1,1,1\n"
      "A,2,16,0.5,0.5,0.5,0.5\n");
  REQUIRE(set.cpu_overhead);
  CHECK(set.cpu_overhead->overhead.per_sequence_ms == Approx(0.125).epsilon(1e-9));
  CHECK(set.cpu_overhead->overhead.per_step_ms == Approx(0).margin(1e-12));
  CHECK(set.cpu_overhead->points == 2);
  CHECK_THAT(set.cpu_overhead_source, Catch::EndsWith("cpu_overheads.csv for A at TP 2"));
  // One batch size at TP 2 (the others at TP 4): no line to fit.
  const MeasurementSet one = vidur_with_overheads("A,2,8,1,1,1,1\nA,4,16,1,1,1,1\n");
  CHECK_FALSE(one.cpu_overhead);
  CHECK_THAT(one.cpu_overhead_source,
             Catch::EndsWith("cpu_overheads.csv: one batch size only for A at TP 2"));
  // Two models at TP 2: none is chosen without --source-model.
  const MeasurementSet two = vidur_with_overheads("A,2,8,1,1,1,1\nB,2,8,1,1,1,1\n");
  CHECK_FALSE(two.cpu_overhead);
  CHECK_THAT(two.cpu_overhead_source,
             Catch::EndsWith("cpu_overheads.csv: several models at TP 2 (A, B); choose one with "
                             "--source-model"));
  // No row at TP 2.
  const MeasurementSet none = vidur_with_overheads("A,4,8,1,1,1,1\n");
  CHECK_FALSE(none.cpu_overhead);
  CHECK_THAT(none.cpu_overhead_source, Catch::EndsWith("cpu_overheads.csv: no rows at TP 2"));
}

TEST_CASE("vidur: attention rows of another shape or TP are passed over, each key column alone",
          "[models][vidur]") {
  // Each row of the excerpt's attention.csv again four times, with one of n_embd, n_q_head,
  // n_kv_head and the TP degree off by one and every time 999 ms: the composed steps must not
  // change.
  const fs::path src = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/vidur-a100";
  const fs::path d = temp_dir();
  for (const auto& e : fs::directory_iterator(src))
    fs::copy_file(e.path(), d / e.path().filename());
  std::ifstream in(src / "attention.csv");
  std::string header;
  std::getline(in, header);
  const auto split = [](const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    for (char ch : line + ",") {
      if (ch == ',') {
        out.push_back(cell);
        cell.clear();
      } else {
        cell += ch;
      }
    }
    return out;
  };
  const std::vector<std::string> names = split(header);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    REQUIRE(it != names.end());
    return static_cast<size_t>(it - names.begin());
  };
  const size_t keys[] = {column("n_embd"), column("n_q_head"), column("n_kv_head"),
                         column("num_tensor_parallel_workers")};
  std::string text = header + "\n", extra;
  for (std::string row; std::getline(in, row);) {
    text += row + "\n";
    for (size_t k : keys) {
      auto cells = split(row);
      cells[k] = std::to_string(std::stoll(cells[k]) + 1);
      for (size_t c = 0; c < cells.size(); ++c)
        if (names[c].rfind("time_stats.", 0) == 0 && !cells[c].empty()) cells[c] = "999";
      for (size_t c = 0; c < cells.size(); ++c) extra += (c ? "," : "") + cells[c];
      extra += "\n";
    }
  }
  std::ofstream(d / "attention.csv", std::ios::trunc) << text << extra;
  MeasurementFilter f;
  f.layers = 2;
  const MeasurementSet plain = read_vidur_tables(src.string(), f);
  const MeasurementSet mixed = read_vidur_tables(d.string(), f);
  REQUIRE(mixed.samples.size() == plain.samples.size());
  for (size_t i = 0; i < plain.samples.size(); ++i) {
    INFO(plain.samples[i].label);
    CHECK(mixed.samples[i].ms == plain.samples[i].ms);
  }
}

}  // namespace t_models_measurement_edges_test
