#pragma once
// An explicit, sorted list of named factories: one line per implementation, no static
// self-registration (a source missing from the build fails to link, not at run time).
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"

namespace servesim {

/// Whether `a` sorts strictly before `b` (usable in constant expressions).
constexpr bool name_before(const char* a, const char* b) {
  for (; *a != '\0' && *a == *b; ++a, ++b) {
  }
  return static_cast<unsigned char>(*a) < static_cast<unsigned char>(*b);
}

/// Declared `constexpr`, a registry is checked when it is compiled: an entry left empty (N larger
/// than the list) or a name out of order fails the build here, at the offending declaration.
template <typename Factory, size_t N>
class Registry {
 public:
  constexpr explicit Registry(std::array<std::pair<const char*, Factory>, N> entries)
      : m_entries(entries) {
    for (size_t i = 0; i < N; ++i) {
      // Only the name: comparing a function's address with null is not a constant expression
      // under the sanitizers (GCC).
      if (m_entries[i].first == nullptr)
        throw "registry: an entry is empty (is N larger than the list?)";
      if (i > 0 && !name_before(m_entries[i - 1].first, m_entries[i].first))
        throw "registry: names must be sorted and unique";
    }
  }

  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : m_entries) out.emplace_back(e.first);
    return out;
  }

  /// Reads `key` of `c` as one of the names (the message lists them) and returns its factory.
  [[nodiscard]] Factory pick(const Cfg& c, const std::string& key) const {
    return find(c.get_choice(key, names()));
  }

  /// REQUIRES: `name` is one of names().
  [[nodiscard]] Factory find(const std::string& name) const {
    for (const auto& e : m_entries)
      if (name == e.first) return e.second;
    return nullptr;
  }

 private:
  std::array<std::pair<const char*, Factory>, N> m_entries;
};

}  // namespace servesim
