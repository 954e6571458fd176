// The summaries' field lists (metrics/summary_fields.h, beside the structs in metrics/metrics.h)
// drive summary.json and the printed tables: every listed field is written, nothing else is.
#include <catch2/catch.hpp>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "metrics/output.h"

namespace t_metrics_summary_fields_test {

using namespace servesim;
using J = nlohmann::ordered_json;

namespace {

// A summary with every optional part present: a partial run, time outside the engine (the
// engine's TTFT), prefix caching, roofline figures, SLOs with three targets, ITL's further
// percentiles, two replicas of a pool, the pool and KV transfers.
Summary full_summary() {
  Summary s;
  s.requests = 3;
  s.finished = 2;
  s.unfinished = 1;
  s.stopped_by = "max_sim_time";
  s.ttft_s.count = 2;
  s.server_ttft_s = Distribution{};
  s.server_ttft_s->count = 2;
  s.prefix = KvManager::PrefixStats{100, 25, 6, 1, 2};
  s.workload_counters = {{"rows_skipped", 1}};
  s.mbu = 0.5;
  s.mfu = 0.1;
  s.bandwidth_bound_step_share = 0.9;
  SloSummary slo;
  slo.ttft = SloCheck{};
  slo.ttft->percentile_ms = 3.0;
  slo.tpot = SloCheck{};
  slo.itl = SloCheck{};
  s.slo = slo;
  s.itl_s.percentiles = {{"p99.9", 0.5}};
  ReplicaSummary r;
  r.pool = "p";
  r.slo = slo;
  s.replicas = {r, r};
  PoolSummary p;
  p.name = "p";
  p.role = "mixed";
  p.slo = slo;
  s.pools = {p};
  s.kv_transfer = KvTransferSummary{};
  ClassSummary c;
  c.slo = slo;
  s.classes = {{"chat", c}, {"batch", c}};
  return s;
}

template <class T>
constexpr bool k_is_list = false;
template <class U>
constexpr bool k_is_list<std::vector<U>> = HasFields<U>;
// Summaries by name (Summary::classes): a JSON object keyed by the names.
template <class T>
constexpr bool k_is_named_list = false;
template <class U>
constexpr bool k_is_named_list<std::vector<std::pair<std::string, U>>> = HasFields<U>;

// The JSON keys `j` must have from `s`'s field list, nested structs included: every listed key
// of `form` is there, in order, and no other. `extra`: keys the writer adds (version, seed).
template <class T>
void check_fields(const T& s, const J& j, unsigned form, const std::vector<std::string>& extra);

template <class T>
void check_value(const T& v, const J& j, const Field& f) {
  if constexpr (HasFields<T>) {
    check_fields(v, j, (f.outputs & k_as_short) ? k_short : k_json, {});
  } else if constexpr (requires { v.has_value(); }) {
    if (v) check_value(*v, j, f);
  } else if constexpr (k_is_named_list<T>) {
    REQUIRE(j.size() == v.size());
    auto it = j.begin();
    for (const auto& [name, x] : v) {
      CHECK(it.key() == name);  // in the list's order
      check_fields(x, *it++, k_json, {});
    }
  } else if constexpr (k_is_list<T>) {
    REQUIRE(j.size() == v.size());
    for (size_t i = 0; i < v.size(); ++i)
      check_fields(v[i], j[i], k_json,
                   f.index_key.empty() ? std::vector<std::string>{}
                                       : std::vector<std::string>{std::string(f.index_key)});
  }
}

template <class T>
void check_fields(const T& s, const J& j, unsigned form, const std::vector<std::string>& extra) {
  std::vector<std::string> listed = extra;
  for_each_field(s, [&](const Field& f, const auto& v) {
    if (!(f.outputs & form)) return;
    if ((f.outputs & k_omit_empty) && field_empty(v)) return;  // left out (a class's ITL list)
    listed.emplace_back(f.name);
    INFO("field " << f.name);
    REQUIRE(j.contains(std::string(f.name)));
    check_value(v, j.at(std::string(f.name)), f);
  });
  std::vector<std::string> written;
  for (const auto& [key, value] : j.items()) written.push_back(key);
  CHECK(written == listed);
}

}  // namespace

TEST_CASE("summary fields: summary.json has every listed field, in order, and nothing else",
          "[metrics][summary_fields]") {
  const Summary s = full_summary();
  J j = summary_json(s, YAML::Node(), 7);
  CHECK(j.at("seed") == 7);
  CHECK(j.at("replicas")[1].at("replica") == 1);
  CHECK(j.at("kv_transfer").at("transfer_s").size() == 5);  // the short form: no p90, no exact
  CHECK(j.at("prefix_cache").at("hit_rate") == 0.25);
  CHECK(j.at("partial") == true);
  CHECK(j.items().begin().key() == "servesim_version");
  CHECK(std::prev(j.end()).key() == "config");  // the resolved config comes last
  j.erase("config");
  check_fields(s, j, k_json, {"servesim_version", "seed"});
}

TEST_CASE("summary fields: empty parts are null or left out as their field says",
          "[metrics][summary_fields]") {
  const J j = summary_json(Summary{}, YAML::Node(), 1);
  CHECK_FALSE(j.contains("stopped_by"));
  CHECK_FALSE(j.contains("replicas"));
  CHECK_FALSE(j.contains("pools"));
  CHECK_FALSE(j.contains("kv_transfer"));
  CHECK_FALSE(j.contains("classes"));
  CHECK_FALSE(j.contains("server_ttft_s"));
  CHECK(j.at("prefix_cache").is_null());
  CHECK(j.at("slo").is_null());
  CHECK(j.at("mbu").is_null());
}

TEST_CASE("summary fields: the printed tables show every column and row the lists give",
          "[metrics][summary_fields]") {
  const Summary s = full_summary();
  const std::string table = summary_table(s);
  std::set<std::string> replica_columns, pool_columns;
  for_each_field(s.replicas[0], [&](const Field& f, const auto&) {
    for (size_t k = 0; k < f.shown_count; ++k) {
      replica_columns.emplace(f.shown[k].header);
      CHECK_THAT(table, Catch::Contains(std::string(f.shown[k].header)));
    }
  });
  // The pool rows sit under the replicas' header: their columns must be the same.
  for_each_field(s.pools[0], [&](const Field& f, const auto&) {
    for (size_t k = 0; k < f.shown_count; ++k) pool_columns.emplace(f.shown[k].header);
  });
  CHECK(pool_columns == replica_columns);
  CHECK(replica_columns.size() == 8);
  size_t rows = 0;
  for_each_field(s, [&](const Field& f, const auto&) {
    for (size_t k = 0; k < f.shown_count; ++k, ++rows)
      CHECK_THAT(table, Catch::Contains("\n" + std::string(f.shown[k].header) + " "));
  });
  CHECK(rows == 6);  // TTFT, server TTFT, TPOT, E2E, queue, ITL
  CHECK_THAT(summary_table(Summary{}), !Catch::Contains("server TTFT"));
}

}  // namespace t_metrics_summary_fields_test
