#pragma once
// Reads named columns of a CSV file, row by row, with messages that name the file, the line,
// the column and the value. CSV as RFC 4180 writes it: comma-separated; a field may be quoted
// ("10", "a, b", "say ""hi"""), a doubled quote inside quotes standing for one, and a quoted
// field may run over line ends (the row is then named by its first line). Spaces around fields
// and CRLF line ends are tolerated, blank lines skipped, a UTF-8 byte-order mark ignored; a '"'
// inside an unquoted field is kept as it is. Memory
// does not grow with the file: the reader holds one line (at most k_max_line_bytes) and one
// view per requested column. Values from the file are echoed into messages through printable().
#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace servesim {

/// Reads one line (without its '\n') into `line`, never holding more than `max_bytes` of it.
/// Returns false at the end of input; throws InputError naming `name` and `line_no` when the
/// line is longer than `max_bytes`. For every line-based reader (CSV, JSONL).
[[nodiscard]] bool read_bounded_line(std::istream& in, std::string& line, size_t max_bytes,
                                     const std::string& name, size_t line_no, const char* what);

/// The fields of one CSV line (a header, a short table row), RFC 4180 quoting undone and
/// unquoted fields trimmed of spaces, tabs and a trailing '\r'. Throws InputError naming
/// `name`:`line_no` on a quote left open or text after a closing quote.
[[nodiscard]] std::vector<std::string> csv_fields(std::string_view line, const std::string& name,
                                                  size_t line_no);

class CsvColumns {
 public:
  /// Opens `path` (or `path`.gz, core/input_file.h) and finds each of `columns` in its header (in
  /// any order; other columns are ignored). Throws InputError if the file cannot be read or a
  /// column is missing.
  CsvColumns(std::string path, std::vector<std::string> columns);
  /// The same over a stream; `name` stands for the file in messages. REQUIRES: `in` outlives
  /// this reader.
  CsvColumns(std::istream& in, std::string name, std::vector<std::string> columns);
  /// With `optional` columns too, numbered after `columns`: a file may leave them out (has()
  /// says whether it did; field() is then empty on every row).
  CsvColumns(std::istream& in, std::string name, std::vector<std::string> columns,
             const std::vector<std::string>& optional);

  /// A longer line stops the reader (a trace row is a few numbers; this bounds the memory a
  /// hostile file can make it take).
  static constexpr size_t k_max_line_bytes = size_t{1} << 20;

  /// Advances to the next non-blank row; false at the end. Throws if the row has a different
  /// number of fields than the header.
  [[nodiscard]] bool next_row();
  /// Advances to the next row whose line starts with `prefix`: the others are skipped unsplit
  /// (their number of fields is not checked), for a reader that selects rows by their leading
  /// columns (see position()).
  [[nodiscard]] bool next_row_starting(std::string_view prefix);
  /// The input the stream holds in memory past the rows read so far (its buffer's unread
  /// bytes), for a reader that takes its usual rows in place and leaves the rest to next_row():
  /// possibly empty (the buffer is refilled only by next_row()), possibly ending inside a line.
  /// Valid until the next call on this reader.
  [[nodiscard]] std::string_view buffered() const;
  /// Takes the first `bytes` of buffered() (a whole row and its '\n', which the caller has
  /// checked next_row() would read as one row, no blank line before it) as the current row: its
  /// line is counted and line() names it; field() is left as it was.
  void take_buffered(size_t bytes) {
    skip_buffered(bytes);
    m_row_line = ++m_line_no;
  }
  /// The number of fields the header has.
  [[nodiscard]] size_t header_fields() const { return m_header_fields; }
  /// Where requested column `k` is in the header (0 = first), npos if absent.
  [[nodiscard]] size_t position(size_t k) const { return m_index[k]; }
  /// The line the current row starts on (a quoted field may carry it over further lines).
  [[nodiscard]] size_t line() const { return m_row_line; }
  [[nodiscard]] const std::string& path() const { return m_path; }

  /// The k-th requested column of the current row.
  [[nodiscard]] std::string_view field(size_t k) const { return m_fields[k]; }
  /// Whether the header names requested column `k` (always true for a required one).
  [[nodiscard]] bool has(size_t k) const { return m_index[k] != std::string_view::npos; }
  /// An integer in [min, max]; otherwise throws naming file, line, column and value.
  [[nodiscard]] int64_t integer(size_t k, int64_t min, int64_t max) const;
  /// A finite number in [min, max].
  [[nodiscard]] double real(size_t k, double min, double max) const;
  /// A finite number > 0.
  [[nodiscard]] double positive_real(size_t k) const;

 private:
  [[noreturn]] void bad(size_t k, const std::string& allowed) const;
  void skip_buffered(size_t bytes);
  void read_header();
  /// Reads the next line (without its '\n') into m_line; false at the end of the input.
  bool read_line();
  /// Splits m_line, which holds a '"', as RFC 4180 says, into m_spans, undoing the quoting in
  /// place and reading further lines while a quoted field is open; returns the field count.
  size_t split_quoted();
  struct Span {
    size_t offset, size;
    bool quoted;
  };

  std::string m_path;
  std::string m_name;  // m_path made printable, for messages
  std::vector<std::string> m_columns;
  std::unique_ptr<std::istream> m_file;  // null when reading a caller's stream
  std::istream* m_in;
  std::string m_line;
  std::vector<std::string_view> m_fields;  // the requested columns of the current row
  std::vector<size_t> m_index;             // where each requested column is in the header
  std::vector<size_t> m_column_of;  // for each header field, the requested column it is (or npos)
  std::vector<std::pair<size_t, size_t>> m_repeats;  // (k, j): column k repeats column j < k
  size_t m_header_fields = 0;
  size_t m_required = 0;      // the first m_required of m_columns must be in the header
  size_t m_line_no = 0;       // the last line read
  size_t m_row_line = 0;      // the line the current row starts on
  std::vector<Span> m_spans;  // split_quoted's fields (kept: no allocation per row)
  std::string m_more;         // split_quoted's next line of a field that runs over a line end
};

}  // namespace servesim
