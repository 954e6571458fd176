// The queue orders' keys (schedulers/queue_order.h) at their edges, through the public
// QueueOrder and read_queue_order: edf's deadline for a target of exactly 1 ns and none for 0,
// sjf's prediction clamped to at least one token, priority's key as given (negative too), every
// policy name read to its own order, and the sjf and fair maps' ranges at both ends and one past.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "core/request.h"
#include "schedulers/queue_order.h"
#include "tests/support.h"

namespace t_schedulers_queue_key_test {

using namespace servesim;
using namespace servesim::test;

namespace {

Request request(int64_t arrival_ns, int64_t ttft_slo_ns, int32_t output, int32_t priority) {
  Request r;
  r.spec.id = 7;
  r.spec.arrival = Time::ns(arrival_ns);
  r.spec.ttft_slo = Time::ns(ttft_slo_ns);
  r.spec.output_tokens = output;
  r.spec.prompt_tokens = 3;
  r.spec.priority = priority;
  return r;
}

QueueOrder read(const std::string& yaml) {
  return read_queue_order(Cfg::root(doc_of(yaml)), "policy", queue_policy_names());
}

std::string error_of(const std::string& yaml) {
  try {
    (void)read(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("queue key: each static order's key at its edges", "[schedulers][queue]") {
  QueueOrder edf;
  edf.policy = QueuePolicy::Edf;
  CHECK(edf.keyed());
  // A target of 1 ns is a target: the deadline is the arrival plus 1 ns.
  CHECK(edf.key(request(1000, 1, 5, 0)) == 1001);
  CHECK(edf.key(request(1000, 2, 5, 0)) == 1002);
  CHECK(edf.key(request(0, 1, 5, 0)) == 1);
  CHECK(edf.key(request(5000, ms(20), 5, 0)) == 5000 + ms(20));
  CHECK(edf.key(request(1000, 0, 5, 0)) == std::numeric_limits<int64_t>::max());

  QueueOrder pri;
  pri.policy = QueuePolicy::Priority;
  CHECK(pri.keyed());
  CHECK(pri.key(request(0, 0, 5, 3)) == 3);
  CHECK(pri.key(request(0, 0, 5, -2)) == -2);
  CHECK(pri.key(request(0, 0, 5, 0)) == 0);

  QueueOrder sjf;
  sjf.policy = QueuePolicy::Sjf;
  CHECK(sjf.keyed());
  CHECK(sjf.key(request(0, 0, 1, 0)) == 1);
  CHECK(sjf.key(request(0, 0, 40, 0)) == 40);
  // lognormal with sigma 0: the factor is exactly 1.
  sjf.sjf_oracle = false;
  sjf.sjf_sigma = 0;
  CHECK(sjf.key(request(0, 0, 1, 0)) == 1);
  CHECK(sjf.key(request(0, 0, 40, 0)) == 40);
  CHECK(sjf.predicted_output_tokens(request(0, 0, 40, 0).spec) == 40);
  // A large sigma: each prediction at least 1, some far below the truth and some far above.
  sjf.sjf_sigma = 10;
  int64_t below = 0, above = 0, ones = 0;
  for (uint64_t id = 0; id < 200; ++id) {
    Request r = request(0, 0, 50, 0);
    r.spec.id = id;
    const int64_t p = sjf.predicted_output_tokens(r.spec);
    CHECK(p >= 1);
    ones += p == 1;
    below += p < 50;
    above += p > 50;
  }
  CHECK(ones > 0);
  CHECK(below > 20);
  CHECK(above > 20);

  for (const QueuePolicy p : {QueuePolicy::Fcfs, QueuePolicy::Fair}) {
    QueueOrder o;
    o.policy = p;
    CHECK_FALSE(o.keyed());
    CHECK(o.key(request(1000, 5, 9, 4)) == 0);
  }
}

TEST_CASE("queue key: each policy name reads its own order, and the maps' ranges",
          "[schedulers][queue]") {
  const std::vector<std::string>& names = queue_policy_names();
  REQUIRE(names == std::vector<std::string>{"fcfs", "priority", "sjf", "edf", "fair"});
  const QueuePolicy want[] = {QueuePolicy::Fcfs, QueuePolicy::Priority, QueuePolicy::Sjf,
                              QueuePolicy::Edf, QueuePolicy::Fair};
  for (size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    CHECK(read("policy: " + names[i] + "\n").policy == want[i]);
  }
  CHECK(read("{}\n").policy == QueuePolicy::Fcfs);
  // Defaults.
  const QueueOrder d = read("policy: sjf\n");
  CHECK(d.sjf_oracle);
  CHECK(d.fair_prompt_weight == 1.0);
  CHECK(d.fair_output_weight == 2.0);
  const QueueOrder ln = read("policy: sjf\nsjf: {predictor: lognormal}\n");
  CHECK_FALSE(ln.sjf_oracle);
  CHECK(ln.sjf_sigma == 0.5);
  CHECK(ln.sjf_seed == 1);
  // sigma from 0 to 10, seed from 0 to 2^62.
  CHECK(read("sjf: {predictor: lognormal, sigma: 0}\n").sjf_sigma == 0.0);
  CHECK(read("sjf: {predictor: lognormal, sigma: 10}\n").sjf_sigma == 10.0);
  CHECK_THAT(error_of("sjf: {predictor: lognormal, sigma: 10.001}\n"), Catch::Contains("sigma"));
  CHECK_THAT(error_of("sjf: {predictor: lognormal, sigma: -0.001}\n"), Catch::Contains("sigma"));
  CHECK(read("sjf: {predictor: lognormal, seed: 0}\n").sjf_seed == 0);
  CHECK(read("sjf: {predictor: lognormal, seed: 4611686018427387904}\n").sjf_seed ==
        (uint64_t{1} << 62));
  CHECK_THAT(error_of("sjf: {predictor: lognormal, seed: 4611686018427387905}\n"),
             Catch::Contains("seed"));
  CHECK_THAT(error_of("sjf: {predictor: lognormal, seed: -1}\n"), Catch::Contains("seed"));
  for (const char* k : {"sigma", "seed"})
    CHECK_THAT(error_of(fmt::format("sjf: {{{}: 1}}\n", k)),
               Catch::Contains(k) && Catch::Contains("only used with predictor: lognormal"));
  // fair's weights from 0 to 10^6, not both 0.
  const QueueOrder f = read("fair: {prompt_weight: 0, output_weight: 1000000}\n");
  CHECK(f.fair_prompt_weight == 0.0);
  CHECK(f.fair_output_weight == 1e6);
  const QueueOrder g = read("fair: {prompt_weight: 1000000, output_weight: 0}\n");
  CHECK(g.fair_prompt_weight == 1e6);
  CHECK(g.fair_output_weight == 0.0);
  CHECK_THAT(error_of("fair: {prompt_weight: 1000000.1}\n"), Catch::Contains("prompt_weight"));
  CHECK_THAT(error_of("fair: {output_weight: 1000000.1}\n"), Catch::Contains("output_weight"));
  CHECK_THAT(error_of("fair: {prompt_weight: 0, output_weight: 0}\n"),
             Catch::Contains("output_weight") && Catch::Contains("nothing would count"));
}

}  // namespace t_schedulers_queue_key_test
