#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>
#include <streambuf>

#include "tests/test_paths.h"
#include "tests/traces/trace_test_support.h"
#include "traces/factories.h"
#include "traces/trace_rows.h"

namespace t_traces_azure_trace_test {

using namespace servesim;
using namespace servesim::test;

TEST_CASE("azure: fractional timestamps parse to exact nanoseconds", "[traces]") {
  // 2023-11-16 00:00:00 UTC is day 19,677 since 1970-01-01: 1,700,092,800 s.
  CHECK(parse_utc_timestamp_ns("2023-11-16 18:15:46.6805900") == 1'700'158'546'680'590'000);
  // No fraction, one digit, nine digits; a tenth digit rounds to the nearest nanosecond.
  CHECK(parse_utc_timestamp_ns("1970-01-01 00:00:00") == 0);
  CHECK(parse_utc_timestamp_ns("1970-01-01 00:00:01.5") == 1'500'000'000);
  CHECK(parse_utc_timestamp_ns("1970-01-01 00:00:01.123456789") == 1'123'456'789);
  CHECK(parse_utc_timestamp_ns("1970-01-01 00:00:01.1234567894") == 1'123'456'789);
  CHECK(parse_utc_timestamp_ns("1970-01-01 00:00:01.1234567885") == 1'123'456'789);
  CHECK(parse_utc_timestamp_ns("1970-01-01 00:00:00.0000000005") == 1);
  // Through a double of epoch seconds (steps of 238 ns there) this would be ...546680589824 ns.
  CHECK(*parse_utc_timestamp_ns("2023-11-16 18:15:46.6805900") % 1'000'000'000 == 680'590'000);
  // A leap day, the end of a year.
  CHECK(parse_utc_timestamp_ns("2024-02-29 00:00:00") == 1'709'164'800'000'000'000);
  CHECK(parse_utc_timestamp_ns("2023-12-31 23:59:59.999999999") == 1'704'067'199'999'999'999);
}

TEST_CASE("azure: UTC offsets and Z of the 2024 release give the same instant", "[traces]") {
  const int64_t midnight = 1'715'299'200'000'000'000;  // 2024-05-10 00:00:00 UTC
  CHECK(parse_utc_timestamp_ns("2024-05-10 00:00:00+00:00") == midnight);
  CHECK(parse_utc_timestamp_ns("2024-05-10 00:00:00Z") == midnight);
  CHECK(parse_utc_timestamp_ns("2024-05-10T00:00:00Z") == midnight);
  CHECK(parse_utc_timestamp_ns("2024-05-10 02:00:00+02:00") == midnight);
  CHECK(parse_utc_timestamp_ns("2024-05-10 02:30:00+0230") == midnight);
  CHECK(parse_utc_timestamp_ns("2024-05-09 19:00:00-05") == midnight);
  CHECK(parse_utc_timestamp_ns("2024-05-10 00:00:00.0090000+00:00") == midnight + 9'000'000);
}

TEST_CASE("azure: malformed timestamps are refused", "[traces]") {
  for (const char* bad :
       {"", "2023-11-16", "2023-11-16 18:15", "2023-13-01 00:00:00", "2023-02-29 00:00:00",
        "2023-11-31 00:00:00", "2023-11-16 24:00:00", "2023-11-16 18:60:00", "2023-11-16 18:15:60",
        "2023-11-16 18:15:46.", "2023-11-16 18:15:46.5+24:00", "2023-11-16 18:15:46+5",
        "2023-11-16 18:15:46 ", "2023-11-16 18:15:46.5x", "1969-12-31 23:59:59",
        "2201-01-01 00:00:00", "16/11/2023 18:15:46", "2023-11-16  18:15:46",
        "+2023-11-16 18:15:46"})
    CHECK_FALSE(parse_utc_timestamp_ns(bad).has_value());
}

TEST_CASE("azure: rows across days, a leap day and a month end keep exact arrivals", "[traces]") {
  // Consecutive rows share their date (the reader remembers the last one's days); day 29 and
  // later are read by the general parser.
  const std::string path =
      write_temp("days.csv",
                 "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2024-02-28 23:59:59.5,1,1\r\n"
                 "2024-02-29 00:00:00.25,1,1\r\n2024-03-01 00:00:00,1,1\r\n"
                 "2024-03-01 00:00:01.1234567895,1,1\r\n2024-03-01T00:00:02Z,1,1\r\n");
  auto source = trace_of("path: " + path + "\n");
  // From 23:59:59.5 on the 28th: 0.75 s to the 29th's 00:00:00.25; a whole day (2024 is a leap
  // year) plus 0.5 s to March 1st; then 1.123456790 s more (the tenth digit, 5, rounds up), 2 s.
  CHECK(arrivals_ns(drain(*source)) == std::vector<int64_t>{0, 750'000'000, 86'400'500'000'000,
                                                            86'401'623'456'790,
                                                            86'402'500'000'000});
  const std::string h = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  CHECK(trace_error("a.csv", h + "2023-11-16 18:15:46,1,1\n2023-11-16 25:00:00,1,1\n") ==
        "a.csv:3: column TIMESTAMP = \"2023-11-16 25:00:00\": must be a date and time from 1970 to "
        "2200 like 2023-11-16 18:15:46.6805900, optionally followed by a UTC offset (+00:00) or Z");
}

TEST_CASE("azure: timestamps of every day of 1970 to 2200 match the calendar", "[traces]") {
  std::mt19937_64 rng(34);
  for (int i = 0; i < 20'000; ++i) {
    using namespace std::chrono;
    const int64_t day = static_cast<int64_t>(rng() % 84'006);  // 1970-01-01 to 2199-12-31
    const year_month_day date{sys_days{days{day}}};
    const int64_t second = static_cast<int64_t>(rng() % 86'400);
    const int digits = static_cast<int>(rng() % 12);  // 0 to 11 fraction digits
    std::string fraction;
    for (int d = 0; d < digits; ++d) fraction += static_cast<char>('0' + rng() % 10);
    // The nanoseconds the fraction stands for: nine digits, rounded half up by the tenth.
    int64_t ns = 0;
    for (int d = 0; d < 9; ++d) ns = ns * 10 + (d < digits ? fraction[d] - '0' : 0);
    if (digits > 9 && fraction[9] >= '5') ++ns;
    const std::string text =
        fmt::format("{:04}-{:02}-{:02}{}{:02}:{:02}:{:02}{}{}", static_cast<int>(date.year()),
                    static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                    i % 2 == 0 ? ' ' : 'T', second / 3600, second / 60 % 60, second % 60,
                    digits > 0 ? "." : "", fraction);
    INFO(text);
    REQUIRE(parse_utc_timestamp_ns(text) == (day * 86'400 + second) * 1'000'000'000 + ns);
  }
}

TEST_CASE("azure: the 2023 conversation excerpt replays from its first request", "[traces]") {
  auto source = trace_of("path: " + k_test_data + "azure_conv_2023_excerpt.csv\nformat: azure\n");
  const auto rows = drain(*source);
  REQUIRE(rows.size() == 30);
  // 18:15:46.6805900 is time 0; 18:15:50.9951690 is 4.3145790 s later; 18:15:51.2224670 4.541877.
  CHECK(rows[0].arrival.count_ns() == 0);
  CHECK(rows[1].arrival.count_ns() == 4'314'579'000);
  CHECK(rows[2].arrival.count_ns() == 4'541'877'000);
  CHECK(rows[0].prompt_tokens == 374);
  CHECK(rows[0].output_tokens == 44);
  CHECK(rows[29].id == 29);
  CHECK(rows[0].block_hashes.empty());
  CHECK(rows[0].hash_block_tokens == 0);
  // The same 30 requests as the servesim CSV converted from the same file (its first 30 rows;
  // it keeps 6 decimals, and these timestamps have no more).
  auto converted =
      trace_of("path: " + std::string(SERVESIM_SOURCE_DIR) + "/traces/data/azure-conv-300.csv\n");
  for (const auto& r : rows) {
    RequestSpec c;
    REQUIRE(converted->next(c));
    CHECK(c.arrival == r.arrival);
    CHECK(c.prompt_tokens == r.prompt_tokens);
    CHECK(c.output_tokens == r.output_tokens);
  }
}

TEST_CASE("azure: the 2024 form with UTC offsets reads in one timeline", "[traces]") {
  auto source = trace_of("path: " + k_test_data + "azure_2024_style.csv\n");  // format: auto
  const auto rows = drain(*source);
  // .009 s is time 0; .25 -> 0.241 s; 00:00:01Z -> 0.991 s; 02:00:01.5+02:00 -> 1.491 s.
  CHECK(arrivals_ns(rows) == std::vector<int64_t>{0, 241'000'000, 991'000'000, 1'491'000'000});
  CHECK(rows[3].prompt_tokens == 1024);
}

TEST_CASE("azure: bad rows name the file, line, column and what is allowed", "[traces]") {
  const std::string h = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  const std::string ok = "2023-11-16 18:15:46.6805900,374,44\n";
  CHECK(trace_error("a.csv", h + ok + "2023-11-16 18:15:47,x,44\n") ==
        "a.csv:3: column ContextTokens = \"x\": must be an integer from 1 to 1000000000");
  CHECK(trace_error("a.csv", h + ok + "2023-11-16 18:15:47,5,0\n") ==
        "a.csv:3: column GeneratedTokens = \"0\": must be an integer from 1 to 1000000000 "
        "(workload.trace.zero_tokens: skip drops rows with a 0, and counts them)");
  CHECK(trace_error("a.csv", h + ok + "11/16/2023 18:15,5,5\n") ==
        "a.csv:3: column TIMESTAMP = \"11/16/2023 18:15\": must be a date and time from 1970 to "
        "2200 like 2023-11-16 18:15:46.6805900, optionally followed by a UTC offset (+00:00) or Z");
  CHECK(trace_error("a.csv", h + ok + "2023-11-16 18:15:40,5,5\n") ==
        "a.csv:3: column TIMESTAMP = \"2023-11-16 18:15:40\" is before the previous row's "
        "\"2023-11-16 18:15:46.6805900\" (line 2): rows must be in non-decreasing arrival order "
        "(workload.trace.sort: true sorts the trace in memory)");
  CHECK(trace_error("a.csv", h) == "a.csv: the trace has a header but no requests");
  CHECK(trace_error("a.csv", "TIMESTAMP,ContextTokens,Generated\n" + ok, "format: azure") ==
        "a.csv:1: the header lacks column GeneratedTokens (needs TIMESTAMP, ContextTokens, "
        "GeneratedTokens; found: TIMESTAMP,ContextTokens,Generated)");
}

TEST_CASE("azure: rows with 0 tokens are skipped and counted only when asked", "[traces]") {
  const std::string path =
      write_temp("z.csv",
                 "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,0,5\n"
                 "2023-11-16 18:00:01,7,5\n2023-11-16 18:00:02,7,0\n2023-11-16 18:00:03.5,8,9\n");
  auto source = trace_of("path: " + path + "\nzero_tokens: skip\n");
  const auto rows = drain(*source);
  // The first row kept sets time 0; ids count the rows kept.
  CHECK(arrivals_ns(rows) == std::vector<int64_t>{0, 2'500'000'000});
  CHECK(ids(rows) == std::vector<uint64_t>{0, 1});
  CHECK(source->counters() ==
        std::vector<std::pair<std::string, int64_t>>{{"trace_rows_skipped_zero_tokens", 2}});
}

/// Shows its reader `window` bytes of `text` at a time: with a window of 1 no row ever lies
/// whole in the buffer, so the reader takes the general path for every row.
class WindowBuf : public std::streambuf {
 public:
  WindowBuf(std::string text, size_t window) : m_text(std::move(text)), m_window(window) {}

 protected:
  int_type underflow() override {
    if (gptr() != nullptr && gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const size_t at = gptr() == nullptr ? 0 : static_cast<size_t>(gptr() - m_text.data());
    if (at >= m_text.size()) return traits_type::eof();
    char* const b = m_text.data() + at;
    setg(b, b, b + std::min(m_window, m_text.size() - at));
    return traits_type::to_int_type(*b);
  }

 private:
  std::string m_text;
  size_t m_window;
};

/// Every row make_azure_rows reads from `text` shown `window` bytes at a time, one line of text
/// each, and the message that stops it (if one does).
std::vector<std::string> azure_rows_seen(const std::string& text, size_t window) {
  WindowBuf buf(text, window);
  std::istream in(&buf);
  TraceOptions options;
  options.skip_zero_tokens = true;
  std::vector<std::string> out;
  try {
    auto rows = make_azure_rows(in, "t.csv", options);
    for (TraceRow row; rows->next(row);)
      out.push_back(fmt::format("{} {} {} {} {} {}", row.line, row.arrival_ns, row.prompt_tokens,
                                row.output_tokens, row.arrival_text,
                                row.skip == nullptr ? "-" : row.skip));
  } catch (const InputError& e) {
    out.push_back(e.what());
  }
  return out;
}

TEST_CASE("azure: rows read in the stream's buffer are the rows the general path reads",
          "[traces]") {
  // Rows of every shape: the files' own (7 fraction digits, CRLF), other fraction lengths, 'T',
  // days past the 28th, offsets, leading zeros, counts at and past the limit, zeros (skipped),
  // spaces, quotes, blank lines, LF ends; a window of 1 reads them all the general way.
  std::mt19937_64 rng(44);
  std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";
  int64_t second = 0;
  std::string first;  // the first row's line and arrival, worked out apart from the reader
  for (int i = 0; i < 3'000; ++i) {
    second += static_cast<int64_t>(rng() % 5'000);
    const int64_t day = 19'000 + second / 86'400;
    using namespace std::chrono;
    const year_month_day date{sys_days{days{day}}};
    const int digits = rng() % 3 == 0 ? static_cast<int>(rng() % 12) : 7;
    std::string fraction;
    for (int d = 0; d < digits; ++d) fraction += static_cast<char>('0' + rng() % 10);
    std::string stamp =
        fmt::format("{:04}-{:02}-{:02}{}{:02}:{:02}:{:02}{}{}", static_cast<int>(date.year()),
                    static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                    rng() % 8 == 0 ? 'T' : ' ', second % 86'400 / 3600, second / 60 % 60,
                    second % 60, digits > 0 ? "." : "", fraction);
    if (rng() % 16 == 0) stamp += "Z";
    if (i == 0) {  // its nanoseconds: nine fraction digits, rounded half up by the tenth
      int64_t ns = 0;
      for (int d = 0; d < 9; ++d) ns = ns * 10 + (d < digits ? fraction[d] - '0' : 0);
      if (digits > 9 && fraction[9] >= '5') ++ns;
      first = fmt::format("2 {} ", (day * 86'400 + second) * 1'000'000'000 + ns);
    }
    // Counts that are not plain: 0, leading zeros, the limit, 11 digits, a space, quotes.
    static const char* const k_odd[] = {"0", "0042", "1000000000", "00000000007", " 9", "\"12\""};
    const auto count = [&] {
      const size_t pick = rng() % 12;
      return pick < 6 ? std::string(k_odd[pick]) : std::to_string(1 + rng() % 5'000);
    };
    text += fmt::format("{},{},{}{}", stamp, count(), count(), rng() % 4 == 0 ? "\n" : "\r\n");
    if (rng() % 64 == 0) text += rng() % 2 == 0 ? "\r\n" : "  \n";
  }
  const std::vector<std::string> general = azure_rows_seen(text, 1);
  REQUIRE(general.size() == 3'000);
  CHECK(general[0].rfind(first, 0) == 0);
  for (const size_t window : {size_t{2}, size_t{27}, size_t{40}, size_t{4096}, text.size()}) {
    INFO(window);
    CHECK(azure_rows_seen(text, window) == general);
  }
  // A bad row stops both with the same message, whether in the buffer or past it.
  for (const std::string bad : {"2023-11-16 18:15:47,x,44", "2023-11-16 18:15:47,5,1000000001",
                                "2023-11-16 24:00:00.0000000,5,5", "2023-11-16 18:15:47.5,5,5,"}) {
    INFO(bad);
    const std::string t = text + bad + "\r\n";
    const std::vector<std::string> seen = azure_rows_seen(t, 1);
    REQUIRE(seen.size() == 3'001);
    CHECK(seen.back().rfind("t.csv:", 0) == 0);
    CHECK(azure_rows_seen(t, t.size()) == seen);
    CHECK(azure_rows_seen(t, 64) == seen);
  }
}

}  // namespace t_traces_azure_trace_test
