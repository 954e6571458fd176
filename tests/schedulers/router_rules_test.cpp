// Every router's documented rule (docs/cluster.md, schedulers/routers.cpp) on loads written by
// hand, call by call: round robin's cycle, the least-loaded scans whose ties go to the first
// replica met from a start that moves one replica on per call, prefix affinity's home per
// content key and its move at exactly one request more than max_imbalance, and LoRA affinity's
// residency order under the same imbalance bound.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/request.h"
#include "schedulers/router.h"
#include "tests/support.h"

namespace t_schedulers_router_rules_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::unique_ptr<Router> router_of(const std::string& yaml) {
  auto doc = doc_of(yaml);
  auto r = make_router(Cfg::root(doc), 7);
  doc->check_all_read();
  return r;
}

std::vector<ReplicaLoad> outstanding(const std::vector<int64_t>& n) {
  std::vector<ReplicaLoad> out(n.size());
  for (size_t i = 0; i < n.size(); ++i) {
    out[i].outstanding = n[i];
    out[i].kv_capacity_tokens = 100;
  }
  return out;
}

RequestSpec stream(uint64_t s) {
  RequestSpec r;
  r.prompt_tokens = 8;
  r.output_tokens = 2;
  r.content_stream = s;
  return r;
}

}  // namespace

TEST_CASE("router rules: round robin cycles over the replicas whatever their loads",
          "[schedulers][routers]") {
  auto r = router_of("kind: round_robin");
  const auto loads = outstanding({5, 0, 9});
  std::vector<uint32_t> got;
  for (int i = 0; i < 7; ++i) got.push_back(r->route(stream(0), loads));
  CHECK(got == std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0});
}

TEST_CASE("router rules: least_outstanding ties go to the first met from a moving start",
          "[schedulers][routers]") {
  auto r = router_of("kind: least_outstanding");
  // Calls start their scans at replicas 0, 1, 2, 3, 0, ...
  std::vector<uint32_t> got;
  for (int i = 0; i < 5; ++i) got.push_back(r->route(stream(0), outstanding({0, 0, 0, 0})));
  CHECK(got == std::vector<uint32_t>{0, 1, 2, 3, 0});
  // {2, 1, 1, 3}: replicas 1 and 2 tie; from start 1 -> 1, 2 -> 2, 3 -> 1 (3, 0, 1: 1 first).
  got.clear();
  for (int i = 0; i < 4; ++i) got.push_back(r->route(stream(0), outstanding({2, 1, 1, 3})));
  CHECK(got == std::vector<uint32_t>{1, 2, 1, 1});
  // A strictly smallest one wins from every start.
  for (int i = 0; i < 4; ++i) CHECK(r->route(stream(0), outstanding({2, 1, 0, 3})) == 2);
}

TEST_CASE("router rules: least_kv picks the smallest used share, a pool of no capacity as 0",
          "[schedulers][routers]") {
  auto r = router_of("kind: least_kv");
  std::vector<ReplicaLoad> loads(3);
  const auto kv = [&](size_t i, int64_t used, int64_t capacity) {
    loads[i].kv_used_tokens = used;
    loads[i].kv_capacity_tokens = capacity;
  };
  kv(0, 50, 100);
  kv(1, 30, 100);
  kv(2, 60, 200);  // 0.3: ties with replica 1
  std::vector<uint32_t> got;
  for (int i = 0; i < 3; ++i) got.push_back(r->route(stream(0), loads));
  CHECK(got == std::vector<uint32_t>{1, 1, 2});
  kv(0, 0, 0);  // no capacity: a share of 0
  kv(1, 1, 100);
  for (int i = 0; i < 3; ++i) CHECK(r->route(stream(0), loads) == 0);
}

TEST_CASE("router rules: prefix affinity keeps a content key home until the imbalance passes",
          "[schedulers][routers]") {
  auto r = router_of("kind: prefix_affinity\nmax_imbalance: 2");
  // Stream 1 first goes to the least loaded (start 0: replica 0) and is at home there.
  CHECK(r->route(stream(1), outstanding({0, 0, 0})) == 0);
  // Home 2 requests above the least loaded: stays (start 1 would pick 1).
  CHECK(r->route(stream(1), outstanding({2, 0, 0})) == 0);
  // Home 3 above a least loaded of 1: stays (the difference, not the sum, is compared).
  CHECK(r->route(stream(1), outstanding({3, 1, 1})) == 0);
  // 3 above: moves to the least loaded (start 3 = replica 0: ties 1, 2 -> 1), and stays there.
  CHECK(r->route(stream(1), outstanding({3, 0, 0})) == 1);
  CHECK(r->route(stream(1), outstanding({0, 2, 0})) == 1);
  // Stream 2 is another key: the least loaded from start 5 = replica 2.
  CHECK(r->route(stream(2), outstanding({0, 0, 0})) == 2);
  // No stream and no block hashes: no key, always the least loaded.
  CHECK(r->route(stream(0), outstanding({1, 0, 1})) == 1);
  CHECK(r->route(stream(0), outstanding({0, 1, 1})) == 0);
  // A prompt's first block hash is a key too.
  RequestSpec h = stream(0);
  h.block_hashes = {42, 7};
  CHECK(r->route(h, outstanding({1, 1, 0})) == 2);  // start 8 = replica 2
  CHECK(r->route(h, outstanding({1, 0, 2})) == 2);  // home, 2 above: stays
}

TEST_CASE("router rules: lora affinity prefers a GPU slot, then host memory, within the bound",
          "[schedulers][routers]") {
  auto r = router_of("kind: lora_affinity\nmax_imbalance: 1");
  auto loads = outstanding({0, 0, 0});
  loads[1].adapter_residency = 1;
  loads[2].adapter_residency = 2;
  CHECK(r->route(stream(0), loads) == 2);  // in a GPU slot
  loads[2].outstanding = 1;                // 1 above the least: still within the bound
  CHECK(r->route(stream(0), loads) == 2);
  loads[2].outstanding = 2;  // 2 above: the least loaded (start 2: 2, 0, 1 -> 0)
  CHECK(r->route(stream(0), loads) == 0);
  loads[2].adapter_residency = 0;  // host memory only on replica 1
  loads[0].outstanding = 1;
  loads[1].outstanding = 1;
  loads[2].outstanding = 0;
  CHECK(r->route(stream(0), loads) == 1);  // 1 above the least: within the bound
  loads[1].adapter_residency = 0;          // nowhere: the least loaded
  CHECK(r->route(stream(0), loads) == 2);
  // Equal residency and load: the scan's start (now 5 = replica 2, then 0) breaks the tie.
  loads = outstanding({0, 0, 0});
  CHECK(r->route(stream(0), loads) == 2);
  CHECK(r->route(stream(0), loads) == 0);
}

}  // namespace t_schedulers_router_rules_test
