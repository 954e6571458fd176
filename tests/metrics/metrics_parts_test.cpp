// MetricsRecorder split in parts (metrics/metrics_parts.cpp), as the parallel engine and its
// MPI ranks split it: parts merged directly, or saved as bytes and loaded into fresh parts
// first, give the summary of one recorder that saw every request, figure for figure, on
// requests of every status spread over four replicas, with an SLO.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/request.h"
#include "metrics/metrics.h"
#include "metrics/output.h"
#include "sim/simulation.h"
#include "sim/slo.h"

namespace t_metrics_metrics_parts_test {

using namespace servesim;

namespace {

constexpr int64_t k_ms = 1'000'000;

SloTargets slo() {
  SloTargets t;
  t.ttft_ms = 300;
  t.tpot_ms = 60;
  t.e2e_ms = 900;
  t.itl_ms = 80;
  t.percentile = 90;
  return t;
}

// The run's requests: replica i gets every fourth id; every status appears on more than one
// replica; the lowest rejected id (3) is in the second part, a higher one (10) in the first.
std::vector<Request> requests() {
  std::vector<Request> rs;
  for (uint64_t id = 0; id < 16; ++id) {
    Request r;
    r.spec.id = id;
    r.replica = static_cast<uint32_t>(id % 4 == 3 ? 3 : id % 3);
    r.spec.arrival = Time::ns(static_cast<int64_t>(id) * 37 * k_ms);
    r.spec.prompt_tokens = 10 + static_cast<int32_t>(id);
    r.spec.output_tokens = 1 + static_cast<int32_t>(id % 5);
    r.preemptions = static_cast<int32_t>(id % 3);
    r.swap_preemptions = id % 6 == 5 ? 1 : 0;
    const int64_t at = r.spec.arrival.count_ns();
    switch (id == 10 ? 3 : id % 8) {
      case 3:
      case 7:
        r.state = RequestState::Rejected;
        r.release = r.spec.arrival;
        r.reject_reason = "reason of " + std::to_string(id);
        break;
      case 5:
        r.state = RequestState::Rejected;
        r.end_cause = id == 5 ? EndCause::Shed : EndCause::Refused;
        r.release = r.spec.arrival;
        break;
      case 6:
        r.state = RequestState::Abandoned;
        r.end_cause = id == 6 ? EndCause::TimedOut : EndCause::Failed;
        r.first_admitted = Time::ns(at + 5 * k_ms);
        r.release = Time::ns(at + 400 * k_ms);
        break;
      case 4:
        r.state = id == 4 ? RequestState::Abandoned : RequestState::Running;
        r.end_cause = id == 4 ? EndCause::Cancelled : EndCause::None;
        break;
      default:
        r.state = RequestState::Released;
        r.first_admitted = Time::ns(at + static_cast<int64_t>(id) * k_ms);
        r.first_token = Time::ns(at + static_cast<int64_t>(40 + 30 * id) * k_ms);
        r.last_token = r.finish =
            Time::ns(r.first_token.count_ns() + (r.spec.output_tokens - 1) * (50 + 3 * id) * k_ms);
        r.release = Time::ns(r.finish.count_ns() + 2 * k_ms);
        r.client_view = id == 9;
        if (r.client_view) r.spec.api_in = Time::ns(k_ms);
        break;
    }
    rs.push_back(r);
  }
  return rs;
}

RunStats stats() {
  RunStats s;
  s.replicas.resize(4);
  for (size_t i = 0; i < 4; ++i) s.replicas[i].routed = static_cast<int64_t>(i + 1);
  return s;
}

const std::vector<int64_t> k_accelerators{1, 2, 1, 2};

std::string whole_summary(std::string* rejection) {
  MetricsRecorder m(slo());
  m.track_replicas(k_accelerators, {});
  for (const Request& r : requests()) m.record(r);
  *rejection = m.first_rejection();
  return summary_json(m.summary(stats()), YAML::Node(), 1).dump();
}

// Parts over replicas {0, 1} and {2, 3}; `bytes`: each part travels as bytes first.
std::string split_summary(bool bytes, std::string* rejection) {
  MetricsRecorder m(slo());
  m.track_replicas(k_accelerators, {});
  REQUIRE(m.shardable());
  std::vector<std::unique_ptr<ShardedRecorder>> parts;
  parts.push_back(m.make_part(0));
  parts.push_back(m.make_part(2));
  for (Request r : requests()) {
    const size_t p = r.replica < 2 ? 0 : 1;
    r.replica -= static_cast<uint32_t>(2 * p);
    parts[p]->record(r);
  }
  for (auto& p : parts) {
    p->finish_part();
    if (bytes) {
      std::string out;
      p->save_part(out);
      auto fresh = m.make_part(0);
      fresh->load_part(out);
      std::string again;
      fresh->save_part(again);
      CHECK(again == out);
      p = std::move(fresh);
    }
    m.merge_part(*p);
  }
  *rejection = m.first_rejection();
  return summary_json(m.summary(stats()), YAML::Node(), 1).dump();
}

}  // namespace

TEST_CASE("metrics parts: merged parts give the whole run's summary", "[metrics]") {
  std::string whole_rejection, split_rejection;
  const std::string whole = whole_summary(&whole_rejection);
  CHECK(whole_rejection == "request 3: reason of 3");
  // Sanity: the run has every status, and per-replica rows.
  const auto j = nlohmann::json::parse(whole);
  CHECK(j["requests"] == 16);
  CHECK(j["by_status"]["shed"] == 1);
  CHECK(j["by_status"]["timed_out"] == 1);
  CHECK(j["by_status"]["cancelled"] == 1);
  CHECK(j["by_status"]["failed"] == 1);
  CHECK(j["by_status"]["unfinished"] == 1);
  CHECK(j["replicas"].size() == 4);
  CHECK(split_summary(false, &split_rejection) == whole);
  CHECK(split_rejection == whole_rejection);
  CHECK(split_summary(true, &split_rejection) == whole);
  CHECK(split_rejection == whole_rejection);
}

TEST_CASE("metrics parts: bad part bytes are refused", "[metrics]") {
  MetricsRecorder m(slo());
  m.track_replicas(k_accelerators, {});
  auto p = m.make_part(0);
  Request r = requests()[0];
  p->record(r);
  p->finish_part();
  std::string out;
  p->save_part(out);
  CHECK_THROWS_AS(m.make_part(0)->load_part(out + "x"), std::logic_error);
  // A recorder with pools cannot be split.
  MetricsRecorder single;
  CHECK_FALSE(single.shardable());
  CHECK_THROWS_AS(single.make_part(0), std::logic_error);
}

}  // namespace t_metrics_metrics_parts_test
