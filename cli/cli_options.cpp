#include "cli/cli_options.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <ostream>
#include <sstream>

#include "core/config.h"
#include "core/errors.h"

namespace po = boost::program_options;

namespace servesim {

CommandLine::CommandLine(std::string command, std::string synopsis)
    : m_command(std::move(command)),
      m_synopsis(std::move(synopsis)),
      m_options(m_command + " options", 100) {
  m_options.add_options()("help,h", "print this help and exit");
}

po::options_description_easy_init CommandLine::options() { return m_options.add_options(); }

CommandLine& CommandLine::positional(const std::string& name, int max_count) {
  m_positional.add(name.c_str(), max_count);
  m_has_positional = true;
  return *this;
}

CommandLine& CommandLine::require(const std::string& name, const std::string& missing) {
  m_required.emplace_back(name, missing);
  return *this;
}

namespace {

/// A bound as people write it: 9e9, 1e-9, 0.01, 4096.
std::string bound(double v) {
  std::string s = fmt::format("{:g}", v);
  const size_t e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mantissa = s.substr(0, e), exponent = s.substr(e + 1);
  const bool negative = exponent[0] == '-';
  exponent = exponent.substr(exponent[0] == '-' || exponent[0] == '+' ? 1 : 0);
  while (exponent.size() > 1 && exponent[0] == '0') exponent.erase(0, 1);
  return mantissa + "e" + (negative ? "-" : "") + exponent;
}

/// Reads an option's text as the whole of a number (no sign games, no trailing text).
std::optional<int64_t> whole_number(const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const char* first = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const auto [p, ec] = std::from_chars(first, end, v);
  if (ec != std::errc() || p != end || first == end) return std::nullopt;
  return v;
}

std::optional<double> real_number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::string allowed_range(const CommandLine::NumericOption& o) {
  const std::string unit = o.unit.empty() ? "" : " (" + o.unit + ")";
  if (o.integer) return fmt::format("must be an integer from {} to {}", o.int_min, o.int_max);
  if (o.min_exclusive)
    return fmt::format("must be a number > {} and <= {}{}", bound(o.real_min), bound(o.real_max),
                       unit);
  return fmt::format("must be a number from {} to {}{}", bound(o.real_min), bound(o.real_max),
                     unit);
}

CommandLine& CommandLine::int_option(const char* name, int64_t min, int64_t max, const char* help,
                                     std::optional<int64_t> default_value) {
  NumericOption o;
  o.name = std::string(name).substr(0, std::string(name).find(','));
  o.int_min = min;
  o.int_max = max;
  auto* value = po::value<std::string>();
  if (default_value) value->default_value(std::to_string(*default_value));
  options()(name, value, fmt::format("{} ({})", help, allowed_range(o).substr(8)).c_str());
  m_numeric.push_back(std::move(o));
  return *this;
}

CommandLine& CommandLine::real_option(const char* name, double min, double max, const char* unit,
                                      const char* help, std::optional<double> default_value,
                                      bool min_exclusive) {
  NumericOption o;
  o.name = std::string(name).substr(0, std::string(name).find(','));
  o.integer = false;
  o.real_min = min;
  o.real_max = max;
  o.min_exclusive = min_exclusive;
  o.unit = unit;
  auto* value = po::value<std::string>();
  if (default_value) value->default_value(bound(*default_value));
  options()(name, value, fmt::format("{} ({})", help, allowed_range(o).substr(8)).c_str());
  m_numeric.push_back(std::move(o));
  return *this;
}

CommandLine& CommandLine::set_option(const char* help) {
  options()("set", po::value<std::vector<std::string>>()->composing(), help);
  return *this;
}

CommandLine& CommandLine::seed_option() {
  return int_option("seed", 0, std::numeric_limits<int64_t>::max(), "override the config's seed");
}

CommandLine& CommandLine::quiet_option() {
  options()("quiet,q", po::bool_switch(), "print nothing on success");
  return *this;
}

std::string CommandLine::usage_error(const std::string& what) const {
  return fmt::format("{}: {}; see servesim {} --help", m_command, what, m_command);
}

std::optional<po::variables_map> CommandLine::parse(const std::vector<std::string>& args,
                                                    std::ostream& out) const {
  po::variables_map vm;
  try {
    po::command_line_parser parser(args);
    parser.options(m_options);
    // Without a positional argument, words that are not options are left alone, as before.
    if (m_has_positional) parser.positional(m_positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      out << help();
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(usage_error(e.what()));
  }
  // Numeric options arrive as text and leave as numbers, within their ranges.
  for (const NumericOption& o : m_numeric) {
    auto it = vm.find(o.name);
    if (it == vm.end()) continue;
    const std::string text = it->second.as<std::string>();
    const auto refuse = [&] {
      return InputError(fmt::format("--{} {}: {}", o.name, printable(text), allowed_range(o)));
    };
    if (o.integer) {
      const std::optional<int64_t> v = whole_number(text);
      if (!v || *v < o.int_min || *v > o.int_max) throw refuse();
      it->second.value() = *v;
    } else {
      const std::optional<double> v = real_number(text);
      if (!v || *v > o.real_max || (o.min_exclusive ? !(*v > o.real_min) : *v < o.real_min))
        throw refuse();
      it->second.value() = *v;
    }
  }
  for (const auto& [name, missing] : m_required)
    if (!vm.count(name)) throw InputError(usage_error(missing));
  return vm;
}

std::string CommandLine::help() const {
  std::ostringstream text;
  text << "usage: servesim " << m_command << " " << m_synopsis << "\n\n" << m_options;
  return text.str();
}

std::vector<std::string> overrides(const po::variables_map& vm) {
  std::vector<std::string> all;
  if (vm.count("set")) all = vm["set"].as<std::vector<std::string>>();
  if (vm.count("seed")) all.push_back("seed=" + std::to_string(vm["seed"].as<int64_t>()));
  // An empty document takes any well-formed override in turn (a path that is not a map there
  // was made so by an earlier override, which the config would take the same way).
  Document form("{}", "<--set>");
  for (const auto& o : all) form.apply_override(o);
  return all;
}

}  // namespace servesim
