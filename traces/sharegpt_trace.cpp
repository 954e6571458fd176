// ShareGPT-style conversation datasets (the ShareGPT_V3 files vLLM's benchmarks sample from):
// one JSON array of entries, each with a "conversations" array of turns {"from", "value"}:
//   [{"id": "a1", "conversations": [{"from": "human", "value": "Hi"},
//                                   {"from": "gpt", "value": "Hello! How can I help?"}]}, ...]
// As vLLM's ShareGPT sampler does, an entry's first turn is the prompt and its second the
// output. An entry with fewer than two turns has no output: like a 0-token row of any format it
// is refused unless workload.trace.zero_tokens is skip, which drops and counts it (vLLM's
// sampler drops such entries). No tokenizer is at hand, so a text's
// token count is ceil(UTF-8 bytes / 4), at least 1: OpenAI's rule of thumb that a token is about
// four characters of English text (docs/workloads.md#sharegpt). The dataset has no times:
// every request arrives at 0 (an unpaced benchmark); workload.transform paces it.
//
// The file is parsed once, keeping only each text's length: a callback replaces every string
// longer than a short name by its byte count as it is parsed, so memory follows the entries,
// not the text.
#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"
#include "traces/factories.h"

namespace servesim {
namespace {

constexpr size_t k_kept_chars = 32;  // "from" names and ids stay; texts become their lengths

int64_t tokens_of_bytes(uint64_t bytes) {
  return std::clamp<int64_t>(static_cast<int64_t>((bytes + 3) / 4), 1, k_max_tokens);
}

class ShareGptRows final : public TraceRowReader {
 public:
  ShareGptRows(std::istream& in, const std::string& name, const TraceOptions& options)
      : m_name(name), m_skip_short(options.skip_zero_tokens) {
    const nlohmann::json::parser_callback_t shrink = [](int, nlohmann::json::parse_event_t event,
                                                        nlohmann::json& parsed) {
      if (event == nlohmann::json::parse_event_t::value && parsed.is_string() &&
          parsed.get_ref<const std::string&>().size() > k_kept_chars)
        parsed = parsed.get_ref<const std::string&>().size();
      return true;
    };
    try {
      m_data = nlohmann::json::parse(in, shrink);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: not a ShareGPT JSON file: {}", printable(name, 1024),
                                   printable(e.what(), 200)));
    }
    if (!m_data.is_array())
      throw InputError(fmt::format(
          "{}: a ShareGPT file is one JSON array of entries with \"conversations\"; this is a {}",
          printable(name, 1024), m_data.type_name()));
  }

  bool next(TraceRow& row) override {
    while (m_next < m_data.size()) {
      const nlohmann::json& entry = m_data[m_next++];
      row.line = m_next;
      const auto turns = entry.is_object() ? entry.find("conversations") : entry.end();
      if (!entry.is_object() || turns == entry.end() || !turns->is_array())
        throw InputError(
            fmt::format("{}: entry {}: must be an object with a \"conversations\" array of turns",
                        printable(m_name, 1024), m_next));
      row.arrival_ns = 0;
      row.arrival_text = "0";
      row.skip = nullptr;
      if (turns->size() < 2) {
        if (!m_skip_short)
          throw InputError(fmt::format(
              "{}: entry {}: {} turn(s): needs a prompt and a reply (workload.trace.zero_tokens: "
              "skip drops such entries, and counts them)",
              printable(m_name, 1024), m_next, turns->size()));
        row.prompt_tokens = 1;
        row.output_tokens = 0;
        row.skip = k_skipped_zero_tokens;
        return true;
      }
      row.prompt_tokens = tokens_of((*turns)[0], 1);
      row.output_tokens = tokens_of((*turns)[1], 2);
      return true;
    }
    return false;
  }
  std::string arrival_label() const override { return "arrival (0 for every entry)"; }
  const char* empty_trace() const override {
    return "the file has no entry with two turns (a prompt and a reply)";
  }

 private:
  int64_t tokens_of(const nlohmann::json& turn, int k) const {
    const auto value = turn.is_object() ? turn.find("value") : turn.end();
    if (value != turn.end() && value->is_string())
      return tokens_of_bytes(value->get_ref<const std::string&>().size());
    if (value != turn.end() && value->is_number_unsigned())  // a long text, as its byte count
      return tokens_of_bytes(value->get<uint64_t>());
    throw InputError(fmt::format("{}: entry {}: turn {} must be an object with a text \"value\"",
                                 printable(m_name, 1024), m_next, k));
  }

  std::string m_name;
  bool m_skip_short = false;
  nlohmann::json m_data;
  size_t m_next = 0;
};

}  // namespace

std::unique_ptr<TraceRowReader> make_sharegpt_rows(std::istream& in, const std::string& name,
                                                   const TraceOptions& options) {
  return std::make_unique<ShareGptRows>(in, name, options);
}

}  // namespace servesim
