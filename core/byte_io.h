#pragma once
// Plain values to bytes and back, for what one process hands another (the parallel engine's
// MPI ranks, sim/parallel_mpi.h): trivially copyable values as their bytes, strings and arrays
// as a count then their contents. Both ends are the same build on the same kind of machine.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace servesim {

template <class T>
void put_bytes(std::string& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

inline void put_string(std::string& out, std::string_view s) {
  put_bytes(out, static_cast<uint64_t>(s.size()));
  out.append(s);
}

template <class T>
void put_vector(std::string& out, const std::vector<T>& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  put_bytes(out, static_cast<uint64_t>(v.size()));
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

/// Reads what put_* wrote, in the same order; throws std::logic_error past the end.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : m_in(in) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  std::string get_string() {
    const auto n = get<uint64_t>();
    return std::string(take(n), n);
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = get<uint64_t>();
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  /// The next `n` bytes as they are.
  std::string_view get_view(size_t n) { return {take(n), n}; }
  [[nodiscard]] bool done() const { return m_at == m_in.size(); }

 private:
  const char* take(size_t n) {
    if (n > m_in.size() - m_at) throw std::logic_error("bytes from another rank end early");
    const char* p = m_in.data() + m_at;
    m_at += n;
    return p;
  }
  std::string_view m_in;
  size_t m_at = 0;
};

}  // namespace servesim
