// Keys the step models read from names and rows (docs/testing.md, "Fifth round: the step
// models"): a layer-profile folder's tpN name, the MoE table's listing of the shapes it holds
// when one key column of a row takes a neighbouring column's value, and the hinge fit's knee
// ladder, each rung found exactly.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "models/fit.h"
#include "models/layer_profile.h"
#include "models/operator_table_readers.h"
#include "models/step_time_model.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_models_reader_keys_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

TEST_CASE("layer profile: only a folder named tp and digits sets the expert parallelism",
          "[models][layer_profile]") {
  const fs::path src = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/llmservingsim-moe/tp1";
  const fs::path root = temp_dir();
  struct Name {
    const char* folder;
    double expert_parallel;
  };
  for (const Name n :
       {Name{"tp1", 1}, Name{"tp2", 2}, Name{"tp16", 16}, Name{"tp", 1}, Name{"ab2", 1},
        Name{"xy16", 1}, Name{"tpx", 1}, Name{"tp2x", 1}, Name{"xtp2", 1}, Name{"t2", 1}}) {
    INFO(n.folder);
    const fs::path dir = root / n.folder;
    fs::create_directories(dir);
    for (const char* f : {"attention.csv", "dense.csv", "moe.csv", "per_sequence.csv"})
      fs::copy_file(src / f, dir / f);
    const LayerProfile p(dir.string(), 2);
    CHECK(p.default_routing().expert_parallel == n.expert_parallel);
  }
}

namespace {

const std::string k_moe_header =
    "moe_dtype,hidden_size,inter_size,num_experts,topk,moe_tp_size,moe_ep_size,num_tokens,"
    "latency_ms_balanced\n";

std::string moe_message(const std::vector<std::array<std::string, 7>>& rows, const MoeShape& s) {
  std::string text = k_moe_header;
  for (const auto& r : rows) text += fmt::format("{},1,0.1\n", fmt::join(r, ","));
  const std::string path = write_temp("moe.csv", text);
  Breakpoints bp;
  try {
    (void)read_moe_table(path, s, "bf16", "balanced", bp);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE(
    "moe table: a row differing from the row before in one key column is named, whatever "
    "values the neighbouring columns hold",
    "[models][operator]") {
  // Columns: dtype, hidden, inter, experts, top-k, moe_tp, moe_ep. For each column c and each
  // neighbour k, two rows that differ in c only: (a) the first row holds the same value in c and
  // k, the second another in c; (b) the second row's c takes the first row's value of k. Either
  // way the second row is a shape of its own and must be listed.
  for (size_t c = 0; c < 7; ++c) {
    for (const size_t k : {c - 1, c + 1}) {
      if (k > 6) continue;  // c - 1 at c = 0 wraps
      for (const bool same_in_first : {true, false}) {
        INFO("column " << c << ", neighbour " << k << (same_in_first ? " (a)" : " (b)"));
        std::array<std::string, 7> first{"int4", "300", "200", "40", "20", "8", "16"};
        std::array<std::string, 7> second = first;
        if (same_in_first) {
          first[c] = first[k];
          second = first;
          second[c] = "77";
        } else {
          second[c] = first[k];
        }
        const bool model_column = c >= 1 && c <= 4;
        // For a model column the model is absent (hidden 999) and the listing names
        // hidden/inter/experts/top-k; otherwise the model is there in other splits and formats.
        MoeShape s;
        s.hidden_size = model_column ? 999 : 300;
        s.inter_size = 200;
        s.experts = 40;
        s.top_k = 20;
        const std::string msg = moe_message({first, second}, s);
        const auto name = [&](const std::array<std::string, 7>& r) {
          return model_column ? fmt::format("{}/{}/{}/{}", r[1], r[2], r[3], r[4])
                              : fmt::format("{} moe_tp {} moe_ep {}", r[0], r[5], r[6]);
        };
        CHECK_THAT(msg, Catch::Contains(name(first)) && Catch::Contains(name(second)));
      }
    }
  }
}

namespace {

StepShape step(int32_t seqs, int64_t prefill) {
  StepShape s;
  s.sequences = seqs;
  s.decode_sequences = prefill > 0 ? seqs - 1 : seqs;
  s.prefill_tokens = prefill;
  s.prefill_tokens_sq = static_cast<double>(prefill) * static_cast<double>(prefill);
  return s;
}

double hinge_ms(const StepShape& s, int64_t knee) {
  const int64_t tokens = s.prefill_tokens + s.decode_sequences;
  return 2 + 0.003 * s.sequences + 0.01 * static_cast<double>(s.prefill_tokens) +
         0.05 * static_cast<double>(std::max<int64_t>(0, tokens - knee));
}

}  // namespace

TEST_CASE("hinge fit: steps made with a knee on the ladder are fitted with that knee exactly",
          "[models][fit]") {
  // Prefills of one prompt and decode-only steps one token either side of the knee and two past
  // it, plus a step of one sequence and no token (the hinge's 0 at a knee of 0 against 1) and
  // small and large steps: only the true knee fits them all.
  for (const int64_t knee : {0, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048}) {
    INFO("knee " << knee);
    std::vector<StepSample> samples;
    const auto add = [&](const StepShape& s) { samples.push_back({s, hinge_ms(s, knee), ""}); };
    StepShape none;
    none.sequences = 1;
    add(none);
    for (const int64_t t :
         {int64_t{1}, int64_t{3}, knee - 1, knee, knee + 1, knee + 2, int64_t{3000}}) {
      if (t < 1) continue;
      add(step(1, t));
      add(step(static_cast<int32_t>(t), 0));
    }
    const auto m = fit_hinge(samples);
    CHECK_THAT(m->yaml(), Catch::Contains(fmt::format("knee_tokens: {}\n", knee)));
    for (const StepSample& s : samples) CHECK(m->predict_ms(s.shape) == Approx(s.ms).epsilon(1e-6));
  }
}

namespace {

// Two decodes at 16 and 1,024 KV tokens: mean 520, longest 1,024.
StepShape two_uneven_decodes() {
  StepShape s;
  s.sequences = s.decode_sequences = 2;
  s.decode_context_tokens = 16 + 1024;
  s.decode_context_min = 16;
  s.decode_context_max = 1024;
  return s;
}

/// The dense excerpt copied as `<variant>/<folder>`, beside a meta.yaml holding `meta`; the
/// step time of two uneven decodes under `skew_alpha: <alpha>`.
double skew_step_ms(const std::string& folder, const std::string& meta, const std::string& alpha) {
  const fs::path src = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/llmservingsim-tp1";
  const fs::path root = temp_dir();
  fs::create_directories(root / folder);
  for (const char* f : {"attention.csv", "dense.csv", "per_sequence.csv"})
    fs::copy_file(src / f, root / folder / f);
  std::ofstream(root / "meta.yaml") << "model: test\n" << meta;
  const auto m = make_step_time_model(
      Cfg::root(doc_of("kind: layer_profile\npath: " + (root / folder).string() +
                       "\nlayers: 2\nskew_alpha: " + alpha + "\n")));
  return m->step_ms(two_uneven_decodes());
}

}  // namespace

TEST_CASE("layer profile: skew_alpha: profile reads the tpN folder's degree, alpha from 0 to 1",
          "[models][layer_profile]") {
  const std::string fit =
      "skew_fit:\n  enabled: true\n  per_tp:\n    1:\n      alpha_default: 0.25\n"
      "    2:\n      alpha_default: 0.5\n    1234:\n      alpha_default: 0.75\n";
  const double at_25 = skew_step_ms("tp1", "", "0.25"), at_50 = skew_step_ms("tp1", "", "0.5"),
               at_75 = skew_step_ms("tp1", "", "0.75");
  REQUIRE(at_25 < at_50);
  // tp and two to four digits name the degree; any other folder reads the model's own (1).
  struct Folder {
    const char* name;
    double want;
  };
  for (const Folder f : {Folder{"tp1", at_25}, Folder{"tp2", at_50}, Folder{"tp1234", at_75},
                         Folder{"tp01234", at_25}, Folder{"tp", at_25}, Folder{"tp2x", at_25},
                         Folder{"xy2", at_25}, Folder{"t2", at_25}}) {
    INFO(f.name);
    CHECK(skew_step_ms(f.name, fit, "profile") == Approx(f.want).epsilon(1e-12));
  }
  // The pooled alpha at both ends of [0, 1] is taken; just past either end it is refused.
  for (const char* a : {"0", "1"}) {
    INFO(a);
    CHECK(skew_step_ms("tp1",
                       fmt::format("skew_fit:\n  enabled: true\n  per_tp:\n    1:\n"
                                   "      alpha_default: {}\n",
                                   a),
                       "profile") == Approx(skew_step_ms("tp1", "", a)).epsilon(1e-12));
  }
  for (const char* a : {"-0.01", "1.01"}) {
    INFO(a);
    CHECK_THROWS_WITH(skew_step_ms("tp1",
                                   fmt::format("skew_fit:\n  enabled: true\n  per_tp:\n    1:\n"
                                               "      alpha_default: {}\n",
                                               a),
                                   "profile"),
                      Catch::Contains("skew_fit.per_tp.1.alpha_default"));
  }
}

}  // namespace t_models_reader_keys_test
