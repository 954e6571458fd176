// CsvColumns (core/csv_columns.h): the fast paths for plain integers and decimals give what
// from_chars gives, and any other bytes in a number's field are refused with the file, line,
// column and value, never read on (the ASan/UBSan build aborts on a signed overflow).
#include "core/csv_columns.h"

#include <catch2/catch.hpp>
#include <sstream>

#include "core/errors.h"

using namespace servesim;

namespace {

std::string integer_error(const std::string& field) {
  std::istringstream in("a,b\n" + field + ",1\n");
  CsvColumns csv(in, "t.csv", {"a", "b"});
  REQUIRE(csv.next_row());
  try {
    (void)csv.integer(0, 0, 1000);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("csv columns: plain integers and decimals read as from_chars would", "[core]") {
  std::istringstream in("n,x\n123,0.0025733\n000000000000000042,12\n999999999999999999,1.5\n");
  CsvColumns csv(in, "t.csv", {"n", "x"});
  REQUIRE(csv.next_row());
  CHECK(csv.integer(0, 0, 1000) == 123);
  CHECK(csv.real(1, 0, 1) == 0.0025733);
  REQUIRE(csv.next_row());
  CHECK(csv.integer(0, 0, 1000) == 42);
  CHECK(csv.real(1, 0, 100) == 12.0);
  REQUIRE(csv.next_row());
  CHECK(csv.integer(0, 0, INT64_MAX) == 999999999999999999);
  CHECK(csv.real(1, 0, 2) == 1.5);
}

TEST_CASE("csv columns: a number field with other bytes is refused, not read on", "[core]") {
  // 18 bytes, none a digit: the fast path must stop at the first (a fuzzer's find).
  const std::string high(18, static_cast<char>(0xa5));
  CHECK_THAT(integer_error(high), Catch::Contains("t.csv:2: column a = ") &&
                                      Catch::Contains("must be an integer from 0 to 1000"));
  CHECK_THAT(integer_error("12x4"), Catch::Contains("must be an integer from 0 to 1000"));
  CHECK_THAT(integer_error("4.31"), Catch::Contains("must be an integer from 0 to 1000"));
  CHECK_THAT(integer_error("1001"), Catch::Contains("must be an integer from 0 to 1000"));
  CHECK(integer_error("1000") == "(no error)");
}
