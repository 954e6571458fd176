#pragma once
// What the Python module is given, turned into what the command line would have read: a config
// as a file path, a dict (written out as YAML and read as a file's text is) or None (the
// embedded default scenario), and the overrides of `--set` and `--seed`.
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "metrics/exports.h"

namespace servesim::python {

namespace py = pybind11;

/// The name a dict's YAML goes by in messages ("scheduler.max_num_seq at <dict>:12:3: ...");
/// relative paths in it resolve against the working directory.
inline constexpr const char* k_dict_name = "<dict>";

/// A config's text and the name messages give it.
struct ConfigText {
  std::string text;
  std::string file;
  bool is_path = false;  ///< `file` is a path to read (text empty): the caller reads it
};

/// `config` as None (the default scenario), a str or os.PathLike (a file) or a dict.
/// `allow_default`: whether None stands for the default scenario (run, capacity) or is refused
/// (sweep). Throws InputError (ValueError in Python) for any other type.
[[nodiscard]] ConfigText config_text(const py::handle& config, const char* what,
                                     bool allow_default);

/// A Python value (dict with str keys, list or tuple, str, bool, int, float, None, and numpy
/// scalars) as block-style YAML, one key a line, so that a message's line:column points into
/// servesim.to_yaml()'s text. Throws InputError naming the path of a value it cannot write.
[[nodiscard]] std::string yaml_from_python(const py::handle& value);

/// `overrides` (None, one "key=value" string, a list or tuple of them, or a dict {key: value},
/// each value written as flow-style YAML) and `seed` (None or an int >= 0, appended as
/// "seed=N" as `--seed` is), checked the way the command line checks `--set`.
[[nodiscard]] std::vector<std::string> override_list(const py::handle& overrides,
                                                     const py::handle& seed);

/// `percentiles` as `--percentiles` takes them: None (not given: empty), a list or tuple of
/// numbers, or one str ("50,90,99.9"), each in [0, 100]. Throws InputError as the option does.
[[nodiscard]] std::vector<double> percentile_list(const py::handle& percentiles);

/// `requests` as `--requests N` takes it: None (not given) or an int from 1 to 2^40 (a bool is
/// refused: run() reads it as the deprecated request_table). Throws InputError as the option does.
[[nodiscard]] std::optional<int64_t> request_count(const py::handle& requests);

/// `export` as `--export` takes it: None, one format name or a list or tuple of them (each once).
/// Throws InputError naming the valid formats.
[[nodiscard]] std::vector<const ExportFormat*> export_list_of(const py::handle& exports);

/// The document `servesim run` reads: the file, the dict's YAML or the default scenario.
[[nodiscard]] std::shared_ptr<Document> load_document(const ConfigText& c);

}  // namespace servesim::python
