#include "cli/cli_options.h"

#include <fmt/format.h>

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

CommandLine& CommandLine::set_option(const char* help) {
  options()("set", po::value<std::vector<std::string>>()->composing(), help);
  return *this;
}

CommandLine& CommandLine::seed_option() {
  options()("seed", po::value<std::string>(), "override the config's seed");
  return *this;
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
  if (vm.count("seed")) all.push_back("seed=" + vm["seed"].as<std::string>());
  // An empty document takes any well-formed override in turn (a path that is not a map there
  // was made so by an earlier override, which the config would take the same way).
  Document form("{}", "<--set>");
  for (const auto& o : all) form.apply_override(o);
  return all;
}

}  // namespace servesim
