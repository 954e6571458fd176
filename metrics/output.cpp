#include "metrics/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.h"

namespace servesim {

nlohmann::ordered_json yaml_to_json(const YAML::Node& n) {
  using J = nlohmann::ordered_json;
  if (!n.IsDefined() || n.IsNull()) return nullptr;
  if (n.IsSequence()) {
    J a = J::array();
    for (const auto& e : n) a.push_back(yaml_to_json(e));
    return a;
  }
  if (n.IsMap()) {
    J o = J::object();
    for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return o;
  }
  const std::string& s = n.Scalar();
  if (s == "true") return true;
  if (s == "false") return false;
  int64_t i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && p == s.data() + s.size()) return i;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d)) return d;
  return s;
}

}  // namespace servesim
