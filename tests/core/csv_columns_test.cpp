// CsvColumns (core/csv_columns.h): the fast paths for plain integers and decimals give what
// from_chars gives, and any other bytes in a number's field are refused with the file, line,
// column and value, never read on (the ASan/UBSan build aborts on a signed overflow).
#include "core/csv_columns.h"

#include <catch2/catch.hpp>
#include <sstream>

#include "core/errors.h"

namespace t_core_csv_columns_test {

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

TEST_CASE("csv columns: unquoted fields lose the spaces around them, blank lines are skipped",
          "[core]") {
  // Spaces and tabs at either end of a field, a '\r' before the line end, lines of only
  // spaces, tabs or '\r', an empty field, a column nobody asked for.
  std::istringstream in("a, b ,c\r\n 1 ,\t2,x\r\n\r\n  \t \n\t\r\n3,4 ,\r\n,  ,y\n5,6,z");
  CsvColumns csv(in, "t.csv", {"b", "a"});
  REQUIRE(csv.next_row());
  CHECK(csv.field(0) == "2");
  CHECK(csv.field(1) == "1");
  CHECK(csv.line() == 2);
  REQUIRE(csv.next_row());
  CHECK(csv.field(0) == "4");
  CHECK(csv.field(1) == "3");
  CHECK(csv.line() == 6);
  REQUIRE(csv.next_row());
  CHECK(csv.field(0).empty());
  CHECK(csv.field(1).empty());
  REQUIRE(csv.next_row());
  CHECK(csv.field(0) == "6");
  CHECK(csv.line() == 8);
  CHECK_FALSE(csv.next_row());
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

namespace {

std::string row_error(const std::string& text) {
  std::istringstream in(text);
  try {
    CsvColumns csv(in, "t.csv", {"a", "b"});
    while (csv.next_row()) {
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("csv columns: RFC 4180 quoting is undone, in the header and in rows", "[core]") {
  // The row (0.0,"10",20), a quoted comma, doubled quotes, spaces around a quoted
  // field, an empty quoted field, CRLF, and a quoted field over two lines (the row is named
  // by its first line; the next row's line number counts both).
  std::istringstream in(
      "\"a\", b ,\"c\"\r\n"
      "0.0,\"10\",20\r\n"
      "1, \"x, y\" ,\"say \"\"hi\"\"\"\n"
      "\"\",2,3\n"
      "\"two\nlines\",5,6\n"
      "7,8,9x\n");
  CsvColumns csv(in, "t.csv", {"c", "a", "b"});
  REQUIRE(csv.next_row());
  CHECK(csv.real(1, 0, 1) == 0.0);
  CHECK(csv.integer(2, 0, 100) == 10);
  CHECK(csv.integer(0, 0, 100) == 20);
  REQUIRE(csv.next_row());
  CHECK(csv.field(2) == "x, y");
  CHECK(csv.field(0) == "say \"hi\"");
  REQUIRE(csv.next_row());
  CHECK(csv.field(1).empty());
  CHECK(csv.field(2) == "2");
  REQUIRE(csv.next_row());
  CHECK(csv.line() == 5);
  CHECK(csv.field(1) == "two\nlines");
  CHECK(csv.field(0) == "6");
  REQUIRE(csv.next_row());
  CHECK(csv.line() == 7);
  CHECK_THROWS_WITH(csv.integer(0, 0, 100), Catch::StartsWith("t.csv:7: column c = \"9x\""));
  CHECK_FALSE(csv.next_row());
}

TEST_CASE("csv columns: broken quoting is refused with the line and field", "[core]") {
  CHECK(row_error("a,b\n1,\"2\"x\n") ==
        "t.csv:2: field 2: text after the closing quote; a quoted field ends at its closing "
        "quote (write a '\"' inside one as '\"\"')");
  CHECK(row_error("a,b\n1,2\n\"3,4\n5,6\n") ==
        "t.csv:3: field 1: a quoted field is never closed (a '\"' opens it and the file ends "
        "before its closing '\"')");
  CHECK(row_error("\"a,b\n1,2\n") ==
        "t.csv:1: field 1: a quoted field is never closed (a '\"' opens it and the file ends "
        "before its closing '\"')");
  // A quoted comma is one field: a row of 2 quoted-comma fields against a 2-column header.
  CHECK(row_error("a,b\n\"1,2\",3,4\n") == "t.csv:2: 3 fields, but the header has 2 columns");
  // A '"' inside an unquoted field stays as it is (many writers emit it).
  std::istringstream in("a,b\n5\"in,x\n");
  CsvColumns csv(in, "t.csv", {"a", "b"});
  REQUIRE(csv.next_row());
  CHECK(csv.field(0) == "5\"in");
}

TEST_CASE("csv columns: csv_fields splits one line the same way", "[core]") {
  CHECK(csv_fields(" a ,\"b,c\",\"d\"\"\",", "h.csv", 1) ==
        std::vector<std::string>{"a", "b,c", "d\"", ""});
  CHECK_THROWS_WITH(csv_fields("a,\"b", "h.csv", 4),
                    Catch::StartsWith("h.csv:4: field 2: a quoted field is never closed"));
}

}  // namespace t_core_csv_columns_test
