// Every integer key a shipped scenario's parts read from the scenario file, at the ends of the
// range its reader enforces (docs/testing.md, "Fifth round: the step models"): the range each
// reader states (KeyLog, as tests/cli/config_docs_test.cpp reads them) must be the one it
// enforces, so one past either end is refused naming the key, and either end itself is not
// refused as out of range. A range widened or narrowed by one at any reader fails here.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <limits>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/config.h"
#include "core/errors.h"
#include "models/catalog.h"
#include "sim/scenario.h"
#include "tests/test_paths.h"

namespace t_sim_key_ranges_test {

using namespace servesim;
namespace fs = std::filesystem;

namespace {

/// An integer key of a scenario (or catalogue) file and the range its reader states.
struct IntKey {
  std::string scenario, path;
  int64_t min = 0, max = 0;
  bool bounded_above = false;
};

/// Whether `allowed` (KeyUse::allowed) is an integer range; its ends into `k`.
bool int_range(const std::string& allowed, IntKey& k) {
  static const std::regex from_to(R"(^integer from (-?[0-9]+) to (-?[0-9]+)$)");
  static const std::regex at_least(R"(^integer >= (-?[0-9]+)$)");
  std::smatch m;
  if (std::regex_match(allowed, m, from_to)) {
    k.min = std::stoll(m[1]);
    k.max = std::stoll(m[2]);
    k.bounded_above = true;
    return true;
  }
  if (std::regex_match(allowed, m, at_least)) {
    k.min = std::stoll(m[1]);
    return true;
  }
  return false;
}

/// Each integer key (by path, without list indices) of a few shipped scenarios, read in the
/// first scenario file that holds it.
std::vector<IntKey> scenario_int_keys() {
  // Three scenarios that build in milliseconds (no operator tables or layer profiles to read):
  // the linear and roofline step models and the default engine, KV and workload.
  const fs::path configs = fs::path(SERVESIM_SOURCE_DIR) / "configs";
  std::vector<fs::path> files{configs / "default.yaml"};
  for (const char* f :
       {"tiny-trace.yaml", "roofline-llama-3.1-8b-h100.yaml"})
    files.push_back(configs / "examples" / f);
  std::vector<IntKey> out;
  std::set<std::string> seen;
  for (const fs::path& f : files) {
    KeyLog log;
    (void)build_scenario(Document::load_file(f.string()));
    for (const KeyUse& u : log.uses()) {
      if (u.file != f.string() || u.path.find('[') != std::string::npos) continue;
      IntKey k{f.string(), u.path};
      if (int_range(u.allowed, k) && seen.insert(u.path).second) out.push_back(k);
    }
  }
  return out;
}

/// Whether `msg` refuses `path` = `value` as out of its stated range (the words Cfg's integer
/// reader uses: "must be an integer from A to B" or "must be >= A"), not by another rule.
bool range_refusal(const std::string& msg, const std::string& path, int64_t value) {
  if (msg.find(fmt::format("{} = \"{}\" at", path, value)) == std::string::npos) return false;
  if (msg.find(": must be an integer from ") != std::string::npos) return true;
  const size_t at = msg.find(": must be >= ");
  if (at == std::string::npos) return false;
  const char next = at + 13 < msg.size() ? msg[at + 13] : ' ';
  return next == '-' || (next >= '0' && next <= '9');
}

/// The message of building `scenario` with `path` set to `value`; "" when it builds.
std::string build_with(const std::string& scenario, const std::string& path, int64_t value) {
  try {
    const std::shared_ptr<Document> doc = Document::load_file(scenario);
    doc->apply_override(fmt::format("{}={}", path, value));
    (void)build_scenario(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("key ranges: every integer key of a scenario refuses one past each end of its range "
          "and takes each end",
          "[config]") {
  const std::vector<IntKey> keys = scenario_int_keys();
  CHECK(keys.size() > 20);
  for (const IntKey& k : keys) {
    INFO(k.path << " in " << k.scenario << ": from " << k.min << (k.bounded_above ? " to " : "")
                << (k.bounded_above ? std::to_string(k.max) : std::string(" up")));
    const std::string range_error = k.path + " = ";
    // One past each end: refused, naming the key and what it allows.
    if (k.min > std::numeric_limits<int64_t>::min())
      CHECK_THAT(build_with(k.scenario, k.path, k.min - 1),
                 Catch::Contains(range_error) && Catch::Contains(": must be"));
    if (k.bounded_above && k.max < std::numeric_limits<int64_t>::max())
      CHECK_THAT(build_with(k.scenario, k.path, k.max + 1),
                 Catch::Contains(range_error) && Catch::Contains(": must be"));
    // Each end: not refused as out of range (another rule may still refuse the value).
    for (const int64_t end : {k.min, k.max}) {
      if (end == k.max && !k.bounded_above) continue;
      const std::string msg = build_with(k.scenario, k.path, end);
      INFO(msg);
      CHECK_FALSE(range_refusal(msg, k.path, end));
    }
  }
}

namespace {

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The catalogue file's text with the key at dotted `path` set to `value`.
std::string with_value(const std::string& text, const std::string& path, int64_t value) {
  YAML::Node root = YAML::Load(text);
  YAML::Node cur = root;
  size_t from = 0;
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', from)) {
    YAML::Node next = cur[path.substr(from, dot - from)];
    cur.reset(next);
    from = dot + 1;
  }
  cur[path.substr(from)] = value;
  YAML::Emitter e;
  e << root;
  return e.c_str();
}

}  // namespace

TEST_CASE("key ranges: every integer key of a catalogue model or hardware file refuses one past "
          "each end of its range and takes each end",
          "[config][catalog]") {
  const fs::path configs = fs::path(SERVESIM_SOURCE_DIR) / "configs";
  size_t keys = 0;
  for (const bool model : {true, false}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(configs / (model ? "models" : "hardware")))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    const auto parse = [&](const std::string& text, const std::string& file) {
      try {
        if (model)
          (void)parse_model(text, file);
        else
          (void)parse_hardware(text, file);
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    std::set<std::string> seen;
    for (const fs::path& f : files) {
      const std::string text = text_of(f);
      std::vector<IntKey> ks;
      {
        KeyLog log;
        REQUIRE(parse(text, f.string()) == "");
        for (const KeyUse& u : log.uses()) {
          IntKey k{f.string(), u.path};
          if (u.path.find('[') == std::string::npos && int_range(u.allowed, k) &&
              seen.insert(u.path).second)
            ks.push_back(k);
        }
      }
      for (const IntKey& k : ks) {
        ++keys;
        INFO(k.path << " in " << k.scenario << ": from " << k.min
                    << (k.bounded_above ? " to " + std::to_string(k.max) : std::string(" up")));
        const std::string range_error = k.path + " = ";
        if (k.min > std::numeric_limits<int64_t>::min())
          CHECK_THAT(parse(with_value(text, k.path, k.min - 1), f.string()),
                     Catch::Contains(range_error) && Catch::Contains(": must be"));
        if (k.bounded_above && k.max < std::numeric_limits<int64_t>::max())
          CHECK_THAT(parse(with_value(text, k.path, k.max + 1), f.string()),
                     Catch::Contains(range_error) && Catch::Contains(": must be"));
        for (const int64_t end : {k.min, k.max}) {
          if (end == k.max && !k.bounded_above) continue;
          const std::string msg = parse(with_value(text, k.path, end), f.string());
          INFO(msg);
          CHECK_FALSE(range_refusal(msg, k.path, end));
        }
      }
    }
  }
  CHECK(keys > 5);
}

}  // namespace t_sim_key_ranges_test
