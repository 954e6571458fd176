#include "sim/speculative.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/catalog.h"

namespace servesim {

namespace {

constexpr int64_t k_max_k = 64;  // more drafts than any engine verifies
const std::vector<std::string>& method_names() {
  static const std::vector<std::string> names{"draft", "eagle", "mtp", "ngram"};
  return names;
}

// A list of `n` numbers in [0, 1] at `key` of `c`.
std::vector<double> read_shares(const Cfg& c, const std::string& key, size_t n,
                                const std::string& what) {
  const YAML::Node list = c.node(key);
  if (!list.IsSequence() || list.size() != n)
    c.fail(key, fmt::format("must be a list of {} numbers from 0 to 1 ({})", n, what));
  std::vector<double> out;
  for (const YAML::Node& item : list) {
    double v = -1;
    if (item.IsScalar()) {
      try {
        v = item.as<double>();
      } catch (const YAML::Exception&) {
        v = -1;
      }
    }
    if (!(v >= 0 && v <= 1))
      c.fail(key, fmt::format("must be a list of {} numbers from 0 to 1 ({}); item {} is \"{}\"", n,
                              what, out.size() + 1, item.IsScalar() ? item.Scalar() : "?"));
    out.push_back(v);
  }
  return out;
}

// P(at most j accepted), j = 0..k, from P(draft i accepted | drafts before it accepted).
std::vector<double> cdf_of_positions(const std::vector<double>& conditional) {
  std::vector<double> cdf(conditional.size() + 1);
  double reach = 1;  // P(at least i accepted)
  for (size_t i = 0; i < conditional.size(); ++i) {
    const double next = reach * conditional[i];
    cdf[i] = 1 - next;  // at most i: not all of the first i + 1
    reach = next;
  }
  cdf.back() = 1;
  return cdf;
}

std::vector<double> read_acceptance(const Cfg& a, int32_t k) {
  const std::string form = a.one_of({"rate", "per_position", "distribution"});
  if (form == "rate")
    return cdf_of_positions(std::vector<double>(k, a.get_real("rate", {0.0, 1.0})));
  if (form == "per_position")
    return cdf_of_positions(read_shares(a, "per_position", static_cast<size_t>(k),
                                        "the chance each draft is accepted after those before it"));
  const std::vector<double> p =
      read_shares(a, "distribution", static_cast<size_t>(k) + 1,
                  "the chance that exactly 0, 1, ..., k drafts are accepted");
  double sum = 0;
  std::vector<double> cdf;
  for (double x : p) cdf.push_back(sum += x);
  if (std::fabs(sum - 1) > 1e-6)
    a.fail("distribution", fmt::format("must sum to 1 (it sums to {:.6g})", sum));
  cdf.back() = 1;
  return cdf;
}

}  // namespace

double SpeculativeSpec::expected_accepted() const {
  double mean = 0, below = 0;
  for (size_t j = 0; j < accepted_cdf.size(); ++j) {
    mean += static_cast<double>(j) * (accepted_cdf[j] - below);
    below = accepted_cdf[j];
  }
  return mean;
}

std::shared_ptr<const SpeculativeSpec> read_speculative(const Cfg& root, const Cfg* step_time) {
  const std::optional<Cfg> c = root.optional_child("speculative");
  if (!c) return nullptr;
  auto s = std::make_shared<SpeculativeSpec>();
  const bool enabled = c->get_bool("enabled", true);
  s->method_name = c->get_choice("method", method_names());
  s->method = static_cast<SpecMethod>(
      std::find(method_names().begin(), method_names().end(), s->method_name) -
      method_names().begin());
  s->k = static_cast<int32_t>(c->get_int("k", {1, k_max_k}));
  s->accepted_cdf = read_acceptance(c->child("acceptance"), s->k);
  s->max_batch = c->get_int("max_batch", 0, {0, 1 << 20});
  const std::optional<Cfg> p = c->optional_child("proposer");
  if (p) s->host_ms = p->get_real("host_ms", 0.0, {0.0, 1e6});
  switch (s->method) {
    case SpecMethod::Draft:
      if (!p || !p->has("step_time"))
        c->fail("proposer",
                "method draft needs proposer.step_time: the draft model's step-time "
                "section (docs/speculative.md)");
      s->draft = make_step_time_model(p->child("step_time"));
      break;
    case SpecMethod::Eagle:
    case SpecMethod::Mtp: {
      const int64_t layers = p ? p->get_int("layers", 1, {1, 1024}) : 1;
      std::optional<int64_t> target =
          p ? p->optional_int("target_layers", {1, 1024}) : std::nullopt;
      if (!target && step_time && step_time->has("model"))
        target = read_model(*step_time, "model").layers;
      if (!target)
        c->fail("proposer", fmt::format("method {} needs proposer.target_layers (the target "
                                        "model's layers) when step_time names no catalogue model",
                                        s->method_name));
      s->proposer_fraction = static_cast<double>(layers) / static_cast<double>(*target);
      break;
    }
    case SpecMethod::Ngram:
      break;
  }
  if (!enabled) return nullptr;  // every key was still read and checked
  return s;
}

Speculator::Speculator(std::shared_ptr<const SpeculativeSpec> spec, uint64_t seed)
    : m_spec(std::move(spec)), m_rng(seed ^ 0x5bd1e995a2f3c4d7ULL) {
  m_stats.method = m_spec->method_name;
  m_stats.k = m_spec->k;
}

void Speculator::add_verify(int64_t context_tokens, int32_t drafts) {
  // The proposer drafts one token per pass for each sequence, after its stored context and the
  // token the target computed last (a plain decode's read).
  const int64_t read = context_tokens + 1;
  m_shape.decode_context_min =
      m_shape.sequences == 0 ? read : std::min(m_shape.decode_context_min, read);
  m_shape.decode_context_max = std::max(m_shape.decode_context_max, read);
  ++m_shape.sequences;
  ++m_shape.decode_sequences;
  m_shape.decode_context_tokens += read;
  m_drafts = std::max(m_drafts, drafts);
  ++m_stats.verifies;
  m_stats.drafted_tokens += drafts;
}

double Speculator::proposer_ms(const StepTimeModel& target) {
  if (m_shape.sequences == 0) return 0;
  ++m_stats.verify_steps;
  double ms = m_spec->host_ms;
  switch (m_spec->method) {
    case SpecMethod::Draft: {
      // k passes of the draft model over the batch, each reading one more token per sequence.
      StepShape s = m_shape;
      for (int32_t i = 0; i < m_drafts; ++i) {
        ms += m_spec->draft->step_ms(s);
        s.decode_context_tokens += s.sequences;
        ++s.decode_context_max;
        ++s.decode_context_min;
      }
      break;
    }
    case SpecMethod::Eagle:
    case SpecMethod::Mtp:
      ms += m_drafts * m_spec->proposer_fraction * target.step_ms(m_shape);
      break;
    case SpecMethod::Ngram:
      break;
  }
  m_stats.proposer_ms += ms;
  return ms;
}

int32_t Speculator::draw(int32_t drafts) {
  const double u = m_rng.uniform01();
  const std::vector<double>& cdf = m_spec->accepted_cdf;
  int32_t j = 0;
  while (j < drafts && u >= cdf[j]) ++j;  // at most `drafts`: the later ones were never drafted
  m_stats.accepted_tokens += j;
  return j;
}

}  // namespace servesim
