#pragma once
// A result CSV (requests.csv, steps.csv, points.csv) as a dict of numpy arrays, one per column
// in the file's order, so that Python reads the very rows the command line writes.
#include <pybind11/pybind11.h>

#include <set>
#include <string>

namespace servesim::python {

namespace py = pybind11;

/// Each column becomes: bool when every field is "true" or "false"; int64 when every field is
/// an integer; float64 when every non-empty field is a number (an empty field is NaN: a
/// rejected request's TTFT); otherwise, and always for `text_columns`, an array of str. With
/// no rows every column is an empty float64 array (str for `text_columns`). `name` names the
/// file in the message of a malformed row (a bug: the writers write well-formed rows).
[[nodiscard]] py::dict csv_arrays(const std::string& csv, const std::string& name,
                                  const std::set<std::string>& text_columns);

/// The columns as a pandas DataFrame; ImportError, saying what to install and that `attr`
/// holds the same columns as numpy arrays, when pandas is absent.
[[nodiscard]] py::object data_frame(const py::dict& columns, const char* attr);

}  // namespace servesim::python
