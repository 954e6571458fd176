// requests.csv (metrics/requests_csv.cpp) row by row on requests built by hand, one of every
// status, compared whole: which columns each status fills, the nanosecond digits, the quoted
// reason, the class and tenant names (an id past the names: empty), the engine's TTFT of a
// client-view request; rows recorded out of order; the 64 KiB buffer written once past it; the
// rows formatted and written on a second thread (write_on_thread): the same bytes, a failed
// write thrown back to the engine's thread.
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/file_sink.h"
#include "core/request.h"
#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_requests_csv_rows_test {

using namespace servesim;

namespace {

const std::string k_header =
    "id,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,release_s,ttft_s,tpot_s,"
    "e2e_s,queue_s,preemptions,status,reason,class,priority,server_ttft_s,tenant\n";

Request base(uint64_t id, int64_t arrival_ns, int32_t prompt, int32_t output) {
  Request r;
  r.spec.id = id;
  r.spec.arrival = Time::ns(arrival_ns);
  r.spec.prompt_tokens = prompt;
  r.spec.output_tokens = output;
  return r;
}

std::vector<Request> one_of_each() {
  std::vector<Request> rs;
  Request r = base(0, 0, 5, 3);  // finished, preempted twice, class b, priority -3
  r.state = RequestState::Released;
  r.first_admitted = Time::ns(250'000'000);
  r.first_token = Time::ns(500'000'000);
  r.last_token = r.finish = Time::ns(1'500'000'000);
  r.release = Time::ns(1'750'000'000);
  r.preemptions = 2;
  r.spec.class_id = 1;
  r.spec.priority = -3;
  rs.push_back(r);
  r = base(1, 1'000'000'001, 7, 1);  // one token; class and tenant past the names; client view
  r.state = RequestState::Released;
  r.first_admitted = Time::ns(1'000'000'001);
  r.first_token = r.last_token = r.finish = r.release = Time::ns(1'250'000'000);
  r.spec.class_id = 5;
  r.spec.tenant_id = 7;
  r.client_view = true;
  r.spec.api_in = Time::ns(10'000'000);
  r.spec.api_out = Time::ns(5'000'000);
  rs.push_back(r);
  r = base(2, 2'000'000'000, 9, 2);  // rejected, a quote in its reason, tenant t1
  r.state = RequestState::Rejected;
  r.release = Time::ns(2'500'000'000);
  r.reject_reason = "needs \"x\" tokens";
  r.spec.tenant_id = 1;
  rs.push_back(r);
  r = base(3, 3'000'000'000, 4, 6);  // timed out after its first token
  r.state = RequestState::Abandoned;
  r.end_cause = EndCause::TimedOut;
  r.first_admitted = Time::ns(3'500'000'000);
  r.first_token = Time::ns(4'000'000'000);
  r.release = Time::ns(5'000'000'000);
  r.preemptions = 1;
  r.reject_reason = "too slow";
  rs.push_back(r);
  r = base(4, 4'000'000'000, 2, 2);  // cancelled before it was admitted
  r.state = RequestState::Abandoned;
  r.end_cause = EndCause::Cancelled;
  r.release = Time::ns(4'500'000'000);
  rs.push_back(r);
  r = base(5, 5'000'000'000, 1, 1);  // failed with its replica, admitted, no token
  r.state = RequestState::Abandoned;
  r.end_cause = EndCause::Failed;
  r.first_admitted = Time::ns(5'250'000'000);
  r.release = Time::ns(6'000'000'000);
  r.reject_reason = "replica 0 failed";
  rs.push_back(r);
  r = base(6, 6'000'000'000, 3, 4);  // unfinished: running, 2 tokens out
  r.state = RequestState::Running;
  r.first_admitted = Time::ns(6'250'000'000);
  r.first_token = Time::ns(6'500'000'000);
  r.generated_tokens = 2;
  rs.push_back(r);
  r = base(7, 7'000'000'000, 1, 1);  // unfinished: still queued
  r.state = RequestState::Queued;
  rs.push_back(r);
  return rs;
}

const std::string k_rows =
    "0,0.000000000,5,3,0.500000000,1.500000000,1.750000000,0.500000000,0.500000000,1.750000000,"
    "0.250000000,2,finished,,b,-3,0.500000000,t0\n"
    "1,1.000000001,7,1,1.250000000,1.250000000,1.250000000,0.249999999,,0.249999999,"
    "0.000000000,0,finished,,,0,0.234999999,\n"
    "2,2.000000000,9,2,,,2.500000000,,,0.500000000,,0,rejected,\"needs 'x' tokens\",a,0,,t1\n"
    "3,3.000000000,4,6,4.000000000,,5.000000000,1.000000000,,2.000000000,0.500000000,1,"
    "timed_out,\"too slow\",a,0,,t0\n"
    "4,4.000000000,2,2,,,4.500000000,,,0.500000000,,0,cancelled,\"\",a,0,,t0\n"
    "5,5.000000000,1,1,,,6.000000000,,,1.000000000,0.250000000,0,failed,\"replica 0 failed\",a,"
    "0,,t0\n"
    "6,6.000000000,3,4,6.500000000,,,,,,0.250000000,0,unfinished,\"2 of 4 tokens generated\",a,"
    "0,,t0\n"
    "7,7.000000000,1,1,,,,,,,,0,unfinished,\"0 of 1 tokens generated\",a,0,,t0\n";

}  // namespace

TEST_CASE("requests csv rows: every status's columns, compared whole", "[metrics]") {
  const std::vector<std::string> classes{"a", "b"};
  const std::vector<std::string> tenants{"t0", "t1"};
  const std::vector<Request> rs = one_of_each();
  CHECK(requests_csv(rs, classes, tenants) == k_header + k_rows);
  // Recorded in any order, written in id order.
  for (const std::vector<size_t>& order :
       {std::vector<size_t>{2, 0, 1, 4, 3, 5, 7, 6}, std::vector<size_t>{7, 6, 5, 4, 3, 2, 1, 0},
        std::vector<size_t>{0, 2, 1, 3, 5, 4, 6, 7}}) {
    std::vector<Request> shuffled;
    for (const size_t i : order) shuffled.push_back(rs[i]);
    CHECK(requests_csv(shuffled, classes, tenants) == k_header + k_rows);
  }
  // Without names the class and tenant columns are empty.
  const std::string bare = requests_csv({rs[0]});
  CHECK(bare == k_header +
                    "0,0.000000000,5,3,0.500000000,1.500000000,1.750000000,0.500000000,"
                    "0.500000000,1.750000000,0.250000000,2,finished,,,-3,0.500000000,\n");
  // A row recorded twice is a logic error.
  std::ostringstream out;
  RequestsCsvWriter w(out);
  w.record(rs[0]);
  CHECK_THROWS_AS(w.record(rs[0]), std::logic_error);
}

TEST_CASE("requests csv rows: the buffer is written once it holds more than 64 KiB", "[metrics]") {
  // A rejected row whose reason brings the header and the row to exactly 65,536 bytes.
  Request r = base(0, 0, 1, 1);
  r.state = RequestState::Rejected;
  r.release = Time::ns(0);
  const size_t empty_row = requests_csv({r}).size();  // header + the row with no reason
  r.reject_reason.assign(65536 - empty_row, 'x');
  REQUIRE(requests_csv({r}).size() == 65536);
  std::ostringstream out;
  RequestsCsvWriter w(out);
  w.record(r);
  CHECK(out.str().empty());  // exactly 64 KiB: kept
  Request next = base(1, 0, 1, 1);
  next.state = RequestState::Rejected;
  next.release = Time::ns(0);
  w.record(next);
  const size_t written = out.str().size();
  CHECK(written > 65536);  // one more row: written
  CHECK(written < 65536 + 200);
  // Held rows (recorded ahead of a missing id) stay held until the gap is filled or finish.
  Request far = base(3, 0, 1, 1);
  far.state = RequestState::Rejected;
  far.release = Time::ns(0);
  far.reject_reason.assign(70000, 'y');
  w.record(far);
  CHECK(out.str().size() == written);
  w.finish();
  CHECK(out.str().size() > written + 70000);
}

TEST_CASE("requests csv rows: rows held far ahead and long come out in id order", "[metrics]") {
  // 600 finished requests recorded out of order: shuffled in blocks of 8, then a run in which
  // id k + 100 leaves before k (the held rows wrap around the writer's ring and make it grow
  // past 16, 32, 64 and 128 slots), and ids 590 and 595 never recorded (finish() writes what
  // is held after them). The file must be the rows one by one, in id order, without those two.
  std::vector<Request> rs;
  for (uint64_t id = 0; id < 600; ++id) {
    Request r = base(id, static_cast<int64_t>(id) * 1'000'000, 1 + static_cast<int32_t>(id), 2);
    r.state = RequestState::Released;
    r.first_admitted = r.spec.arrival;
    r.first_token = r.spec.arrival + Time::ns(7);
    r.last_token = r.finish = r.release = r.first_token + Time::ns(static_cast<int64_t>(id));
    rs.push_back(r);
  }
  std::vector<uint64_t> order;
  for (uint64_t b = 0; b < 200; b += 8)
    for (const uint64_t k : {5, 0, 7, 2, 1, 6, 3, 4}) order.push_back(b + k);
  for (uint64_t id = 200; id < 300; ++id) order.push_back(id + 100);  // 300..399 first
  for (uint64_t id = 200; id < 300; ++id) order.push_back(id);
  for (uint64_t id = 400; id < 600; ++id)
    if (id != 590 && id != 595) order.push_back(id);
  std::ostringstream out;
  RequestsCsvWriter w(out);
  for (const uint64_t id : order) w.record(rs[id]);
  w.finish();
  std::string want = k_header;
  for (const Request& r : rs)
    if (r.spec.id != 590 && r.spec.id != 595) want += requests_csv({r}).substr(k_header.size());
  CHECK(out.str() == want);
}

TEST_CASE("requests csv rows: thousands of held rows freed at once keep the buffer's size",
          "[metrics]") {
  // Ids 1..4000 leave before id 0 (a saturated replica's queue overtaken by another's): all
  // held, then written at once when id 0 comes, about 300 KB. The buffer is written out as it
  // passes 64 KiB on the way, so it never grows past what it reserved, and the file is the
  // rows in id order.
  std::vector<Request> rs;
  for (uint64_t id = 0; id <= 4000; ++id) {
    Request r = base(id, static_cast<int64_t>(id) * 1'000'003, 100, 20);
    r.state = RequestState::Released;
    r.first_admitted = r.spec.arrival;
    r.first_token = r.spec.arrival + Time::ns(123'456'789);
    r.last_token = r.finish = r.release = r.first_token + Time::ns(987'654'321);
    rs.push_back(r);
  }
  std::ostringstream out;
  RequestsCsvWriter w(out);
  const size_t reserved = w.buffer_capacity();
  CHECK(reserved > 65536);
  for (uint64_t id = 4000; id >= 1; --id) w.record(rs[id]);
  CHECK(out.str().empty());
  w.record(rs[0]);
  CHECK(w.buffer_capacity() == reserved);
  CHECK(out.str().size() > 200'000);  // written while draining, not only at the end
  w.finish();
  std::string want = k_header;
  for (const Request& r : rs) want += requests_csv({r}).substr(k_header.size());
  CHECK(out.str() == want);
}

TEST_CASE("requests csv rows: a held finished row keeps its values from when it was recorded",
          "[metrics]") {
  // A finished request recorded before id 0 waits as its values, written when id 0 comes: the
  // Request changed (or reused) in between does not show. Its release differs from its finish
  // and its engine TTFT from its TTFT (the `api` section: 0.3 s in, 0.2 s out), it has names, a
  // negative priority, times past 10^3 s and one token (no TPOT).
  const std::vector<std::string> classes{"chat", "batch"};
  const std::vector<std::string> tenants{"acme"};
  Request r = base(1, 1'234'500'000'000, 17, 1);
  r.state = RequestState::Released;
  r.client_view = true;
  r.spec.api_in = Time::ns(300'000'000);
  r.spec.api_out = Time::ns(200'000'000);
  r.first_admitted = Time::ns(1'234'800'000'000);
  r.first_token = r.last_token = r.finish = Time::ns(1'235'600'000'123);
  r.release = Time::ns(1'235'800'000'123);
  r.spec.class_id = 1;
  r.spec.priority = -12;
  r.preemptions = 3;
  const std::string row =
      "1,1234.500000000,17,1,1235.600000123,1235.600000123,1235.800000123,1.100000123,,"
      "1.300000123,0.300000000,3,finished,,batch,-12,0.600000123,acme\n";
  Request first = base(0, 0, 1, 3);
  first.state = RequestState::Released;
  first.first_admitted = first.first_token = Time::ns(0);
  first.last_token = first.finish = first.release = Time::ns(4);
  const std::string first_row =
      "0,0.000000000,1,3,0.000000000,0.000000004,0.000000004,0.000000000,0.000000002,"
      "0.000000004,0.000000000,0,finished,,chat,0,0.000000000,acme\n";
  std::ostringstream out;
  RequestsCsvWriter w(out);
  w.set_class_names(&classes);
  w.set_tenant_names(&tenants);
  w.record(r);
  r.release = Time::ns(1);  // reused: the held row keeps what it was given
  r.spec.priority = 5;
  w.record(first);
  w.finish();
  CHECK(out.str() == k_header + first_row + row);
}

}  // namespace t_metrics_requests_csv_rows_test

namespace t_metrics_requests_csv_rows_test {

namespace {

/// `n` requests cycling through one_of_each()'s statuses with ids 0..n-1, some reasons long
/// enough to pass the output buffer's limit, classes and tenants up to 40 (past the names known
/// at first).
std::vector<Request> many(size_t n) {
  const std::vector<Request> kinds = one_of_each();
  std::vector<Request> rs;
  for (size_t i = 0; i < n; ++i) {
    Request r = kinds[i % kinds.size()];
    r.spec.id = i;
    r.spec.class_id = static_cast<uint16_t>(i % 41);
    r.spec.tenant_id = static_cast<uint16_t>(i % 37);
    if (i % 997 == 2) r.reject_reason.assign(70000, 'q');
    rs.push_back(r);
  }
  return rs;
}

/// requests.csv of `rs` recorded in `order`, on a second thread or not; the names grow by one
/// each every 100 records (a streamed trace learns them as it reads).
std::string recorded(const std::vector<Request>& rs, const std::vector<size_t>& order,
                     bool thread) {
  std::ostringstream out;
  std::vector<std::string> classes{"c0"}, tenants{"t0"};
  classes.reserve(100);  // the writer keeps pointers to the lists, as to the engine's
  tenants.reserve(100);
  RequestsCsvWriter w(out);
  w.set_class_names(&classes);
  w.set_tenant_names(&tenants);
  if (thread) REQUIRE(w.write_on_thread());
  for (size_t k = 0; k < order.size(); ++k) {
    if (k % 100 == 99) {
      classes.push_back("c" + std::to_string(classes.size()));
      tenants.push_back("t" + std::to_string(tenants.size()));
    }
    w.record(rs[order[k]]);
  }
  w.finish();
  return out.str();
}

}  // namespace

TEST_CASE("requests csv rows: written on a second thread, the same bytes", "[metrics]") {
  const std::vector<Request> rs = many(5000);
  std::vector<size_t> in_order(rs.size());
  for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = i;
  // Out of order: pairs swapped, blocks of 300 reversed (rows held, then thousands freed at
  // once), and the last 50 left out (a bounded run: finish writes the rows still held).
  std::vector<size_t> shuffled = in_order;
  for (size_t i = 0; i + 1 < shuffled.size(); i += 2) std::swap(shuffled[i], shuffled[i + 1]);
  for (size_t i = 0; i + 300 <= 3000; i += 300)
    std::reverse(shuffled.begin() + static_cast<ptrdiff_t>(i),
                 shuffled.begin() + static_cast<ptrdiff_t>(i + 300));
  std::vector<size_t> gappy(in_order.begin() + 50, in_order.end());
  for (const auto* order : {&in_order, &shuffled, &gappy}) {
    const std::string expected = recorded(rs, *order, false);
    CHECK(expected.size() > 500'000);
    CHECK(recorded(rs, *order, true) == expected);
  }
  // Nothing recorded: the header alone.
  std::ostringstream out;
  RequestsCsvWriter w(out);
  REQUIRE(w.write_on_thread());
  w.finish();
  CHECK(out.str() == k_header);
}

TEST_CASE("requests csv rows: a row recorded twice on the second thread is a logic error",
          "[metrics]") {
  // The writer's thread puts the rows in id order there: it finds the second one, and the
  // engine's thread throws its error at the finish.
  const std::vector<Request> rs = many(10);
  std::ostringstream out;
  RequestsCsvWriter w(out);
  REQUIRE(w.write_on_thread());
  w.record(rs[0]);
  w.record(rs[1]);
  w.record(rs[0]);
  CHECK_THROWS_AS(w.finish(), std::logic_error);
}

TEST_CASE("requests csv rows: a write that fails on the second thread is thrown by the engine's",
          "[metrics]") {
  const std::unique_ptr<FileSink> sink = test::full_disk_sink("--out o/requests.csv");
  if (!sink) {
    WARN("no /dev/full here: skipped");
    return;
  }
  const auto out = make_output_stream(*sink);
  const std::vector<Request> rs = many(20000);
  RequestsCsvWriter w(*out);
  REQUIRE(w.write_on_thread());
  // The first failed write stops the writer; a later record or the finish throws its error.
  const auto record_all = [&] {
    for (const Request& r : rs) w.record(r);
    w.finish();
  };
  CHECK_THROWS_WITH(record_all(),
                    Catch::Contains("--out o/requests.csv: write failed after 0 bytes: No space "
                                    "left on device"));
}

TEST_CASE("requests csv rows: a writer dropped without finish ends its thread", "[metrics]") {
  std::ostringstream out;
  {
    RequestsCsvWriter w(out);
    REQUIRE(w.write_on_thread());
    for (const Request& r : many(3000)) w.record(r);
  }  // a run that threw: the writer goes, its thread with it
  SUCCEED();
}

}  // namespace t_metrics_requests_csv_rows_test
