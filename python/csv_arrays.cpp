#include "python/csv_arrays.h"

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "core/csv_columns.h"
#include "core/errors.h"

namespace servesim::python {
namespace {

bool parse_int(std::string_view s, int64_t& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool parse_real(std::string_view s, double& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

py::object column_array(const std::vector<std::string>& cells, bool text) {
  const py::module_ np = py::module_::import("numpy");
  bool all_bool = !cells.empty(), all_int = !cells.empty(), all_real = true;
  int64_t i = 0;
  double d = 0;
  for (const std::string& c : cells) {
    all_bool = all_bool && (c == "true" || c == "false");
    all_int = all_int && parse_int(c, i);
    all_real = all_real && (c.empty() || parse_real(c, d));
  }
  if (text || (!all_bool && !all_real)) {
    py::list l;
    for (const std::string& c : cells) l.append(py::str(c));
    return np.attr("array")(l, py::arg("dtype") = "str");
  }
  if (all_bool) {
    py::array_t<bool> a(static_cast<py::ssize_t>(cells.size()));
    auto m = a.mutable_unchecked<1>();
    for (size_t k = 0; k < cells.size(); ++k) m(static_cast<py::ssize_t>(k)) = cells[k] == "true";
    return a;
  }
  if (all_int) {
    py::array_t<int64_t> a(static_cast<py::ssize_t>(cells.size()));
    auto m = a.mutable_unchecked<1>();
    for (size_t k = 0; k < cells.size(); ++k) parse_int(cells[k], m(static_cast<py::ssize_t>(k)));
    return a;
  }
  py::array_t<double> a(static_cast<py::ssize_t>(cells.size()));
  auto m = a.mutable_unchecked<1>();
  for (size_t k = 0; k < cells.size(); ++k) {
    double& v = m(static_cast<py::ssize_t>(k));
    if (cells[k].empty() || !parse_real(cells[k], v)) v = std::numeric_limits<double>::quiet_NaN();
  }
  return a;
}

}  // namespace

py::dict csv_arrays(const std::string& csv, const std::string& name,
                    const std::set<std::string>& text_columns) {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> cells;
  size_t line_no = 0;
  size_t start = 0;
  while (start < csv.size()) {
    size_t end = csv.find('\n', start);
    if (end == std::string::npos) end = csv.size();
    const std::string_view line(csv.data() + start, end - start);
    start = end + 1;
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string> fields = csv_fields(line, name, line_no);
    if (header.empty()) {
      header = std::move(fields);
      cells.resize(header.size());
      continue;
    }
    if (fields.size() != header.size())
      throw std::logic_error(fmt::format("{}:{}: {} fields under a header of {}", name, line_no,
                                         fields.size(), header.size()));
    for (size_t k = 0; k < fields.size(); ++k) cells[k].push_back(std::move(fields[k]));
  }
  py::dict out;
  for (size_t k = 0; k < header.size(); ++k)
    out[py::str(header[k])] = column_array(cells[k], text_columns.count(header[k]) > 0);
  return out;
}

py::object data_frame(const py::dict& columns, const char* attr) {
  py::module_ pandas;
  try {
    pandas = py::module_::import("pandas");
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_ImportError)) throw;
    throw py::import_error(fmt::format(
        "this needs pandas, which is not installed (apt-get install python3-pandas, or pip "
        "install pandas); .{} holds the same columns as numpy arrays",
        attr));
  }
  return pandas.attr("DataFrame")(columns);
}

}  // namespace servesim::python
