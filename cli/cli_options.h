#pragma once
// The part of a subcommand's command line that every subcommand shares, on Boost.Program_options:
// the positional arguments, the common options every command takes (--help, -q/--quiet, --json,
// --no-progress), the options several commands take (--out DIR, --set, --seed), the --help text
// and one form for every message. A bad command line throws InputError
// "<command>: <what>; see servesim <command> --help", which run_cli prints with exit status 2.
// The conventions are docs/cli.md#conventions.
#include <boost/program_options.hpp>
#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace servesim {

class CommandLine {
 public:
  /// `command`: the words after `servesim` ("run", "trace gen"), which start every message;
  /// `synopsis`: what follows them in the --help usage line ("[CONFIG.yaml] [options]"), which
  /// names every positional argument; `summary`: one line on what the command does (--help,
  /// `servesim --help`, the man page). Adds the common options.
  CommandLine(std::string command, std::string synopsis, std::string summary = "");

  /// The command's own options: `cl.options()("tolerance", po::value<double>(), "...")`.
  boost::program_options::options_description_easy_init options();

  /// `name` also takes the arguments that are not options: at most `max_count` (-1: any), past
  /// which parsing fails ("too many positional options"). `metavar` ("CONFIG.yaml") is how the
  /// usage line and the "arguments" part of --help show it; `help` says what it is. The
  /// positional is not listed among the options (it is still read as --name, for old scripts).
  /// REQUIRES: positional() is called once at most.
  CommandLine& positional(const std::string& name, int max_count, const std::string& metavar,
                          const std::string& help);
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

  /// One option as --help, the completion script and the man page show it.
  struct OptionHelp {
    std::string long_name;   ///< "out"
    char short_name = 0;     ///< 'o', or 0
    std::string value_name;  ///< "DIR", "arg"; empty for a switch
    std::string default_text;
    std::string help;
    bool common = false;  ///< one of the options every command takes
  };
  /// The options in --help's order (the command's, then the common ones), positionals left out.
  [[nodiscard]] std::vector<OptionHelp> option_help() const;
  struct Positional {
    std::string name, metavar, help;
    int max_count = 1;
  };
  [[nodiscard]] const std::optional<Positional>& positional_argument() const {
    return m_positional_arg;
  }
  [[nodiscard]] const std::string& command() const { return m_command; }
  [[nodiscard]] const std::string& synopsis() const { return m_synopsis; }
  [[nodiscard]] const std::string& summary() const { return m_summary; }

  /// --out DIR / -o DIR: the folder the command writes its result files into, created if absent
  /// (out_folder() checks it). `default_dir`: nullptr when the command writes no files without
  /// --out. `files`: what goes there, for the help ("report.html").
  CommandLine& out_option(const char* default_dir, const std::string& files);
  /// --set KEY=VALUE, repeatable (overrides() returns them). One help text on every command.
  CommandLine& set_option();
  /// --seed N (an integer from 0 to 2^63-1), applied as the override seed=N after every --set.
  CommandLine& seed_option();

  /// `--OLD_NAME` was renamed `--NEW_NAME`: parse() refuses the old spelling with a message
  /// naming the new one ("calibrate: --format is now --input-format; see servesim calibrate
  /// --help"). The old name is not shown in help or completion.
  CommandLine& renamed(const char* old_name, const char* new_name);
  /// {old, new} for every renamed() option.
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& renamed_options() const {
    return m_renamed;
  }

  /// Parses `args` (the words after the command). Returns nullopt when --help or -h was given,
  /// after writing help() to `out`: the command then exits 0. Throws InputError on an unknown
  /// option, a bad value, too many positional arguments or a missing required one.
  [[nodiscard]] std::optional<boost::program_options::variables_map> parse(
      const std::vector<std::string>& args, std::ostream& out) const;

  /// "usage: servesim <command> <synopsis>", the summary, the positional argument and every
  /// option with its help and "(default X)".
  [[nodiscard]] std::string help() const;

 private:
  [[nodiscard]] std::string usage_error(const std::string& what) const;

  std::string m_command;
  std::string m_synopsis;
  std::string m_summary;
  boost::program_options::options_description m_options;
  boost::program_options::options_description m_common;
  boost::program_options::positional_options_description m_positional;
  std::optional<Positional> m_positional_arg;
  std::vector<std::pair<std::string, std::string>> m_required;  ///< {option, message}
  std::vector<NumericOption> m_numeric;
  std::vector<std::pair<std::string, std::string>> m_renamed;  ///< {old, new}
};

/// The help texts of the common options, which every command shows the same way.
inline constexpr const char* k_quiet_help =
    "print nothing on stdout on success, and no progress (result files are still written)";
inline constexpr const char* k_json_help =
    "print the results as one JSON document on stdout instead of the tables";
inline constexpr const char* k_no_progress_help =
    "show no progress on stderr (commands that show none accept it too)";
inline constexpr const char* k_help_help = "print this help and exit";
/// The help texts of the options several commands share, each defined once.
inline constexpr const char* k_set_help =
    "override key.path=value (a YAML value), repeatable, applied in order";
inline constexpr const char* k_seed_help = "override the scenario's seed (applied after --set)";
/// --source-model (calibrate, trace stats): a selector of source-data rows, never a catalogue
/// model (that is --model, on explain).
inline constexpr const char* k_source_model_help =
    "keep only the source rows of this model (splitwise's model column, vidur's "
    "cpu_overheads.csv model_name, burstgpt's Model column)";

/// What the common options ask of a parsed command line.
struct CommonOptions {
  bool quiet = false;    ///< -q: nothing on stdout
  bool json = false;     ///< --json: one JSON document on stdout (unless quiet)
  bool progress = true;  ///< false with --no-progress or -q
  [[nodiscard]] bool tables() const { return !quiet && !json; }  ///< the human output
};
[[nodiscard]] CommonOptions common_options(const boost::program_options::variables_map& vm);

/// Prints `doc` (with 2-space indents and a newline) unless quiet; the --json output.
void print_json(std::ostream& out, const CommonOptions& c, const nlohmann::ordered_json& doc);

/// --out's folder, checked: "" when --out was not given and has no default. Throws InputError
/// (exit 2) when the path names an existing file or anything else that is not a folder, or ends
/// in a file's extension (.html, .yaml, .yml, .csv, .json: --out once named a file in some
/// commands): `command` writes `main_file` ("report.html") into the folder, which the hint says.
[[nodiscard]] std::string out_folder(const boost::program_options::variables_map& vm,
                                     const std::string& command, const std::string& main_file);

/// "must be an integer from 1 to 4096", "must be a number > 0 and <= 9e9 (seconds)": what a
/// numeric option allows, as its messages and help say it.
[[nodiscard]] std::string allowed_range(const CommandLine::NumericOption& o);

/// A default as --help prints it: a number as people write it (0.9, not 0.90000000000000002),
/// anything else as given.
[[nodiscard]] std::string default_text(const std::string& raw);

/// The config overrides of a command line parsed with set_option() and seed_option(): each --set
/// in order, then "seed=N". Each is checked for form here, before any file is read, with
/// Document::apply_override's own messages ("--set x: expected key.path=value"); whether its path
/// fits the config is checked where it is applied. Throws InputError.
[[nodiscard]] std::vector<std::string> overrides(const boost::program_options::variables_map& vm);

}  // namespace servesim
