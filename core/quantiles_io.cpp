// QuantileSketch to bytes and back (the parallel engine's MPI ranks hand their parts to rank 0).
#include <algorithm>
#include <stdexcept>

#include "core/byte_io.h"
#include "core/quantiles.h"

namespace servesim {

void QuantileSketch::save(std::string& out) const {
  put_bytes(out, m_count);
  put_bytes(out, m_sum);
  put_bytes(out, m_min);
  put_bytes(out, m_max);
  put_bytes(out, m_last);
  put_bytes(out, m_sorted);
  put_bytes(out, m_histogram_mode);
  if (m_histogram_mode) {  // the buckets in use, as (bucket, count)
    const auto used = static_cast<uint64_t>(
        std::count_if(m_buckets.begin(), m_buckets.end(), [](int64_t n) { return n != 0; }));
    put_bytes(out, used);
    for (size_t b = 0; b < m_buckets.size(); ++b)
      if (m_buckets[b] != 0) {
        put_bytes(out, static_cast<uint32_t>(b));
        put_bytes(out, m_buckets[b]);
      }
    return;
  }
  // add_repeated's runs, in their order, then the values kept one by one, in theirs.
  put_bytes(out, static_cast<uint64_t>(m_runs.size()));
  put_bytes(out, m_runs_sorted);
  for (const Run& r : m_runs) {
    put_bytes(out, r.v);
    put_bytes(out, r.n);
  }
  for (const Chunk& c : m_chunks) {
    const size_t k = &c == &m_chunks.back() ? m_tail_n : c.n;
    out.append(reinterpret_cast<const char*>(c.v.get()), k * sizeof(double));
  }
}

void QuantileSketch::load(ByteReader& in) {
  if (m_count != 0) throw std::logic_error("QuantileSketch::load into a sketch in use");
  m_count = in.get<int64_t>();
  m_sum = in.get<double>();
  m_min = in.get<double>();
  m_max = in.get<double>();
  m_last = in.get<double>();
  m_sorted = in.get<bool>();
  m_histogram_mode = in.get<bool>();
  if (m_histogram_mode) {
    m_buckets.assign(k_buckets, 0);
    const auto used = in.get<uint64_t>();
    for (uint64_t i = 0; i < used; ++i) {
      const auto b = in.get<uint32_t>();
      if (b >= k_buckets) throw std::logic_error("a sketch's bucket out of range");
      m_buckets[b] = in.get<int64_t>();
    }
    return;
  }
  const auto runs = in.get<uint64_t>();
  m_runs_sorted = in.get<bool>();
  m_runs.clear();
  m_run_values = 0;
  for (uint64_t i = 0; i < runs; ++i) {
    const auto v = in.get<double>();
    const auto n = in.get<int64_t>();
    if (n <= 0 || n > m_count - m_run_values)
      throw std::logic_error("a sketch's run count out of range");
    m_runs.push_back({v, n});
    m_run_values += n;
  }
  const auto n = static_cast<size_t>(plain_count());
  if (n == 0) return;
  Chunk c = make_chunk(n);
  const std::string_view bytes = in.get_view(n * sizeof(double));
  std::copy_n(bytes.data(), bytes.size(), reinterpret_cast<char*>(c.v.get()));
  c.n = n;
  m_chunks.clear();
  m_chunks.push_back(std::move(c));
  m_tail = m_chunks.back().v.get();
  m_tail_n = n;
  m_tail_cap = m_chunks.back().cap;
}

}  // namespace servesim
