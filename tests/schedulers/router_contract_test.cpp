// Contract tests run over every registered router (schedulers/router.h): route() returns an index
// below the number of replicas it is shown, a single replica always gets the request, and the same
// seed and loads give the same routing. A router registered without a case fails the first test.
#include <catch2/catch.hpp>
#include <map>

#include "core/random.h"
#include "schedulers/router.h"
#include "tests/support.h"

namespace t_schedulers_router_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::map<std::string, std::string> k_cases{
    {"least_kv", "kind: least_kv"},
    {"least_outstanding", "kind: least_outstanding"},
    {"lora_affinity", "kind: lora_affinity\nmax_imbalance: 2"},
    {"prefix_affinity", "kind: prefix_affinity\nmax_imbalance: 2"},
    {"random", "kind: random"},
    {"round_robin", "kind: round_robin"},
};

std::unique_ptr<Router> router_of(const std::string& yaml, uint64_t seed) {
  auto doc = doc_of(yaml);
  auto r = make_router(Cfg::root(doc), seed);
  doc->check_all_read();
  return r;
}

/// Routes 300 requests (sessions and prefix hashes varied) over `replicas` replicas whose loads
/// follow the routing; the choices made.
std::vector<uint32_t> route_all(Router& router, size_t replicas) {
  std::vector<ReplicaLoad> loads(replicas);
  for (size_t i = 0; i < replicas; ++i) loads[i].kv_capacity_tokens = 10000;
  std::vector<uint32_t> out;
  for (uint64_t id = 0; id < 300; ++id) {
    RequestSpec r;
    r.id = id;
    r.arrival = Time::from_ms(static_cast<double>(id));
    r.prompt_tokens = static_cast<int32_t>(10 + id % 37);
    r.output_tokens = 5;
    r.session = id % 11;
    const uint32_t k = router.route(r, loads);
    out.push_back(k);
    if (k >= replicas) return out;  // the caller's check reports it
    ++loads[k].outstanding;
    loads[k].kv_used_tokens += r.prompt_tokens;
    if (id % 3 == 0) {  // some requests leave
      const size_t j = id % replicas;
      if (loads[j].outstanding > 0) --loads[j].outstanding;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("routers: every registered router has a contract case", "[schedulers]") {
  for (const std::string& name : router_names()) {
    INFO(name);
    CHECK(k_cases.count(name) == 1);
  }
  CHECK(k_cases.size() == router_names().size());
}

TEST_CASE("routers: an index below the replicas, one replica takes all, same seed same routing",
          "[schedulers]") {
  for (const auto& [name, yaml] : k_cases) {
    INFO(name);
    for (size_t replicas : {size_t{1}, size_t{2}, size_t{5}}) {
      auto a = router_of(yaml, 3);
      auto b = router_of(yaml, 3);
      const std::vector<uint32_t> ra = route_all(*a, replicas);
      const std::vector<uint32_t> rb = route_all(*b, replicas);
      REQUIRE(ra.size() == 300);
      for (uint32_t k : ra) CHECK(k < replicas);
      CHECK(ra == rb);
      if (replicas > 1 && name != "prefix_affinity") {
        // Every policy but affinity spreads 300 requests over more than one replica.
        std::vector<int> used(replicas, 0);
        for (uint32_t k : ra) used[k] = 1;
        CHECK(std::count(used.begin(), used.end(), 1) > 1);
      }
    }
  }
}

}  // namespace t_schedulers_router_contract_test
