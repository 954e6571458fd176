// The docs against the code: every number a shipped scenario's parts read (the key, the range
// its reader enforces, its default) must be written the same way in a table row of docs/*.md: a
// row naming the key whose type cell states the same range and, where the code has a default,
// whose default cell starts with the same number. A range or default changed in the code and
// not in the docs, or the other way round, fails here, naming the key and what each says.
// docs/testing.md ("Docs hold the code's ranges and defaults") says how to read a failure.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/config.h"
#include "sim/scenario.h"
#include "tests/support.h"
#include "tests/test_paths.h"

namespace t_cli_config_docs_test {

using namespace servesim;
namespace fs = std::filesystem;

namespace {

/// One table row of the docs that documents a key: its name and the two cells after it.
struct DocRow {
  std::string file;
  int line = 0;
  std::string key, type, fallback;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' ');
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(' ') - a + 1);
}

/// The cells of a Markdown table row (`\|` inside a cell is not a separator).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cur += '|';
      ++i;
    } else if (line[i] == '|') {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return out;
}

/// The key names of a key cell: one backquoted name, or several separated by ", " (`min`,
/// `max`). A name may be dotted (`cpu_overhead.per_step_ms`) and step into lists with `[]`
/// (`points[].batch`); empty when the cell is anything else.
std::vector<std::string> keys_of_cell(const std::string& cell) {
  static const std::regex one(R"(`([a-z][a-z0-9_]*(\[\])?(\.[a-z][a-z0-9_]*(\[\])?)*)`)");
  static const std::regex list(R"(^`[a-z][a-z0-9_.\[\]]*`(, `[a-z][a-z0-9_.\[\]]*`)*$)");
  std::vector<std::string> out;
  if (!std::regex_match(cell, list)) return out;
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), one); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

/// Every row that names keys, with the two cells after the key cell, once a key. The key
/// cell is the column headed `key` (or `model key`, ...) where the table has one, else the
/// first or second cell that names keys.
std::vector<DocRow> doc_rows() {
  static const std::regex separator(R"(^\|[-:| ]+\|$)");
  std::vector<DocRow> rows;
  for (const auto& e : fs::directory_iterator(fs::path(SERVESIM_SOURCE_DIR) / "docs")) {
    if (e.path().extension() != ".md") continue;
    std::ifstream in(e.path());
    std::string line, header;
    int n = 0, key_column = -1;
    while (std::getline(in, line)) {
      ++n;
      line.erase(0, line.find_first_not_of(' '));  // a table inside a list item is indented
      if (line.rfind("|", 0) != 0) {
        header.clear();
        key_column = -1;
        continue;
      }
      const std::vector<std::string> c = cells_of(line);
      if (std::regex_match(line, separator)) {
        const std::vector<std::string> h = cells_of(header);
        for (size_t k = 0; k < h.size() && key_column < 0; ++k)
          if (h[k] == "key" || (h[k].size() > 4 && h[k].compare(h[k].size() - 4, 4, " key") == 0))
            key_column = static_cast<int>(k);
        continue;
      }
      header = line;
      const size_t first = key_column >= 0 ? static_cast<size_t>(key_column) : 0;
      const size_t last = key_column >= 0 ? first : 1;
      for (size_t k = first; k <= last && k + 2 < c.size(); ++k) {
        const std::vector<std::string> keys = keys_of_cell(c[k]);
        for (const std::string& key : keys)
          rows.push_back({e.path().filename().string(), n, key, c[k + 1], c[k + 2]});
        if (!keys.empty()) break;
      }
    }
  }
  return rows;
}

/// A number in one spelling: integral values as integers (1e9 -> 1000000000).
std::string canon_num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e18) return std::to_string(static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

/// A number as the docs write it: 1024, 1,048,576, 2^20, 10^9, 9e9, 0.5; nullopt otherwise.
std::optional<double> doc_number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  static const std::regex power(R"((\d+)\^(\d+))");
  std::smatch m;
  if (std::regex_match(s, m, power)) return std::pow(std::stod(m[1]), std::stod(m[2]));
  static const std::regex plain(R"(-?\d+(\.\d+)?(e\d+)?)");
  if (std::regex_match(s, plain)) return std::stod(s);
  return std::nullopt;
}

/// Numbers in the code's words: 2^20 -> 1048576, 1,024 -> 1024, 0.5 stays.
std::string canon_numbers(const std::string& text) {
  static const std::regex doc_num(R"([0-9][0-9,.^e]*[0-9]|[0-9])");
  std::string canon;
  size_t last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), doc_num);
       it != std::sregex_iterator(); ++it) {
    canon += text.substr(last, it->position() - last);
    const std::optional<double> v = doc_number(it->str());
    canon += v ? canon_num(*v) : it->str();
    last = it->position() + it->length();
  }
  return canon + text.substr(last);
}

/// What a doc's type cell allows, in KeyUse::allowed's words ("integer from 1 to 1024"), or
/// "" when the cell states no range servesim's readers could enforce (a list, a map, a bound
/// that is a formula). A bound may be another key in backquotes (`integer from 1 to
/// `experts``): the reader's bound is then that key's value, and range_matches takes any number
/// for it.
std::string doc_allowed(const std::string& cell) {
  // A bound: a number (ending in a digit, so that "10^6, required" leaves the comma), or a key.
  const std::string num = R"((-?[0-9][0-9,.^e]*[0-9]|-?[0-9]|`[a-z][a-z0-9_.]*`))";
  const std::string end = R"((?![0-9a-z_]).*)";
  // "integer", "numbers," ... then the range in one of these spellings.
  const std::string type = R"(^(integer|number)s?,? ?)";
  const std::vector<std::pair<std::regex, std::string>> forms{
      {std::regex(type + "(from )?" + num + " to " + num + end), "$1 from $3 to $4"},
      {std::regex(type + "in \\(" + num + ", " + num + R"(\].*)"), "$1 > $2 and <= $3"},
      {std::regex(type + "in \\[" + num + ", " + num + R"(\].*)"), "$1 from $2 to $3"},
      // A range has no open top: a reader that refuses its max does so by a check of its own
      // (benchmark.percentile: (0, 100] read, 100 refused).
      {std::regex(type + "in \\(" + num + ", " + num + R"(\).*)"), "$1 > $2 and <= $3"},
      {std::regex(type + "> " + num + ",? (at most|and <=) " + num + end), "$1 > $2 and <= $4"},
      {std::regex(type + "(>=|>|<=) " + num + end), "$1 $2 $3"},
      // The value between -1 and 1 is refused by a check of its own ("must be -1 or at least 1").
      {std::regex("^-1 or integer from 1 to " + num + end), "integer from -1 to $1"},
      {std::regex(type + "(required)?$"), "$1"},
  };
  for (const auto& [re, fmt_] : forms) {
    std::smatch m;
    if (std::regex_match(cell, m, re)) return canon_numbers(m.format(fmt_));
  }
  return "";
}

/// Whether a doc's range (doc_allowed) is a code's (code_allowed): the same words, where a
/// bound the doc names as a key matches any number.
bool range_matches(const std::string& doc, const std::string& code) {
  if (doc.empty()) return false;
  std::istringstream d(doc), c(code);
  std::string dw, cw;
  while (true) {
    const bool more_d = static_cast<bool>(d >> dw), more_c = static_cast<bool>(c >> cw);
    if (!more_d || !more_c) return more_d == more_c;
    if (dw == cw) continue;
    if (dw.front() != '`' || !doc_number(cw)) return false;
  }
}

/// The number a default cell starts with ("256", "2^20 (KV-bound)", "0 (off)", "1.0"), in
/// canon_num's words; "" when it starts with none.
std::string default_number(const std::string& cell) {
  static const std::regex lead(R"(^`?(-?[0-9][0-9,.^e]*[0-9]|-?[0-9])`?(?![0-9a-z_.^]).*)");
  std::smatch m;
  if (!std::regex_match(cell, m, lead)) return "";
  const std::optional<double> v = doc_number(m[1]);
  return v ? canon_num(*v) : "";
}

/// A default the docs give as a formula over other keys, starting with one in backquotes
/// (`parameters`, `tensor_parallel x data_parallel`, `moe.csv`'s largest ...): the code's
/// default is then computed per scenario, and the number recorded is that scenario's.
bool derived_default(const std::string& cell) {
  return cell.size() > 1 && cell[0] == '`' && default_number(cell).empty();
}

/// A code range with its numbers in the same words as doc_allowed's.
std::string code_allowed(const std::string& allowed) {
  static const std::regex num(R"(-?[0-9][0-9.e+]*)");
  std::string canon;
  size_t last = 0;
  for (auto it = std::sregex_iterator(allowed.begin(), allowed.end(), num);
       it != std::sregex_iterator(); ++it) {
    canon += allowed.substr(last, it->position() - last);
    canon += canon_num(std::stod(it->str()));
    last = it->position() + it->length();
  }
  return canon + allowed.substr(last);
}

/// A default as KeyUse::fallback writes it ("256", "0.9", "1e+18") in canon_num's words; ""
/// for "required" and "none".
std::string code_number(const std::string& fallback) {
  static const std::regex num(R"(-?[0-9][0-9.]*(e[-+]?[0-9]+)?)");
  return std::regex_match(fallback, num) ? canon_num(std::stod(fallback)) : "";
}

/// Whether `v` is in a range as KeyUse::allowed writes it ("integer from 1 to 1024", "number >
/// 0 and <= 100", "number >= 0", "integer").
bool in_range(const std::string& allowed, double v) {
  static const std::regex form(
      R"(^(integer|number)( from (\S+) to (\S+)| (>=|>|<=) (\S+)( and <= (\S+))?)?$)");
  std::smatch m;
  REQUIRE(std::regex_match(allowed, m, form));
  if (m[3].matched) return std::stod(m[3]) <= v && v <= std::stod(m[4]);
  if (!m[5].matched) return true;
  const double b = std::stod(m[6]);
  const bool lower = m[5] == ">=" ? v >= b : m[5] == ">" ? v > b : v <= b;
  return lower && (!m[8].matched || v <= std::stod(m[8]));
}

/// A key path with its list indices left out: "step_time.points[3].ms" -> "step_time.points[].ms".
std::string without_indices(const std::string& path) {
  static const std::regex index(R"(\[[0-9]+\])");
  return std::regex_replace(path, index, "[]");
}

/// Whether a doc's key names the key at `path`: the path ends with it, at a dot (`ms` and
/// `points[].ms` both name step_time.points[].ms).
bool names(const std::string& doc_key, const std::string& path) {
  return path == doc_key ||
         (path.size() > doc_key.size() &&
          path.compare(path.size() - doc_key.size(), doc_key.size(), doc_key) == 0 &&
          path[path.size() - doc_key.size() - 1] == '.');
}

/// A shipped scenario with overrides, as `--set` writes them.
struct Variant {
  const char* config;
  std::vector<std::string> overrides;
};

/// Readers that read a key only when it is given, where no shipped scenario gives it: each
/// variant reaches some, so that their ranges are held to the docs too.
const std::vector<Variant>& variants() {
  static const std::vector<Variant> v{
      {"default.yaml",
       {"api={request_overhead_ms: 1, response_overhead_ms: 1, tokenize_ms_per_1k_tokens: 1, "
        "coalesce_ms: 1}"}},
      {"default.yaml",
       {"workload.synthetic.arrival={kind: gamma, rate_per_s: 4, cv: 2}",
        "workload.synthetic.output_tokens={kind: normal, mean: 100, stddev: 10}"}},
      {"default.yaml",
       {"workload.synthetic.arrival={kind: fixed, interval_s: 0.5}",
        "workload.transform={target_rate_per_s: 2}"}},
      {"default.yaml",
       {"workload.synthetic.arrival={kind: daily, mean_rate_per_s: 3, peak_to_trough: 5, "
        "peak_at_s: 50000}"}},
      {"default.yaml", {"scheduler={kind: sarathi, max_batch_size: 8, token_budget: 512}"}},
      {"default.yaml", {"scheduler={kind: vllm, version: \"0.6.6\", num_scheduler_steps: 4}"}},
      {"examples/tiny-trace.yaml", {"workload.trace.hash_block_tokens=16"}},
      {"examples/tiny-trace.yaml",
       {"kv={policy: paged, prefix_caching: true, capacity_tokens: 4096, offload: "
        "{kv_bytes_per_token: 1000, reload: if_faster, prefill_tokens_per_s: 1000, overlap: none, "
        "tiers: [{name: h, capacity_gib: 1, bandwidth_gb_s: 1, latency_us: 5, shared: false}]}}"}},
      {"examples/vllm-replay-rtxpro6000-llama-3.1-8b.yaml", {"step_time.skew_alpha=0.5"}},
      {"examples/operator-llama-3.1-8b-h100-vllm.yaml",
       {"step_time.operators.scale_to_hardware=true"}},
      {"examples/lora-azure-conv-llama-3.1-8b-h100.yaml",
       {"lora={adapters: 4, adapter_bytes: 1.0e7, peak_tflops: 100, peak_memory_gbps: 1000}"}},
      {"examples/lora-cluster-azure-conv-4x-h100.yaml", {"cluster.router.kind=lora_affinity"}},
      {"examples/speculative-eagle-azure-conv-llama-3.1-8b-h100.yaml",
       {"speculative={method: draft, k: 2, acceptance: {per_position: [0.8, 0.6]}, proposer: "
        "{host_ms: 0.1, step_time: {kind: linear, base_ms: 1, per_seq_ms: 0.1}}}"}},
  };
  return v;
}

/// Every number the parts of every shipped scenario (and of the variants) read, one entry per
/// distinct use.
std::vector<KeyUse> uses_of_shipped_scenarios() {
  const fs::path configs = fs::path(SERVESIM_SOURCE_DIR) / "configs";
  const std::set<fs::path> not_scenarios{"models", "hardware", "shape-roofline", "step_times",
                                         "sweeps"};
  KeyLog log;
  for (auto it = fs::recursive_directory_iterator(configs);
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && not_scenarios.count(it->path().lexically_relative(configs))) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().extension() != ".yaml") continue;
    (void)build_scenario(Document::load_file(it->path().string()));
  }
  for (const auto& [config, overrides] : variants()) {
    const std::shared_ptr<Document> doc = Document::load_file((configs / config).string());
    for (const std::string& o : overrides) doc->apply_override(o);
    INFO(config << " with " << overrides.front());
    (void)build_scenario(doc);
  }
  std::vector<KeyUse> out;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const KeyUse& u : log.uses())
    // A shape-roofline fit is written by scripts/fit_shape_roofline.py, not by hand; its
    // keys are documented with that script.
    if (u.file.find("shape-roofline") == std::string::npos &&
        seen.insert({without_indices(u.path), u.allowed, u.fallback}).second) {
      out.push_back(u);
      out.back().path = without_indices(u.path);
    }
  return out;
}

/// uses_of_shipped_scenarios(), built once for the cases that need it.
const std::vector<KeyUse>& shipped_uses() {
  static const std::vector<KeyUse> uses = uses_of_shipped_scenarios();
  return uses;
}

}  // namespace

TEST_CASE("config docs: every range and default a scenario's reader has is the one the docs give",
          "[config][docs]") {
  const std::vector<DocRow> rows = doc_rows();
  const std::vector<KeyUse>& uses = shipped_uses();
  CHECK(uses.size() > 100);
  std::string missing, wrong_default;
  int checked = 0, defaults_checked = 0;
  for (const KeyUse& u : uses) {
    const std::string want = code_allowed(u.allowed);
    // The default is checked where the code has a number for it ("required" and "none" are
    // not numbers; a default the docs say is computed from other keys is not checked). A
    // number outside the key's own range is no value a user could give but a reader's mark for
    // "not given" (slo.accelerators, transform.max_context_tokens: 0), which the docs say in
    // words; it is not checked either.
    std::string want_default = code_number(u.fallback);
    if (!want_default.empty() && !in_range(u.allowed, std::stod(u.fallback))) want_default.clear();
    std::string seen, seen_defaults;
    bool found = false, default_found = false;
    for (const DocRow& r : rows) {
      if (!names(r.key, u.path)) continue;
      seen += fmt::format("\n    {}:{}: \"{}\"", r.file, r.line, r.type);
      if (!range_matches(doc_allowed(r.type), want)) continue;
      found = true;
      default_found = default_found || default_number(r.fallback) == want_default ||
                      derived_default(r.fallback);
      seen_defaults += fmt::format("\n    {}:{}: \"{}\"", r.file, r.line, r.fallback);
    }
    ++checked;
    if (!found)
      missing += fmt::format("\n  {} ({}): the code allows \"{}\"; the docs say:{}", u.path, u.file,
                             u.allowed, seen.empty() ? " nothing" : seen);
    else if (!want_default.empty()) {
      ++defaults_checked;
      if (!default_found)
        wrong_default += fmt::format("\n  {} ({}): the code's default is {}; the docs say:{}",
                                     u.path, u.file, u.fallback, seen_defaults);
    }
  }
  INFO(checked << " keys checked, " << defaults_checked << " with a default");
  CHECK(missing == "");
  CHECK(wrong_default == "");
}

// The other way round: a row that states a range for a key some scenario reads must state one
// the code has for it (and a leading default number one of those readers' defaults), so that a
// stale row is caught even when another row of the same key is right.
TEST_CASE("config docs: every range and default the docs give a key a scenario reads is the code's",
          "[config][docs]") {
  const std::vector<DocRow> rows = doc_rows();
  const std::vector<KeyUse>& uses = shipped_uses();
  std::string stale;
  for (const DocRow& r : rows) {
    const std::string doc = doc_allowed(r.type);
    if (doc.empty()) continue;
    const std::string doc_default = default_number(r.fallback);
    std::set<std::string> code, code_defaults;
    bool found = false, default_found = false;
    for (const KeyUse& u : uses) {
      if (!names(r.key, u.path)) continue;
      code.insert(u.allowed);
      if (!range_matches(doc, code_allowed(u.allowed))) continue;
      found = true;
      const std::string d = code_number(u.fallback);
      if (d.empty() || !in_range(u.allowed, std::stod(u.fallback))) continue;
      code_defaults.insert(u.fallback);
      default_found = default_found || d == doc_default;
    }
    if (!code.empty() && !found) {
      stale +=
          fmt::format("\n  {}:{}: `{}` is \"{}\"; the code allows", r.file, r.line, r.key, r.type);
      for (const std::string& c : code) stale += fmt::format(" \"{}\"", c);
    }
    if (!doc_default.empty() && !code_defaults.empty() && !default_found) {
      stale += fmt::format("\n  {}:{}: `{}` defaults to \"{}\"; the code's defaults:", r.file,
                           r.line, r.key, r.fallback);
      for (const std::string& c : code_defaults) stale += " " + c;
    }
  }
  CHECK(stale == "");
}

TEST_CASE("config docs: every number a scenario reads has a plausible upper bound",
          "[config][docs]") {
  // A size, rate, duration or count without a top accepts a unit slip (bytes as GiB) as an
  // absurd deployment; core/units.h holds the bounds. The seed is any 63-bit number by design.
  const std::set<std::string> unbounded_by_design{"seed"};
  std::string open;
  for (const KeyUse& u : shipped_uses()) {
    const bool bounded =
        u.allowed.find(" to ") != std::string::npos || u.allowed.find("<= ") != std::string::npos;
    if (!bounded && !unbounded_by_design.count(u.path))
      open += fmt::format("\n  {} ({}, read from {})", u.path, u.allowed, u.file);
  }
  INFO("keys without an upper bound:" << open);
  CHECK(open.empty());
}

TEST_CASE("config docs: the doc's type cells read as the code's ranges", "[config][docs]") {
  CHECK(doc_allowed("integer from 1 to 1024") == "integer from 1 to 1024");
  CHECK(doc_allowed("integer from 1 to 2^20, required") == "integer from 1 to 1048576");
  CHECK(doc_allowed("integers from 1 to 1,048,576") == "integer from 1 to 1048576");
  CHECK(doc_allowed("integer >= 1") == "integer >= 1");
  CHECK(doc_allowed("number > 0, at most 10^9") == "number > 0 and <= 1000000000");
  CHECK(doc_allowed("number in (0, 1]") == "number > 0 and <= 1");
  CHECK(doc_allowed("number from 0 to 1, or `profile`") == "number from 0 to 1");
  CHECK(doc_allowed("number, 0.001 to 10") == "number from 0.001 to 10");
  CHECK(doc_allowed("number in (0, 100)") == "number > 0 and <= 100");
  CHECK(doc_allowed("number in [0, 1]") == "number from 0 to 1");
  CHECK(doc_allowed("numbers > 0, at most 10^9, required for `mlperf_server` only") ==
        "number > 0 and <= 1000000000");
  CHECK(doc_allowed("number, > 0 and <= 10") == "number > 0 and <= 10");
  CHECK(doc_allowed("integer from 2 to 10^9, at least `min`") == "integer from 2 to 1000000000");
  CHECK(doc_allowed("-1 or integer from 1 to 2^40") == "integer from -1 to 1099511627776");
  CHECK(doc_allowed("number > `window_start_s`, at most 9e9") ==
        "number > `window_start_s` and <= 9000000000");
  CHECK(doc_allowed("integer from 1 to `experts`") == "integer from 1 to `experts`");
  CHECK(doc_allowed("integer dividing `tensor_parallel`") == "");
  CHECK(doc_allowed("map") == "");
  // A bound named as a key takes any number; the other words must be the same.
  CHECK(range_matches("integer from 1 to `experts`", "integer from 1 to 128"));
  CHECK_FALSE(range_matches("integer from 1 to `experts`", "integer from 0 to 128"));
  CHECK_FALSE(range_matches("integer from 1 to 1024", "integer from 1 to 1025"));
  CHECK_FALSE(range_matches("integer >= 1", "integer from 1 to 1024"));
  CHECK_FALSE(range_matches("", "integer"));
  CHECK(code_allowed(describe(IntRange{1, 1 << 20})) == "integer from 1 to 1048576");
  CHECK(code_allowed(describe(RealRange{0.0, 1e9, true})) == "number > 0 and <= 1000000000");
  CHECK(code_allowed(describe(k_non_negative)) == "number >= 0");
}

TEST_CASE("config docs: key cells and default cells read as the code's keys and defaults",
          "[config][docs]") {
  CHECK(keys_of_cell("`max_num_seqs`") == std::vector<std::string>{"max_num_seqs"});
  CHECK(keys_of_cell("`min`, `max`") == std::vector<std::string>{"min", "max"});
  CHECK(keys_of_cell("`points[].batch`") == std::vector<std::string>{"points[].batch"});
  CHECK(keys_of_cell("`continuous`, `orca`") == std::vector<std::string>{"continuous", "orca"});
  CHECK(keys_of_cell("`min` (default 1)").empty());
  CHECK(keys_of_cell("map").empty());
  CHECK(names("ms", "step_time.points[].ms"));
  CHECK(names("points[].ms", "step_time.points[].ms"));
  CHECK(names("layers", "layers"));
  CHECK_FALSE(names("s", "step_time.points[].ms"));
  CHECK_FALSE(names("ms", "step_time.per_step_ms"));
  CHECK(without_indices("step_time.points[12].ms") == "step_time.points[].ms");
  CHECK(default_number("256") == "256");
  CHECK(default_number("2^20 (KV-bound)") == "1048576");
  CHECK(default_number("0 (off)") == "0");
  CHECK(default_number("1.0") == "1");
  CHECK(default_number("0.14") == "0.14");
  CHECK(default_number("86,400") == "86400");
  CHECK(default_number("`16`") == "16");
  CHECK(default_number("-1") == "-1");
  CHECK(default_number("required") == "");
  CHECK(default_number("fp16") == "");
  CHECK(default_number("2x the batch") == "");
  CHECK(code_number("256") == "256");
  CHECK(code_number("0.9") == "0.9");
  CHECK(code_number("1e+09") == "1000000000");
  CHECK(code_number("required") == "");
  CHECK(code_number("none") == "");
  CHECK(in_range("integer from 1 to 1024", 1024));
  CHECK_FALSE(in_range("integer from 1 to 1024", 0));
  CHECK(in_range("number > 0 and <= 100", 100));
  CHECK_FALSE(in_range("number > 0 and <= 100", 0));
  CHECK_FALSE(in_range("number > 0 and <= 1e+09", 2e9));
  CHECK(in_range("number >= 0", 0));
  CHECK(in_range("integer", -5));
  CHECK(derived_default("`parameters`"));
  CHECK(derived_default("`tensor_parallel x data_parallel`"));
  CHECK_FALSE(derived_default("`16`"));
  CHECK_FALSE(derived_default("required"));
}

}  // namespace t_cli_config_docs_test
