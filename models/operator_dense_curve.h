#pragma once
// A LogCurve (models/log_interp.h) read at integer counts, for the operator step model's token
// and sequence curves (models/operator.cpp): value i is the curve at max(1, i), each computed on
// its first read and kept. A run reads few of the counts a table could hold (the Azure
// benchmark's scheduler bounds a step at 8,192 tokens of the table's 16,384 and 256 sequences
// of its 4,096), and each costs a log and an exp.
//
// Reads from several threads at once (replicas on the parallel engine's threads share a model)
// are safe: an entry is read and written as an atomic double (relaxed: a plain load and store
// on x86-64), 0 until written; two threads that fill the same entry write the same bits. A
// curve's value is an exp, never -0; one that is 0 (an exp that underflowed) is computed again
// at each read, with the same result.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#include "core/zeroed_pages.h"
#include "models/log_interp.h"

namespace servesim {

class DenseCurve {
 public:
  /// Counts 0 .. n - 1 of `curve`, which must outlive this (REQUIRES: n >= 1).
  DenseCurve(const LogCurve& curve, size_t n)
      : m_curve(&curve),
        m_size(n),
        m_values(static_cast<double*>(allocate_zeroed(n * sizeof(double))), Free{n}) {}

  [[nodiscard]] size_t size() const { return m_size; }

  /// The curve at max(1, i), to the bit as LogCurve::at gives it. REQUIRES: i < size().
  [[nodiscard, gnu::always_inline]] double at(size_t i) const {
    const double v = peek(i);
    if (v != 0) [[likely]]
      return v;
    return fill(i);
  }
  /// Entry i as it stands: 0 when not filled yet. REQUIRES: i < size().
  [[nodiscard, gnu::always_inline]] double peek(size_t i) const {
    return std::atomic_ref<double>(m_values.get()[i]).load(std::memory_order_relaxed);
  }
  /// Computes and keeps entry i; returns it. REQUIRES: i < size().
  [[gnu::noinline]] double fill(size_t i) const {
    const double v = m_curve->at(std::max(1.0, static_cast<double>(i)));
    std::atomic_ref<double>(m_values.get()[i]).store(v, std::memory_order_relaxed);
    return v;
  }

 private:
  struct Free {
    size_t n = 0;
    void operator()(double* p) const { release_zeroed(p, n * sizeof(double)); }
  };
  const LogCurve* m_curve;
  size_t m_size;
  std::unique_ptr<double[], Free> m_values;  // allocate_zeroed: pages never read stay untouched
};

}  // namespace servesim
