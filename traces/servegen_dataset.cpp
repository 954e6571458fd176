#include "traces/servegen_dataset.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>

#include "core/errors.h"
#include "traces/trace_rows.h"

namespace servesim::servegen {
namespace {

constexpr int64_t k_max_tokens = 1'000'000'000;
constexpr double k_max_clock_s = 9.0e9;
/// A PMF's probabilities must add up to 1 within this (ServeGen's own loader allows 1.1e-5).
constexpr double k_pmf_sum_tolerance = 1e-4;
constexpr uintmax_t k_max_dataset_bytes = uintmax_t{256} << 20;

/// Parses a Python dict literal "{144: 0.25, 148: 0.75}" with integer keys. An empty dict gives
/// nullopt; anything malformed throws the reason with the character where it was found.
std::optional<Pmf> parse_pmf(std::string_view s) {
  size_t i = 0;
  const auto fail = [&](const std::string& what) -> void {
    throw InputError(fmt::format("{} at character {} of {}", what, i + 1, quote_input(s, 60)));
  };
  const auto skip_space = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  };
  const auto token = [&] {  // a number's characters
    const size_t start = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                            s[i] == '-' || s[i] == '+'))
      ++i;
    return s.substr(start, i - start);
  };
  std::vector<std::pair<int64_t, double>> entries;
  skip_space();
  if (i == s.size() || s[i] != '{') fail("expected '{' (a Python dict {tokens: probability, ...})");
  ++i;
  for (skip_space(); i < s.size() && s[i] != '}'; skip_space()) {
    const size_t key_at = i;
    const std::string_view key = token();
    int64_t k = -1;
    auto [kp, kec] = std::from_chars(key.data(), key.data() + key.size(), k);
    if (key.empty() || kec != std::errc() || kp != key.data() + key.size() || k < 1 ||
        k > k_max_tokens) {
      i = key_at;
      fail(fmt::format("key {} is not a token count (an integer from 1 to {})", quote_input(key),
                       k_max_tokens));
    }
    skip_space();
    if (i == s.size() || s[i] != ':') fail("expected ':' after a key");
    ++i;
    skip_space();
    const size_t value_at = i;
    const std::string_view value = token();
    double p = -1;
    auto [vp, vec] = std::from_chars(value.data(), value.data() + value.size(), p);
    if (value.empty() || vec != std::errc() || vp != value.data() + value.size() ||
        !std::isfinite(p) || p < 0) {
      i = value_at;
      fail(fmt::format("probability {} of key {} is not a finite number >= 0", quote_input(value),
                       k));
    }
    entries.emplace_back(k, p);
    skip_space();
    if (i < s.size() && s[i] == ',')
      ++i;
    else if (i < s.size() && s[i] != '}')
      fail("expected ',' or '}' after a value");
  }
  if (i == s.size()) fail("the dict is not closed with '}'");
  ++i;
  skip_space();
  if (i != s.size()) fail("text after the closing '}'");
  if (entries.empty()) return std::nullopt;
  std::sort(entries.begin(), entries.end());
  Pmf pmf;
  double sum = 0;
  for (size_t e = 0; e < entries.size(); ++e) {
    if (e > 0 && entries[e].first == entries[e - 1].first)
      throw InputError(
          fmt::format("key {} appears twice in {}", entries[e].first, quote_input(s, 60)));
    sum += entries[e].second;
    pmf.tokens.push_back(static_cast<int32_t>(entries[e].first));
    pmf.cumulative.push_back(sum);
  }
  if (!(std::fabs(sum - 1.0) <= k_pmf_sum_tolerance))
    throw InputError(fmt::format("the probabilities add up to {:.9g}, not 1 (within {:g})", sum,
                                 k_pmf_sum_tolerance));
  return pmf;
}

/// The 1-based line of `"field"` inside `"period"` in the JSON text (0 when not found): only for
/// messages, since the JSON parser keeps no positions.
size_t line_of(const std::string& text, const std::string& period, const char* field) {
  size_t at = text.find(fmt::format("\"{}\"", period));
  if (at == std::string::npos) return 0;
  const size_t f = *field ? text.find(fmt::format("\"{}\"", field), at) : std::string::npos;
  if (f != std::string::npos) at = f;
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n'));
}

}  // namespace

std::vector<Period> read_dataset(const std::string& path) {
  const std::string name = printable(path, 1024);
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) > k_max_dataset_bytes)
    throw InputError(fmt::format("{}: larger than {} MiB: not a ServeGen dataset", name,
                                 k_max_dataset_bytes >> 20));
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  if (!in) throw InputError(fmt::format("{}: cannot read the file", name));
  const std::string text = buf.str();
  nlohmann::json root;
  try {
    std::vector<std::string> keys;
    std::vector<size_t> key_starts;
    root = parse_json_unique_keys(text, name, keys, key_starts);
  } catch (const nlohmann::json::parse_error& e) {
    const size_t byte = std::min<size_t>(e.byte, text.size());
    throw InputError(fmt::format(
        "{}:{}: not valid JSON ({})", name,
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(byte), '\n'),
        printable(e.what(), 200)));
  }
  if (!root.is_object())
    throw InputError(
        fmt::format("{}: must be a JSON object mapping a period's start in seconds "
                    "to its \"input_tokens\" and \"output_tokens\"",
                    name));
  std::vector<Period> periods;
  for (const auto& [key, fields] : root.items()) {
    double start_s = -1;
    auto [p, kec] = std::from_chars(key.data(), key.data() + key.size(), start_s);
    const bool digits = !key.empty() && std::all_of(key.begin(), key.end(),
                                                    [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!digits || kec != std::errc() || p != key.data() + key.size() || start_s > k_max_clock_s)
      throw InputError(
          fmt::format("{}:{}: key {}: must be a period's start, an integer number of "
                      "seconds from 0 to 9e9",
                      name, line_of(text, key, ""), quote_input(key)));
    if (!fields.is_object())
      throw InputError(
          fmt::format("{}:{}: period {} must be an object with \"input_tokens\" "
                      "and \"output_tokens\"",
                      name, line_of(text, key, ""), quote_input(key)));
    Period period{start_s, {}, {}};
    bool empty = false;
    for (const char* field : {"input_tokens", "output_tokens"}) {
      const auto it = fields.find(field);
      if (it == fields.end() || !it->is_string())
        throw InputError(fmt::format("{}:{}: period {}: field \"{}\" {}", name,
                                     line_of(text, key, ""), quote_input(key), field,
                                     it == fields.end() ? "is missing"
                                                        : "must be a string holding a Python "
                                                          "dict {tokens: probability, ...}"));
      std::optional<Pmf> pmf;
      try {
        pmf = parse_pmf(it->get_ref<const std::string&>());
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}:{}: period {}, field \"{}\": {}", name,
                                     line_of(text, key, field), quote_input(key), field, e.what()));
      }
      if (!pmf)
        empty = true;
      else
        (field[0] == 'i' ? period.input : period.output) = std::move(*pmf);
    }
    if (!empty) periods.push_back(std::move(period));
  }
  // nlohmann orders keys as strings ("108000" before "21600"); order them as numbers.
  std::sort(periods.begin(), periods.end(),
            [](const Period& a, const Period& b) { return a.start_s < b.start_s; });
  return periods;
}

}  // namespace servesim::servegen
