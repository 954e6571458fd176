// steps.csv's times (metrics/steps_csv.cpp): seconds with nine decimals from integer
// nanoseconds, exact for any value a Time holds, negative ones included (a step record made by
// hand; the engine's are never negative), with the sign before the whole seconds.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "metrics/steps_csv.h"
#include "sim/step_observer.h"

namespace t_metrics_steps_csv_times_test {

using namespace servesim;

namespace {

// The row the writer gives one step at `start_ns` lasting `duration_ns`, the other fields 0.
std::string row(int64_t start_ns, int64_t duration_ns) {
  std::ostringstream out;
  StepsCsvWriter w(out);
  StepRecord s;
  s.start = Time::ns(start_ns);
  s.duration = Time::ns(duration_ns);
  w.on_step(s);
  w.finish();
  const std::string text = out.str();
  return text.substr(text.find('\n') + 1);
}

}  // namespace

TEST_CASE("steps.csv times: nine decimals from nanoseconds, either sign", "[metrics][steps]") {
  CHECK(row(0, 1) == "0,0.000000000,0.000000001,0,0,0,0,0,0,0,0,0,,,\n");
  CHECK(row(3'000'000'007, 999'999'999) == "0,3.000000007,0.999999999,0,0,0,0,0,0,0,0,0,,,\n");
  CHECK(row(1'000'000'000, 12'000'000'000) == "0,1.000000000,12.000000000,0,0,0,0,0,0,0,0,0,,,\n");
  // Negative: the sign, the whole seconds, then the fraction's digits.
  CHECK(row(-1'500'000'000, 0) == "0,-1.500000000,0.000000000,0,0,0,0,0,0,0,0,0,,,\n");
  CHECK(row(-1, 0) == "0,-0.000000001,0.000000000,0,0,0,0,0,0,0,0,0,,,\n");
  CHECK(row(-2'000'000'000, 0) == "0,-2.000000000,0.000000000,0,0,0,0,0,0,0,0,0,,,\n");
  CHECK(row(-999'999'999, 0) == "0,-0.999999999,0.000000000,0,0,0,0,0,0,0,0,0,,,\n");
}

TEST_CASE("steps.csv times: a long run's rows all arrive, in order, past the write buffer",
          "[metrics][steps]") {
  // About 70 bytes a row: 2,000 rows pass the 64 KiB buffer more than once.
  std::ostringstream out;
  StepsCsvWriter w(out);
  for (int64_t k = 0; k < 2000; ++k) {
    StepRecord s;
    s.replica = static_cast<uint32_t>(k % 3);
    s.start = Time::ns(k * 1'000'000);
    s.duration = Time::ns(1'000'000);
    s.sequences = static_cast<int32_t>(k);
    w.on_step(s);
  }
  w.finish();
  std::istringstream in(out.str());
  std::string line;
  std::getline(in, line);
  CHECK(line.rfind("replica,start_s,", 0) == 0);
  int64_t k = 0;
  for (; std::getline(in, line); ++k) {
    INFO(line);
    const std::string want_start = std::to_string(k / 1000) + "." + [&] {
      std::string ms = std::to_string(k % 1000);
      return std::string(3 - ms.size(), '0') + ms + "000000";
    }();
    REQUIRE(line.rfind(std::to_string(k % 3) + "," + want_start + ",0.001000000," +
                           std::to_string(k) + ",",
                       0) == 0);
  }
  CHECK(k == 2000);
}

}  // namespace t_metrics_steps_csv_times_test
