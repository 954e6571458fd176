#include "core/engine_versions.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <optional>

#include "core/errors.h"

namespace servesim {

namespace {

struct EngineLines {
  std::string_view engine, label, default_version;
  std::vector<std::string> lines;
};

// Each line is one whose behaviour servesim's models follow (docs/schedulers.md): vLLM's V0
// scheduler (0.5 to 0.7, preset from 0.6.6) and V1 (0.8 to 0.19, preset from 0.19); SGLang
// before (0.3) and with (0.4, 0.5) the overlap scheduler on by default; TensorRT-LLM's C++
// executor (0.16 to 0.21) and PyTorch backend (1.0 to 1.3). A new release is one more entry,
// once someone has checked that the defaults servesim assumes still hold for it.
const std::array<EngineLines, 3>& engine_lines() {
  static const std::array<EngineLines, 3> k_lines{{
      {"sglang", "SGLang", "0.4.0", {"0.3", "0.4", "0.5"}},
      {"trtllm",
       "TensorRT-LLM",
       "1.0.0",
       {"0.16", "0.17", "0.18", "0.19", "0.20", "0.21", "1.0", "1.1", "1.2", "1.3"}},
      {"vllm",
       "vLLM",
       "0.19.0",
       {"0.5", "0.6", "0.7", "0.8", "0.9", "0.10", "0.11", "0.12", "0.13", "0.14", "0.15", "0.16",
        "0.17", "0.18", "0.19"}},
  }};
  return k_lines;
}

const EngineLines* find_engine(std::string_view engine) {
  for (const EngineLines& e : engine_lines())
    if (e.engine == engine) return &e;
  return nullptr;
}

/// Digits at the front of `s` as an int (advancing `s` past them), or nullopt when there are
/// none or too many.
std::optional<int> take_number(std::string_view& s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return v;
}

/// MAJOR.MINOR[.PATCH[TAG]], TAG letters and digits (rc20, post1, dev0) optionally after a dot:
/// the line, or nullopt.
std::optional<EngineVersion> parse(std::string_view s) {
  const std::optional<int> major = take_number(s);
  if (!major || s.empty() || s.front() != '.') return std::nullopt;
  s.remove_prefix(1);
  const std::optional<int> minor = take_number(s);
  if (!minor) return std::nullopt;
  if (!s.empty()) {
    if (s.front() != '.') return std::nullopt;
    s.remove_prefix(1);
    if (!take_number(s)) return std::nullopt;
    if (!s.empty() && s.front() == '.') s.remove_prefix(1);
    for (char ch : s)
      if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z'))) return std::nullopt;
  }
  return EngineVersion{*major, *minor};
}

}  // namespace

const std::vector<std::string>& known_engine_versions(std::string_view engine) {
  static const std::vector<std::string> k_none;
  const EngineLines* e = find_engine(engine);
  return e ? e->lines : k_none;
}

std::string default_engine_version(std::string_view engine) {
  const EngineLines* e = find_engine(engine);
  return e ? std::string(e->default_version) : std::string();
}

EngineVersion read_engine_version(const Cfg& c, std::string_view engine) {
  const EngineLines* e = find_engine(engine);
  if (!e) c.fail("version", fmt::format("{} has no engine versions", engine));
  const std::string text = c.get_string("version", std::string(e->default_version));
  const std::string known = fmt::format("{}", fmt::join(e->lines, ", "));
  const std::optional<EngineVersion> v = parse(text);
  if (!v)
    c.fail("version", fmt::format("give the engine version as MAJOR.MINOR[.PATCH], e.g. \"{}\" "
                                  "(known {} versions: {})",
                                  e->default_version, e->label, known));
  const std::string line = fmt::format("{}.{}", v->major, v->minor);
  for (const std::string& l : e->lines)
    if (l == line) return *v;
  c.fail("version",
         fmt::format("{} {} is not a version servesim knows (known: {}; a patch release such as "
                     "{}.1 is taken as its MAJOR.MINOR)",
                     e->label, line, known, e->lines.back()));
}

}  // namespace servesim
