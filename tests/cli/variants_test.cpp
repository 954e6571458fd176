// The shipped configs with one or two of their own keys moved to the edges of what the key
// allows, answers pinned. The config goldens (cli_test.cpp) pin each example as written; most
// code paths there see only the values an example happens to use. Here every number a fast
// shipped scenario reads (found by a KeyLog, with its range and default) is a candidate, and the
// values tried are the ones a boundary mistake would tell apart: the range's ends, one step
// inside and one step outside them, the default and its neighbours, double and half the value
// the file gives. Each variant's outcome is recorded in tests/data/golden/variants.json: the
// summary's figures, the printed table and requests.csv's figures for a run that succeeds, or the
// exit status and message for one that is refused. The test replays every recorded variant and
// requires the same outcome (figures to 1e-9 relative, as the config goldens).
//
// When a change is meant to move them, rewrite the file and read its diff:
//
//   SERVESIM_REWRITE_VARIANTS=1 build/tests/servesim_tests "[variants]"
//
// The rewrite draws the variants again from the same seed (VARIANT_SEED) over the configs and
// keys of the tree at hand, so a new key or config enters the set at the next rewrite. Variants
// whose run takes longer than k_max_variant_ms on the machine that rewrites are left out, and
// the draw stops when the recorded runs add up to k_budget_ms, to keep the suite fast.
// SERVESIM_REWRITE_VARIANTS=same records the recorded variants' new answers instead.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/config.h"
#include "sim/scenario.h"
#include "tests/golden_figures.h"
#include "tests/support.h"
#include "tests/test_paths.h"
#include "tests/text.h"

namespace t_cli_variants_test {

using namespace servesim;
using namespace servesim::test;
using namespace servesim::test::golden;
namespace fs = std::filesystem;

namespace {

const fs::path k_golden = fs::path(SERVESIM_SOURCE_DIR) / "tests/data/golden/variants.json";
constexpr uint64_t k_seed = 37;            // VARIANT_SEED
constexpr double k_max_base_ms = 40;       // a config slower than this is no base
constexpr double k_max_variant_ms = 80;    // a variant slower than this is left out
constexpr double k_budget_ms = 3500;       // the recorded runs' total
constexpr int k_variants_per_config = 10;  // drawn per base config (before the budget)

/// The shipped scenario configs, relative to configs/ (as cli_test.cpp walks them).
std::vector<std::string> scenario_configs() {
  const fs::path configs = fs::path(SERVESIM_SOURCE_DIR) / "configs";
  const std::set<fs::path> not_scenarios{"models", "hardware", "shape-roofline", "step_times",
                                         "sweeps"};
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(configs);
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && not_scenarios.count(it->path().lexically_relative(configs))) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().extension() == ".yaml")
      out.push_back(it->path().lexically_relative(configs).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Outcome {
  int code = 0;
  std::string error;                    ///< for a refused run: its message, the root as ROOT
  std::map<std::string, Json> figures;  ///< for a run that succeeds
  double ms = 0;                        ///< its wall time (only to choose variants)
};

/// Runs `config` with `sets` as `servesim run --check` does from the command line.
Outcome run_variant(const std::string& config, const std::vector<std::string>& sets) {
  const fs::path dir = temp_dir() / "out";
  std::vector<std::string> args{
      "run",           (fs::path(SERVESIM_SOURCE_DIR) / "configs" / config).string(),
      "--out",         dir.string(),
      "--no-progress", "--check"};
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  const auto t0 = std::chrono::steady_clock::now();
  const CliResult r = cli(args);
  Outcome o;
  o.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  o.code = r.code;
  if (r.code != 0) {
    o.error = replace_all(replace_all(r.err, dir.string(), "OUT"), SERVESIM_SOURCE_DIR, "ROOT");
    return o;
  }
  Json summary;
  std::ifstream(dir / "summary.json") >> summary;
  flatten(summary, "", o.figures);
  o.figures["(stdout)"] = replace_all(r.out, dir.string(), "OUT");
  if (fs::exists(dir / "requests.csv")) csv_figures(dir / "requests.csv", o.figures);
  return o;
}

/// A number as YAML reads it back exactly: integers plainly, reals in the shortest form.
std::string yaml_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

/// What a reader allows, from KeyUse::allowed's words ("integer from 1 to 1024", "number > 0",
/// "number > 0 and <= 1", "integer <= 8", "number").
struct Allowed {
  bool integer = false;
  std::optional<double> lo, hi;
  bool lo_exclusive = false;
  [[nodiscard]] bool admits(double x) const {
    if (lo && (lo_exclusive ? x <= *lo : x < *lo)) return false;
    return !(hi && x > *hi);
  }
};

Allowed parse_allowed(const std::string& allowed) {
  static const std::regex num(R"(-?[0-9][0-9.e+-]*)");
  std::vector<double> b;
  for (auto it = std::sregex_iterator(allowed.begin(), allowed.end(), num);
       it != std::sregex_iterator(); ++it)
    b.push_back(std::stod(it->str()));
  Allowed a;
  a.integer = allowed.rfind("integer", 0) == 0;
  if (allowed.find(" from ") != std::string::npos && b.size() == 2) {
    a.lo = b[0];
    a.hi = b[1];
  } else if (allowed.find(" and <= ") != std::string::npos && b.size() == 2) {
    a.lo = b[0];
    a.lo_exclusive = true;
    a.hi = b[1];
  } else if (allowed.find(" >= ") != std::string::npos && b.size() == 1) {
    a.lo = b[0];
  } else if (allowed.find(" > ") != std::string::npos && b.size() == 1) {
    a.lo = b[0];
    a.lo_exclusive = true;
  } else if (allowed.find(" <= ") != std::string::npos && b.size() == 1) {
    a.hi = b[0];
  }
  return a;
}

/// The values a boundary mistake would tell apart, for a key whose reader allows `allowed`,
/// whose default is `fallback` and whose value in the file is `given` (empty when the file leaves
/// it out): the range's ends, one step inside and outside them, the default's and the given
/// value's neighbours, double and half. Split into those the range admits and those it refuses
/// (whose refusal, with its message, is pinned too).
std::pair<std::vector<std::string>, std::vector<std::string>> candidates(
    const std::string& allowed, const std::string& fallback, const std::string& given) {
  const Allowed a = parse_allowed(allowed);
  std::vector<double> v;
  auto step = [&](double x) { return a.integer ? 1.0 : 1e-3 * std::max(1.0, std::fabs(x)); };
  if (a.lo) v.insert(v.end(), {*a.lo, *a.lo + step(*a.lo), *a.lo - step(*a.lo)});
  if (a.hi) v.insert(v.end(), {*a.hi, *a.hi - step(*a.hi), *a.hi + step(*a.hi)});
  for (const std::string& s : {fallback, given}) {
    char* end = nullptr;
    const double x = std::strtod(s.c_str(), &end);
    if (s.empty() || end == s.c_str() || *end != '\0' || !std::isfinite(x)) continue;
    v.insert(v.end(), {x + step(x), x - step(x), x * 2});
    v.push_back(a.integer ? std::floor(x / 2) : x / 2);
  }
  if (v.empty()) v = {0, 1, 2};
  std::vector<std::string> in, out;
  std::set<std::string> seen;
  for (const double x : v) {
    // Huge values find the machine's limits (memory, time), not a boundary mistake.
    if (!std::isfinite(x) || std::fabs(x) > 1e6) continue;
    const std::string s = yaml_number(x);
    if (s == given || !seen.insert(s).second) continue;
    (a.admits(x) ? in : out).push_back(s);
  }
  return {in, out};
}

/// The text of the scalar at dotted `path` in `root`, or "" when absent or not a scalar.
std::string scalar_at(YAML::Node root, const std::string& path) {
  YAML::Node n = root;
  size_t at = 0;
  while (at <= path.size()) {
    const size_t dot = std::min(path.find('.', at), path.size());
    if (!n.IsMap()) return "";
    n = n[path.substr(at, dot - at)];
    if (!n.IsDefined()) return "";
    at = dot + 1;
  }
  return n.IsScalar() ? n.Scalar() : "";
}

/// One key a base config's own file reads, with what its reader allows.
struct Key {
  std::string path, allowed, fallback, given;
};

/// The numeric keys `config` reads from its own file (not from the catalogue or data files it
/// names), once each; keys inside lists are left out (--set names map keys only).
std::vector<Key> keys_of(const std::string& config) {
  const std::string file = (fs::path(SERVESIM_SOURCE_DIR) / "configs" / config).string();
  const std::shared_ptr<Document> doc = Document::load_file(file);
  KeyLog log;
  (void)build_scenario(doc);
  std::vector<Key> out;
  std::set<std::string> seen;
  for (const KeyUse& u : log.uses()) {
    if (u.file != doc->file() || u.path.find('[') != std::string::npos) continue;
    if (!seen.insert(u.path).second) continue;
    out.push_back({u.path, u.allowed, u.fallback, scalar_at(doc->root(), u.path)});
  }
  return out;
}

/// Writes outcome `o` into case `c`: its exit status, and its message or its figures.
void record(Json& c, const Outcome& o) {
  c.erase("error");
  c.erase("figures");
  c["code"] = o.code;
  if (o.code != 0) {
    c["error"] = o.error;
    return;
  }
  Json f = Json::object();
  for (const auto& [k, v] : o.figures) f[k] = v;
  c["figures"] = f;
}

/// Draws the variants afresh (the rewrite): k_variants_per_config per base config, a third of
/// them moving two keys at once and a fifth trying a value out of range, within the time budget.
Json draw_variants() {
  std::mt19937_64 rng(k_seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  Json cases = Json::array();
  double total = 0;
  for (const std::string& config : scenario_configs()) {
    const Outcome base = run_variant(config, {});
    if (base.code != 0 || base.ms > k_max_base_ms) continue;
    const std::vector<Key> keys = keys_of(config);
    if (keys.empty()) continue;
    std::set<std::vector<std::string>> tried;
    for (int i = 0; i < k_variants_per_config && total < k_budget_ms; ++i) {
      std::vector<std::string> sets;
      const int n_keys = (i % 3 == 2 && keys.size() > 1) ? 2 : 1;
      // One variant in five (and never one of two keys) tries a value the range refuses.
      const bool refused = n_keys == 1 && i % 5 == 4;
      std::set<std::string> used;
      for (int k = 0; k < n_keys; ++k) {
        const Key& key = keys[pick(keys.size())];
        if (!used.insert(key.path).second) continue;
        const auto [in, out] = candidates(key.allowed, key.fallback, key.given);
        const std::vector<std::string>& values = refused ? out : in;
        if (values.empty()) continue;
        sets.push_back(key.path + "=" + values[pick(values.size())]);
      }
      if (sets.empty() || !tried.insert(sets).second) continue;
      const Outcome o = run_variant(config, sets);
      if (o.ms > k_max_variant_ms) continue;
      total += o.ms;
      Json c{{"config", config}, {"set", sets}};
      record(c, o);
      cases.push_back(c);
    }
  }
  return cases;
}

}  // namespace

TEST_CASE(
    "cli variants: shipped configs with keys at their range's edges give their recorded answers",
    "[cli][variants]") {
  // Under the sanitizers the runs cost several times their Release time; the Release build
  // carries the figures (as for the config goldens' full runs).
  if (kSanitized) return;
  const char* rewrite = std::getenv("SERVESIM_REWRITE_VARIANTS");
  if (rewrite != nullptr) {
    // "same": the recorded variants' answers recorded again (an intended change of answers);
    // anything else: the variants drawn afresh (which depends on this machine's speed).
    Json cases;
    if (std::string(rewrite) == "same") {
      std::ifstream(k_golden) >> cases;
      REQUIRE(cases.is_array());
      for (Json& c : cases) {
        const Outcome o =
            run_variant(c["config"].get<std::string>(), c["set"].get<std::vector<std::string>>());
        record(c, o);
      }
    } else {
      cases = draw_variants();
    }
    const std::string tmp = k_golden.string() + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary);
      f << cases.dump(1) << '\n';
    }
    fs::rename(tmp, k_golden);
    size_t refused = 0;
    for (const Json& c : cases) refused += c["code"].get<int>() != 0;
    WARN("rewrote " << k_golden.string() << ": " << cases.size() << " variants, " << refused
                    << " refused");
    return;
  }
  Json cases;
  std::ifstream(k_golden) >> cases;
  REQUIRE(cases.is_array());
  CHECK(cases.size() > 100);
  size_t runs = 0, refusals = 0;
  for (const Json& c : cases) {
    const std::string config = c["config"].get<std::string>();
    const std::vector<std::string> sets = c["set"].get<std::vector<std::string>>();
    INFO(config << " with --set " << fmt::format("{}", fmt::join(sets, " --set ")));
    const Outcome o = run_variant(config, sets);
    CHECK(o.code == c["code"].get<int>());
    if (c["code"].get<int>() != 0) {
      ++refusals;
      CHECK(o.error == c["error"].get<std::string>());
      // A refusal is the input's fault, said in plain words: an internal error recorded here
      // would pin a bug as the answer.
      CHECK(c["error"].get<std::string>().find("internal error") == std::string::npos);
      continue;
    }
    ++runs;
    INFO("figures that moved (rewrite with SERVESIM_REWRITE_VARIANTS=1 if the change is meant):");
    CHECK(golden_differences(c["figures"], o.figures) == "");
  }
  // Both kinds are present: variants that run and variants that are refused.
  CHECK(runs > 50);
  CHECK(refusals > 20);
}

}  // namespace t_cli_variants_test
