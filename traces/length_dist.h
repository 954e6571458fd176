#pragma once
// Token-length distributions of a synthetic workload (its prompt_tokens and output_tokens maps).
// docs/workloads-synthetic.md defines each kind; read_length_dist() checks the keys.
//
// CONTRACT: draw_tokens() returns a length in [1, 10^9] and takes its randomness only from the
// Rng it is given (never from a std:: distribution), so a seed gives the same lengths on every
// platform. It does not change the distribution: the same Rng state gives the same length.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/random.h"

namespace servesim {

class LengthDist {
 public:
  virtual ~LengthDist() = default;
  [[nodiscard]] virtual int32_t draw_tokens(Rng& rng) const = 0;
};

/// Reads a length map (`kind` and that kind's keys). Throws InputError naming the key.
[[nodiscard]] std::unique_ptr<LengthDist> read_length_dist(const Cfg& c);
[[nodiscard]] std::vector<std::string> length_kind_names();

/// A request's prompt and output lengths, drawn together. CONTRACT: as LengthDist's, except that
/// a source may keep state (its place in a file): draw_pair() is called once per request, in
/// request order.
class LengthPairs {
 public:
  virtual ~LengthPairs() = default;
  /// {prompt tokens, output tokens}, each in [1, 10^9].
  [[nodiscard]] virtual std::pair<int32_t, int32_t> draw_pair(Rng& rng) = 0;
};

/// Two independent distributions, the prompt drawn before the output (prompt_tokens and
/// output_tokens).
[[nodiscard]] std::unique_ptr<LengthPairs> independent_lengths(std::unique_ptr<LengthDist> prompt,
                                                               std::unique_ptr<LengthDist> output);
/// Reads a `lengths_from` map: the rows of a length-only trace, each request taking one row's
/// prompt and output together (`path`, `prompt_column`, `output_column`, `order`). `requests`
/// is how many requests will draw: the orders that use each row at most once need that many rows.
[[nodiscard]] std::unique_ptr<LengthPairs> read_length_pairs(const Cfg& c, int64_t requests);
/// A workload's request lengths: its `lengths_from` rows (read_length_pairs) or its independent
/// `prompt_tokens` and `output_tokens`, never both (synthetic and closed-loop sources).
[[nodiscard]] std::unique_ptr<LengthPairs> read_request_lengths(const Cfg& c, int64_t requests);

/// Reads `key` of `c` as a non-empty YAML list of numbers, each in `r` and, when `integers`, a
/// whole number (a config file is at most 16 MiB, which bounds the list). A bad item is named with
/// its index: `a.hourly[3] = "x" at f.yaml:2:5: must be a number`. Shared with arrival_process.cpp.
// TODO(lead): this belongs in Cfg (core/config.h) beside list_of_maps.
[[nodiscard]] std::vector<double> get_number_list(const Cfg& c, const std::string& key, RealRange r,
                                                  bool integers);

}  // namespace servesim
