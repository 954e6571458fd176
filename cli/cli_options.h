#pragma once
// The part of a subcommand's command line that every subcommand shares, on Boost.Program_options:
// the positional argument, --help, the options several commands take (--set, --seed, --quiet)
// and one form for every message. A bad command line throws InputError
// "<command>: <what>; see servesim <command> --help", which run_cli prints with exit status 2.
#include <boost/program_options.hpp>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace servesim {

class CommandLine {
 public:
  /// `command`: the words after `servesim` ("run", "trace gen"), which start every message;
  /// `synopsis`: what follows them in the --help usage line ("[CONFIG.yaml] [options]").
  CommandLine(std::string command, std::string synopsis);

  /// The command's own options: `cl.options()("tolerance", po::value<double>(), "...")`.
  boost::program_options::options_description_easy_init options();

  /// `name` also takes the arguments that are not options: at most `max_count` (-1: any), past
  /// which parsing fails ("too many positional options"). `name` stays an option too (--name).
  /// REQUIRES: `name` was added with options(), and positional() is called once at most.
  CommandLine& positional(const std::string& name, int max_count = 1);
  /// parse() fails with "<command>: <missing>" when option `name` is absent; such checks run in
  /// the order they were added, after --help.
  CommandLine& require(const std::string& name, const std::string& missing);

  /// A whole-number option, read as text and checked by parse(): a value that is not an integer
  /// or lies outside [min, max] fails with "--NAME V: must be an integer from MIN to MAX" (never
  /// wrapped, as an unsigned option would wrap -1). Afterwards the variables_map holds int64_t.
  CommandLine& int_option(const char* name, int64_t min, int64_t max, const char* help,
                          std::optional<int64_t> default_value = std::nullopt);
  /// A real-number option, likewise: finite, from `min` (or above it, with `min_exclusive`) to
  /// `max`; `unit` ("seconds", or "") ends the message. Afterwards the variables_map holds double.
  CommandLine& real_option(const char* name, double min, double max, const char* unit,
                           const char* help, std::optional<double> default_value = std::nullopt,
                           bool min_exclusive = false);

  /// A numeric option and its range (int_option, real_option), for tests that walk every
  /// command's options.
  struct NumericOption {
    std::string name;
    bool integer = true;
    int64_t int_min = 0, int_max = 0;   ///< integer options
    double real_min = 0, real_max = 0;  ///< real options
    bool min_exclusive = false;
    std::string unit;
  };
  [[nodiscard]] const std::vector<NumericOption>& numeric_options() const { return m_numeric; }
  /// The command's options (tests check that every numeric one has a range).
  [[nodiscard]] const boost::program_options::options_description& description() const {
    return m_options;
  }
  [[nodiscard]] const std::string& command() const { return m_command; }

  /// --set KEY=VALUE, repeatable (overrides() returns them).
  CommandLine& set_option(const char* help = "override key.path=value");
  /// --seed N (an integer from 0 to 2^63-1), applied as the override seed=N after every --set.
  CommandLine& seed_option();
  /// --quiet / -q (bool): print nothing on success.
  CommandLine& quiet_option();

  /// Parses `args` (the words after the command). Returns nullopt when --help or -h was given,
  /// after writing help() to `out`: the command then exits 0. Throws InputError on an unknown
  /// option, a bad value, too many positional arguments or a missing required one.
  [[nodiscard]] std::optional<boost::program_options::variables_map> parse(
      const std::vector<std::string>& args, std::ostream& out) const;

  /// "usage: servesim <command> <synopsis>" and every option with its help and default.
  [[nodiscard]] std::string help() const;

 private:
  [[nodiscard]] std::string usage_error(const std::string& what) const;

  std::string m_command;
  std::string m_synopsis;
  boost::program_options::options_description m_options;
  boost::program_options::positional_options_description m_positional;
  bool m_has_positional = false;
  std::vector<std::pair<std::string, std::string>> m_required;  ///< {option, message}
  std::vector<NumericOption> m_numeric;
};

/// "must be an integer from 1 to 4096", "must be a number > 0 and <= 9e9 (seconds)": what a
/// numeric option allows, as its messages and help say it.
[[nodiscard]] std::string allowed_range(const CommandLine::NumericOption& o);

/// The config overrides of a command line parsed with set_option() and seed_option(): each --set
/// in order, then "seed=N". Each is checked for form here, before any file is read, with
/// Document::apply_override's own messages ("--set x: expected key.path=value"); whether its path
/// fits the config is checked where it is applied. Throws InputError.
[[nodiscard]] std::vector<std::string> overrides(const boost::program_options::variables_map& vm);

}  // namespace servesim
