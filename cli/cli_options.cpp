#include "cli/cli_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <ostream>
#include <sstream>

#include "core/config.h"
#include "core/errors.h"

namespace po = boost::program_options;

namespace servesim {

CommandLine::CommandLine(std::string command, std::string synopsis, std::string summary)
    : m_command(std::move(command)),
      m_synopsis(std::move(synopsis)),
      m_summary(std::move(summary)),
      m_options("options"),
      m_common("common options") {
  // clang-format off
  m_common.add_options()
      ("help,h", k_help_help)
      ("quiet,q", po::bool_switch(), k_quiet_help)
      ("json", po::bool_switch(), k_json_help)
      ("no-progress", po::bool_switch(), k_no_progress_help);
  // clang-format on
}

po::options_description_easy_init CommandLine::options() { return m_options.add_options(); }

CommandLine& CommandLine::positional(const std::string& name, int max_count,
                                     const std::string& metavar, const std::string& help) {
  if (max_count == 1)
    options()(name.c_str(), po::value<std::string>(), help.c_str());
  else
    options()(name.c_str(), po::value<std::vector<std::string>>(), help.c_str());
  m_positional.add(name.c_str(), max_count);
  m_positional_arg = Positional{name, metavar, help, max_count};
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

CommandLine& CommandLine::set_option() {
  options()("set", po::value<std::vector<std::string>>()->composing(), k_set_help);
  return *this;
}

CommandLine& CommandLine::seed_option() {
  return int_option("seed", 0, std::numeric_limits<int64_t>::max(), k_seed_help);
}

CommandLine& CommandLine::renamed(const char* old_name, const char* new_name) {
  m_renamed.emplace_back(old_name, new_name);
  return *this;
}

CommandLine& CommandLine::out_option(const char* default_dir, const std::string& files) {
  auto* value = po::value<std::string>()->value_name("DIR");
  if (default_dir) value->default_value(default_dir);
  options()("out,o", value,
            fmt::format("folder for {}, created if absent{}", files,
                        default_dir ? "" : " (without --out nothing is written)")
                .c_str());
  return *this;
}

std::string CommandLine::usage_error(const std::string& what) const {
  return fmt::format("{}: {}; see servesim {} --help", m_command, what, m_command);
}

std::optional<po::variables_map> CommandLine::parse(const std::vector<std::string>& args,
                                                    std::ostream& out) const {
  for (const std::string& a : args) {
    if (a == "--") break;
    for (const auto& [old_name, new_name] : m_renamed)
      if (a == "--" + old_name || a.rfind("--" + old_name + "=", 0) == 0)
        throw InputError(usage_error(fmt::format("--{} is now --{}", old_name, new_name)));
  }
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(m_options).add(m_common);
    po::command_line_parser parser(args);
    parser.options(all);
    // Without a positional argument, words that are not options are left alone, as before.
    if (m_positional_arg) parser.positional(m_positional);
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

namespace {

/// One option of an options_description as help shows it.
CommandLine::OptionHelp option_help_of(const po::option_description& d, bool common) {
  CommandLine::OptionHelp o;
  o.long_name = d.long_name();
  o.common = common;
  const std::string name = d.format_name();  // "-o [ --out ]" or "--out"
  if (name.size() >= 2 && name[0] == '-' && name[1] != '-') o.short_name = name[1];
  // "DIR (=servesim-out)", "arg", or "" for a switch.
  std::string param = d.format_parameter();
  const size_t eq = param.find(" (=");
  if (eq != std::string::npos && param.back() == ')') {
    o.default_text = default_text(param.substr(eq + 3, param.size() - eq - 4));
    param.resize(eq);
  }
  o.value_name = param;
  o.help = d.description();
  return o;
}

/// `text` wrapped to `width` columns, every line after the first indented by `indent`.
std::string wrapped(const std::string& text, size_t indent, size_t width) {
  std::string out, line;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (!line.empty() && indent + line.size() + 1 + w.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  return out + line;
}

}  // namespace

std::string default_text(const std::string& raw) {
  const std::optional<double> v = real_number(raw);
  if (!v || raw.find_first_of(".eE") == std::string::npos) return raw;
  return fmt::format("{}", *v);  // the shortest text that reads back as the same double
}

std::vector<CommandLine::OptionHelp> CommandLine::option_help() const {
  std::vector<OptionHelp> out;
  for (const auto& d : m_options.options())
    if (!m_positional_arg || d->long_name() != m_positional_arg->name)
      out.push_back(option_help_of(*d, false));
  for (const auto& d : m_common.options()) out.push_back(option_help_of(*d, true));
  return out;
}

std::string CommandLine::help() const {
  constexpr size_t k_width = 100, k_max_column = 32;
  const std::vector<OptionHelp> opts = option_help();
  auto left = [](const OptionHelp& o) {
    std::string s = o.short_name ? fmt::format("  -{}, --{}", o.short_name, o.long_name)
                                 : fmt::format("      --{}", o.long_name);
    return o.value_name.empty() ? s : s + " " + o.value_name;
  };
  size_t column = 0;
  for (const OptionHelp& o : opts) column = std::max(column, left(o).size() + 2);
  if (m_positional_arg) column = std::max(column, m_positional_arg->metavar.size() + 4);
  column = std::min(column, k_max_column);
  auto entry = [&](const std::string& l, const std::string& help) {
    std::string s = l;
    if (s.size() + 2 > column)
      s += "\n" + std::string(column, ' ');
    else
      s += std::string(column - s.size(), ' ');
    return s + wrapped(help, column, k_width) + "\n";
  };
  std::string text = fmt::format("usage: servesim {} {}\n", m_command, m_synopsis);
  if (!m_summary.empty()) text += wrapped(m_summary, 0, k_width) + "\n";
  if (m_positional_arg)
    text += "\narguments:\n" + entry("  " + m_positional_arg->metavar, m_positional_arg->help);
  bool common = false;
  if (!opts.empty() && !opts.front().common) text += "\noptions:\n";
  for (const OptionHelp& o : opts) {
    if (o.common && !common) {
      text += "\ncommon options (every command takes them; docs/cli.md#conventions):\n";
      common = true;
    }
    std::string help = o.help;
    if (!o.default_text.empty()) help += fmt::format(" (default {})", o.default_text);
    text += entry(left(o), help);
  }
  return text;
}

CommonOptions common_options(const po::variables_map& vm) {
  CommonOptions c;
  c.quiet = vm.count("quiet") && vm["quiet"].as<bool>();
  c.json = vm.count("json") && vm["json"].as<bool>();
  c.progress = !c.quiet && !(vm.count("no-progress") && vm["no-progress"].as<bool>());
  return c;
}

void print_json(std::ostream& out, const CommonOptions& c, const nlohmann::ordered_json& doc) {
  if (!c.quiet) out << doc.dump(2) << "\n";
}

std::string out_folder(const po::variables_map& vm, const std::string& command,
                       const std::string& main_file) {
  if (!vm.count("out")) return "";
  const std::string dir = vm["out"].as<std::string>();
  const std::string hint = fmt::format(
      "--out is a folder in every subcommand: {} writes DIR/{} (docs/cli.md#conventions)", command,
      main_file);
  if (dir.empty()) throw InputError("--out: give a folder; " + hint);
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    throw InputError(fmt::format("--out {}: {}; {}", quote_input(dir, 200),
                                 fs::is_regular_file(st) ? "is a file" : "is not a folder", hint));
  if (!fs::exists(st)) {
    std::string ext = fs::path(dir).extension().string();
    for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (const char* e : {".html", ".htm", ".yaml", ".yml", ".csv", ".json"})
      if (ext == e)
        throw InputError(fmt::format("--out {}: names a {} file; {}", quote_input(dir, 200),
                                     ext.substr(1), hint));
  }
  return dir;
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
