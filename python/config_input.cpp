#include "python/config_input.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>

#include "core/errors.h"
#include "metrics/exports.h"
#include "metrics/token_outputs.h"
#include "sim/scenario.h"

namespace servesim::python {
namespace {

/// Nesting deeper than any config: a dict that holds itself stops here instead of recursing.
constexpr int k_max_depth = 64;

std::string type_name(const py::handle& v) {
  return py::str(py::type::handle_of(v).attr("__name__")).cast<std::string>();
}

/// Whether the plain scalar `s` would read back as something other than a string (a null, a
/// boolean or a number, as yaml-cpp reads them), so it must be quoted to stay a string.
bool plain_retypes(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return true;
  const YAML::Node n(s);
  bool b = false;
  double d = 0;
  return YAML::convert<bool>::decode(n, b) || YAML::convert<double>::decode(n, d);
}

class YamlWriter {
 public:
  explicit YamlWriter(bool flow) {
    if (flow) m_out << YAML::Flow;
  }
  void write(const py::handle& v, const std::string& path, int depth) {
    if (depth > k_max_depth)
      fail(path, fmt::format("nested more than {} levels (does a dict hold itself?)", k_max_depth));
    const py::module_ np = py::module_::import("numpy");
    if (v.is_none()) {
      m_out << YAML::Null;
    } else if (py::isinstance<py::bool_>(v) || py::isinstance(v, np.attr("bool_"))) {
      m_out << (v.cast<bool>() ? "true" : "false");
    } else if (py::isinstance<py::int_>(v) || py::isinstance(v, np.attr("integer"))) {
      m_out << py::repr(py::int_(py::reinterpret_borrow<py::object>(v))).cast<std::string>();
    } else if (py::isinstance<py::float_>(v) || py::isinstance(v, np.attr("floating"))) {
      const double d = v.cast<double>();
      if (std::isnan(d))
        m_out << ".nan";
      else if (std::isinf(d))
        m_out << (d > 0 ? ".inf" : "-.inf");
      else
        m_out << fmt::format("{}", d);  // the shortest text that reads back as d
    } else if (py::isinstance<py::str>(v)) {
      const std::string s = v.cast<std::string>();
      if (plain_retypes(s)) m_out << YAML::DoubleQuoted;
      m_out << s;
    } else if (py::isinstance<py::dict>(v)) {
      m_out << YAML::BeginMap;
      for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(v)) {
        if (!py::isinstance<py::str>(key))
          fail(path, fmt::format("key {} is a {}; keys must be strings",
                                 quote_input(py::repr(key).cast<std::string>()), type_name(key)));
        const std::string k = key.cast<std::string>();
        m_out << YAML::Key;
        if (plain_retypes(k)) m_out << YAML::DoubleQuoted;
        m_out << k << YAML::Value;
        write(value, path.empty() ? k : path + "." + k, depth + 1);
      }
      m_out << YAML::EndMap;
    } else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v) ||
               py::isinstance(v, np.attr("ndarray"))) {
      const py::object items = py::isinstance(v, np.attr("ndarray"))
                                   ? v.attr("tolist")()
                                   : py::reinterpret_borrow<py::object>(v);
      m_out << YAML::BeginSeq;
      size_t i = 0;
      for (const auto& item : items) write(item, fmt::format("{}[{}]", path, i++), depth + 1);
      m_out << YAML::EndSeq;
    } else {
      fail(path,
           fmt::format("a value of type {} cannot be written as YAML (give a dict, list, str, "
                       "int, float, bool or None)",
                       type_name(v)));
    }
  }
  [[nodiscard]] std::string text() const { return std::string(m_out.c_str()) + "\n"; }

 private:
  [[noreturn]] static void fail(const std::string& path, const std::string& why) {
    throw InputError(fmt::format("{}: {}{}", k_dict_name, path.empty() ? "" : path + ": ", why));
  }
  YAML::Emitter m_out;
};

std::string flow_yaml_from_python(const py::handle& value, const std::string& key) {
  YamlWriter w(true);
  w.write(value, key, 0);
  std::string s = w.text();
  s.pop_back();  // the newline
  return s;
}

}  // namespace

std::string yaml_from_python(const py::handle& value) {
  if (!py::isinstance<py::dict>(value))
    throw InputError(
        fmt::format("{}: a config is a dict, not a {}", k_dict_name, type_name(value)));
  YamlWriter w(false);
  w.write(value, "", 0);
  return w.text();
}

ConfigText config_text(const py::handle& config, const char* what, bool allow_default) {
  if (config.is_none()) {
    if (!allow_default) throw InputError(fmt::format("give a {}: a path or a dict", what));
    return {k_default_scenario_yaml, "<default scenario>", false};
  }
  if (py::isinstance<py::dict>(config)) return {yaml_from_python(config), k_dict_name, false};
  const py::module_ os = py::module_::import("os");
  if (py::isinstance<py::str>(config) || py::isinstance(config, os.attr("PathLike"))) {
    const py::object path = os.attr("fspath")(config);
    if (py::isinstance<py::str>(path)) return {"", path.cast<std::string>(), true};
  }
  throw InputError(fmt::format("{}: expected a path (str or os.PathLike) or a dict, not a {}", what,
                               type_name(config)));
}

std::vector<std::string> override_list(const py::handle& overrides, const py::handle& seed) {
  std::vector<std::string> all;
  if (py::isinstance<py::str>(overrides)) {
    all.push_back(overrides.cast<std::string>());
  } else if (py::isinstance<py::dict>(overrides)) {
    for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(overrides)) {
      if (!py::isinstance<py::str>(key))
        throw InputError(
            fmt::format("overrides: key {} is a {}; keys are paths such as "
                        "\"scheduler.max_num_seqs\"",
                        quote_input(py::repr(key).cast<std::string>()), type_name(key)));
      const std::string k = key.cast<std::string>();
      all.push_back(k + "=" + flow_yaml_from_python(value, k));
    }
  } else if (py::isinstance<py::list>(overrides) || py::isinstance<py::tuple>(overrides)) {
    for (const auto& o : overrides) {
      if (!py::isinstance<py::str>(o))
        throw InputError(fmt::format("overrides: {} is a {}; each override is a \"key=value\" str",
                                     quote_input(py::repr(o).cast<std::string>()), type_name(o)));
      all.push_back(o.cast<std::string>());
    }
  } else if (!overrides.is_none()) {
    throw InputError(
        fmt::format("overrides: expected a list of \"key=value\" strings or a dict, "
                    "not a {}",
                    type_name(overrides)));
  }
  if (!seed.is_none()) {
    constexpr int64_t max = std::numeric_limits<int64_t>::max();
    const auto bad = [&] {
      return InputError(fmt::format("seed: expected an integer from 0 to {} (got {})", max,
                                    quote_input(py::repr(seed).cast<std::string>())));
    };
    const py::module_ np = py::module_::import("numpy");
    if (py::isinstance<py::bool_>(seed) ||
        !(py::isinstance<py::int_>(seed) || py::isinstance(seed, np.attr("integer"))))
      throw bad();
    const py::int_ s(py::reinterpret_borrow<py::object>(seed));
    if (s < py::int_(0) || s > py::int_(max)) throw bad();
    all.push_back("seed=" + py::repr(s).cast<std::string>());
  }
  // As the command line does: an empty document takes any well-formed override, so a malformed
  // one is refused before any file is read.
  Document form("{}", "<--set>");
  for (const auto& o : all) form.apply_override(o);
  return all;
}

std::vector<double> percentile_list(const py::handle& percentiles) {
  if (percentiles.is_none()) return {};
  if (py::isinstance<py::str>(percentiles))
    return parse_percentiles(percentiles.cast<std::string>(), "percentiles");
  if (!py::isinstance<py::list>(percentiles) && !py::isinstance<py::tuple>(percentiles))
    throw InputError(fmt::format(
        "percentiles: expected a list of numbers in [0, 100] (as [50, 90, 99, 99.9]) or a str "
        "(as \"50,90,99\"), not a {}",
        type_name(percentiles)));
  // Written out as --percentiles' text and read by the same parser, so the checks and the
  // message are the command line's; fmt's shortest form reads back to the same double.
  std::string text;
  const py::module_ np = py::module_::import("numpy");
  for (const auto& p : percentiles) {
    if (py::isinstance<py::bool_>(p) ||
        !(py::isinstance<py::int_>(p) || py::isinstance<py::float_>(p) ||
          py::isinstance(p, np.attr("integer")) || py::isinstance(p, np.attr("floating"))))
      throw InputError(
          fmt::format("percentiles: {} is a {}; each percentile is a number in [0, 100]",
                      quote_input(py::repr(p).cast<std::string>()), type_name(p)));
    text += fmt::format("{}{}", text.empty() ? "" : ",",
                        py::reinterpret_borrow<py::object>(p).cast<double>());
  }
  return parse_percentiles(text, "percentiles");
}

std::shared_ptr<Document> load_document(const ConfigText& c) {
  if (c.is_path) return Document::load_file(c.file);
  return std::make_shared<Document>(c.text, c.file);
}

std::optional<int64_t> request_count(const py::handle& requests) {
  if (requests.is_none()) return std::nullopt;
  constexpr int64_t max = int64_t{1} << 40;
  const py::module_ np = py::module_::import("numpy");
  if (py::isinstance<py::bool_>(requests) ||
      !(py::isinstance<py::int_>(requests) || py::isinstance(requests, np.attr("integer"))))
    throw InputError(fmt::format(
        "requests: expected the synthetic workload's request count, an integer from 1 to {} "
        "(got {})",
        max, quote_input(py::repr(requests).cast<std::string>())));
  const py::int_ n(py::reinterpret_borrow<py::object>(requests));
  if (n < py::int_(1) || n > py::int_(max))
    throw InputError(fmt::format("requests: {} is out of range (allowed: from 1 to {})",
                                 py::repr(n).cast<std::string>(), max));
  return n.cast<int64_t>();
}

std::vector<const ExportFormat*> export_list_of(const py::handle& exports) {
  if (exports.is_none()) return {};
  std::vector<std::string> names;
  if (py::isinstance<py::str>(exports)) {
    names.push_back(exports.cast<std::string>());
  } else if (py::isinstance<py::list>(exports) || py::isinstance<py::tuple>(exports)) {
    for (const auto& e : exports) {
      if (!py::isinstance<py::str>(e))
        throw InputError(
            fmt::format("export: {} is a {}; each format is a str such as "
                        "\"vllm-bench\"",
                        quote_input(py::repr(e).cast<std::string>()), type_name(e)));
      names.push_back(e.cast<std::string>());
    }
  } else {
    throw InputError(fmt::format(
        "export: expected a format name or a list of them (as [\"vllm-bench\"]), not a {}",
        type_name(exports)));
  }
  return export_list(names, "export");
}

}  // namespace servesim::python
