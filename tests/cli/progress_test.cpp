// sim/progress.cpp: the progress line's text, rate limiting and silence when disabled.
#include "cli/progress.h"

#include <catch2/catch.hpp>
#include <sstream>
#include <thread>
#include <vector>

namespace t_cli_progress_test {

using namespace servesim;

TEST_CASE("progress: the line shows share, amounts, rate and ETA", "[cli][progress]") {
  // 30 of 120 s simulated in 2 s of wall time: 15 s/s, 90 s left -> ETA 6 s.
  CHECK(Progress::format_line("run", 30, 120, "s", 2.0, false) ==
        "run  25% 30/120 s, 15 s/s, ETA 6s");
  // The bar has 24 cells; a quarter is 6 of them.
  CHECK(Progress::format_line("run", 30, 120, "s", 2.0, true) ==
        "run [######..................]  25% 30/120 s, 15 s/s, ETA 6s");
  // Done: elapsed time instead of an ETA; 90 s shows as minutes.
  CHECK(Progress::format_line("sweep", 8, 8, "points", 90.0, false) ==
        "sweep 100% 8/8 points, 0.1 points/s, 1m30s elapsed");
  // No total: amount and rate only.
  CHECK(Progress::format_line("run", 500, 0, "requests", 4.0, false) ==
        "run 500 requests, 125 requests/s, 4s elapsed");
}

TEST_CASE("progress: a string stream gets plain lines, rate-limited", "[cli][progress]") {
  std::ostringstream out;
  {
    Progress p("run", 100, "s", out, true);
    CHECK_FALSE(p.is_tty());  // not stderr: never a terminal
    for (int i = 0; i <= 100; ++i) p.update(i);
    // Well under a second of wall time: no line yet (at most one per second for a tenth).
    CHECK(out.str().empty());
    p.finish();
    p.finish();  // idempotent
  }
  // Nothing was drawn before finish(), so a short run stays silent.
  CHECK(out.str().empty());
}

TEST_CASE("progress: a line once a tenth is done and a second has passed", "[cli][progress]") {
  std::ostringstream out;
  Progress p("sweep", 10, "points", out, true);
  p.update(0.5);
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));
  p.update(2);  // over a tenth since the last line, over a second since the start
  const std::string first = out.str();
  CHECK(first.rfind("sweep  20% 2/10 points", 0) == 0);
  CHECK(first.find("ETA") != std::string::npos);
  CHECK(first.back() == '\n');
  p.update(2.5);  // too soon: nothing more
  CHECK(out.str() == first);
  p.finish();  // something was drawn, so finish draws the final state
  CHECK(out.str().size() > first.size());
  CHECK(out.str().find("sweep  25% 2.5/10 points") != std::string::npos);
}

TEST_CASE("progress: disabled writes nothing, updates from threads are safe", "[cli][progress]") {
  std::ostringstream out;
  {
    Progress off("run", 10, "s", out, false);
    off.update(5);
    off.finish();
  }
  CHECK(out.str().empty());
  Progress on("sweep", 4000, "points", out, true);
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&on, t] {
      for (int i = 0; i < 1000; ++i) on.update(t * 1000 + i);
    });
  for (auto& w : workers) w.join();
  on.finish();
  SUCCEED("no data race (the sanitizer build checks)");
}

}  // namespace t_cli_progress_test
