// The read-ahead wrapper (traces/read_ahead.h) on a scripted source: the same requests in the
// same order across many batches, the names and counters as they stood at each request (also
// when they move at the end, after the last request), a source's error where it was raised and
// only once the requests before it are taken, an early stop that does not wait for the rest, a
// reactive source left alone. The contract test (source_contract_test.cpp) runs it over every
// registered source and trace format.
#include "traces/read_ahead.h"

#include <catch2/catch.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.h"
#include "tests/traces/trace_test_support.h"

namespace t_traces_read_ahead_test {

using namespace servesim;
using namespace servesim::test;

namespace {

/// Yields `count` requests; request i names class "c<i>" when i % 97 == 5 and tenant "t<i>" when
/// i % 131 == 7, counts "odd" requests and "skipped" every 50th call (at the end too), and
/// throws InputError at request `fail_at` (never when negative). It writes only some fields, as
/// the synthetic source does: the rest stay as the caller's object had them. `sparse`: "odd"
/// counts only every 300th request and "skipped" every 500th call, so that the counters stay
/// still for long runs of requests (which the wrapper yields without looking at its changes).
class Scripted final : public WorkloadSource {
 public:
  Scripted(int64_t count, int64_t fail_at, bool reactive = false, bool sparse = false)
      : m_count(count), m_fail_at(fail_at), m_reactive(reactive), m_sparse(sparse) {}
  bool next(RequestSpec& out) override {
    ++m_calls;
    if (m_calls % (m_sparse ? 500 : 50) == 0) ++m_skipped;
    if (m_made == m_fail_at) throw InputError("scripted.csv:" + std::to_string(m_made) + ": bad");
    if (m_made == m_count) return false;
    out.id = static_cast<uint64_t>(m_made);
    out.arrival = Time::ns(m_made * 1000);
    out.prompt_tokens = static_cast<int32_t>(1 + m_made % 17);
    out.output_tokens = static_cast<int32_t>(1 + m_made % 5);
    if (m_made % 97 == 5) {
      m_classes.push_back("c" + std::to_string(m_made));
      out.class_id = static_cast<uint16_t>(m_classes.size() - 1);
    }
    if (m_made % 131 == 7) m_tenants.push_back("t" + std::to_string(m_made));
    if (m_made % (m_sparse ? 300 : 2) == 1) ++m_odd;
    if (m_made % 3 == 0) out.block_hashes.assign(static_cast<size_t>(m_made % 4), 7);
    ++m_made;
    return true;
  }
  size_t size_hint() const override { return static_cast<size_t>(m_count); }
  std::vector<std::pair<std::string, int64_t>> counters() const override {
    return {{"odd", m_odd}, {"skipped", m_skipped}};
  }
  const std::vector<std::string>& class_names() const override { return m_classes; }
  const std::vector<std::string>& tenant_names() const override { return m_tenants; }
  bool reactive() const override { return m_reactive; }

 private:
  int64_t m_count, m_fail_at;
  bool m_reactive, m_sparse;
  int64_t m_made = 0, m_calls = 0, m_odd = 0, m_skipped = 0;
  std::vector<std::string> m_classes, m_tenants;
};

}  // namespace

TEST_CASE("read ahead: the same requests, names and counters at every request, batch after batch",
          "[traces]") {
  for (const bool sparse : {false, true})
    for (const int64_t count : {0, 1, 255, 256, 257, 3000, 20000}) {
      INFO(count << (sparse ? " sparse" : ""));
      Scripted direct(count, -1, false, sparse);
      auto ahead = read_ahead(std::make_unique<Scripted>(count, -1, false, sparse));
      CHECK(ahead->size_hint() == static_cast<size_t>(count));
      CHECK(source_state(*ahead) == source_state(direct));
      RequestSpec a, b;
      int64_t n = 0;
      for (;; ++n) {
        const bool got_a = direct.next(a);
        const bool got_b = ahead->next(b);
        REQUIRE(got_a == got_b);
        CHECK(source_state(*ahead) ==
              source_state(direct));  // at the end too ("skipped" moves there)
        if (!got_a) break;
        REQUIRE(spec_text(b) == spec_text(a));
      }
      CHECK(n == count);
      CHECK_FALSE(ahead->next(b));  // and again
    }
}

TEST_CASE("read ahead: a source's error comes where it was raised, after the requests before it",
          "[traces]") {
  for (const int64_t fail_at : {0, 100, 256, 1000}) {
    INFO(fail_at);
    auto ahead = read_ahead(std::make_unique<Scripted>(5000, fail_at));
    RequestSpec r;
    for (int64_t i = 0; i < fail_at; ++i) {
      REQUIRE(ahead->next(r));
      REQUIRE(r.id == static_cast<uint64_t>(i));
    }
    CHECK_THROWS_WITH(ahead->next(r), "scripted.csv:" + std::to_string(fail_at) + ": bad");
  }
  // An error past where the engine stops never reaches it.
  auto ahead = read_ahead(std::make_unique<Scripted>(5000, 600));
  RequestSpec r;
  for (int i = 0; i < 10; ++i) REQUIRE(ahead->next(r));
  CHECK(r.id == 9);
}

TEST_CASE("read ahead: stopping early does not wait for the rest of a long source", "[traces]") {
  // Ten million requests: reading them all would take seconds; the reader holds a few batches
  // ahead and stops when the wrapper goes.
  auto ahead = read_ahead(std::make_unique<Scripted>(10'000'000, -1));
  RequestSpec r;
  for (int i = 0; i < 300; ++i) REQUIRE(ahead->next(r));
  ahead.reset();  // joins the reader
  SUCCEED();
}

TEST_CASE("read ahead: a reactive source is returned as it is", "[traces]") {
  auto inner = std::make_unique<Scripted>(10, -1, true);
  const WorkloadSource* const raw = inner.get();
  CHECK(read_ahead(std::move(inner)).get() == raw);
}

}  // namespace t_traces_read_ahead_test
