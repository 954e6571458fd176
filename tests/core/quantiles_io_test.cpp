// QuantileSketch::save and load (core/quantiles_io.cpp): a sketch sent as bytes to another
// process (the parallel engine's MPI ranks) is the same sketch there, exact or a histogram,
// and merges exactly as the original does.
#include <catch2/catch.hpp>
#include <string>

#include "core/byte_io.h"
#include "core/quantiles.h"

namespace t_core_quantiles_io_test {

using namespace servesim;

namespace {

QuantileSketch sent(const QuantileSketch& q, size_t limit) {
  std::string bytes;
  q.save(bytes);
  QuantileSketch out(limit);
  ByteReader in(bytes);
  out.load(in);
  CHECK(in.done());
  return out;
}

void check_same(QuantileSketch a, QuantileSketch b) {
  CHECK(a.count() == b.count());
  CHECK(a.sum() == b.sum());
  CHECK(a.max() == b.max());
  CHECK(a.exact() == b.exact());
  for (const double p : {0.0, 10.0, 50.0, 90.0, 99.0, 100.0})
    CHECK(a.percentile(p) == b.percentile(p));
}

}  // namespace

TEST_CASE("quantiles io: a sketch loaded from bytes is the sketch saved", "[quantiles]") {
  for (const size_t limit : {size_t{1000}, size_t{10}}) {  // exact, then a histogram
    INFO("limit " << limit);
    QuantileSketch q(limit);
    for (int i = 0; i < 300; ++i) q.add(static_cast<double>((i * 37) % 101) * 0.013 + 0.001);
    check_same(q, sent(q, limit));
    // Merged into another sketch, the copy gives what the original gives.
    QuantileSketch a(limit), b(limit);
    for (int i = 0; i < 50; ++i) {
      a.add(0.5 + i * 0.01);
      b.add(0.5 + i * 0.01);
    }
    (void)q.percentile(50);  // sorted first, as a finished part is
    a.merge(q);
    b.merge(sent(q, limit));
    check_same(a, b);
  }
  QuantileSketch empty(10);
  check_same(empty, sent(empty, 10));
}

TEST_CASE("quantiles io: runs of a value travel with the values kept one by one", "[quantiles]") {
  for (const size_t limit : {size_t{1000}, size_t{40}}) {  // exact, then a histogram
    INFO("limit " << limit);
    QuantileSketch q(limit);
    for (int i = 0; i < 30; ++i) {
      q.add(static_cast<double>((i * 37) % 101) * 0.013 + 0.001);
      q.add_repeated(static_cast<double>((i * 11) % 13) * 0.1, i % 4 + 1);
    }
    check_same(q, sent(q, limit));
  }
  // A run's count past the values the sketch holds is refused.
  QuantileSketch q(100);
  q.add_repeated(1.0, 3);
  std::string bytes;
  q.save(bytes);
  bytes[0] = 2;  // the count, first: now fewer than the run holds
  QuantileSketch out(100);
  ByteReader in(bytes);
  CHECK_THROWS_WITH(out.load(in), Catch::Contains("run count out of range"));
}

TEST_CASE("quantiles io: bytes cut short are refused", "[quantiles]") {
  QuantileSketch q(100);
  q.add(1.0);
  std::string bytes;
  q.save(bytes);
  bytes.pop_back();
  QuantileSketch out(100);
  ByteReader in(bytes);
  CHECK_THROWS_AS(out.load(in), std::logic_error);
}

}  // namespace t_core_quantiles_io_test
