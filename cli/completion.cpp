#include "cli/completion.h"

#include <fmt/format.h>

#include <map>

namespace servesim {
namespace {

/// The first word of a command ("trace" of "trace gen") and the rest ("gen", or "").
std::pair<std::string, std::string> split_command(const std::string& command) {
  const size_t space = command.find(' ');
  if (space == std::string::npos) return {command, ""};
  return {command.substr(0, space), command.substr(space + 1)};
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

/// Text for a roff line: backslashes and minus signs escaped, a leading control character made
/// plain text.
std::string roff(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '\\')
      out += "\\e";
    else if (ch == '-')
      out += "\\-";
    else
      out += ch;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string option_help_text(const CommandLine::OptionHelp& o) {
  return o.default_text.empty() ? o.help : fmt::format("{} (default {})", o.help, o.default_text);
}

/// ".TP" and the option's name line, then its help.
std::string man_option(const CommandLine::OptionHelp& o) {
  std::string name = o.short_name ? fmt::format("\\fB\\-{}\\fR, ", o.short_name) : "";
  name += fmt::format("\\fB\\-\\-{}\\fR", roff(o.long_name));
  if (!o.value_name.empty()) name += fmt::format(" \\fI{}\\fR", roff(o.value_name));
  return fmt::format(".TP\n{}\n{}\n", name, roff(option_help_text(o)));
}

}  // namespace

std::string bash_completion(const std::vector<CommandLine>& commands,
                            const std::vector<std::string>& list_groups) {
  std::vector<std::string> firsts;
  std::map<std::string, std::vector<std::string>> seconds;  // "trace" -> {"stats", "gen"}
  for (const CommandLine& cl : commands) {
    const auto [first, second] = split_command(cl.command());
    if (firsts.empty() || firsts.back() != first) firsts.push_back(first);
    if (!second.empty()) seconds[first].push_back(second);
  }
  std::string s = fmt::format(
      "# bash completion for servesim: `source <(servesim completion bash)`, or install it as\n"
      "# share/bash-completion/completions/servesim. Generated from the command table by\n"
      "# `servesim completion bash` (docs/cli.md#completion-and-man-page); do not edit.\n"
      "_servesim() {{\n"
      "  local cur=\"${{COMP_WORDS[COMP_CWORD]}}\" prev=\"\" cmd=\"\" sub=\"\" i\n"
      "  ((COMP_CWORD > 0)) && prev=\"${{COMP_WORDS[COMP_CWORD-1]}}\"\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \"${{COMP_WORDS[i]}}\" in -*) continue ;; esac\n"
      "    if [[ -z $cmd ]]; then cmd=\"${{COMP_WORDS[i]}}\"\n"
      "    elif [[ -z $sub ]]; then sub=\"${{COMP_WORDS[i]}}\"; fi\n"
      "  done\n"
      "  if [[ -z $cmd ]]; then\n"
      "    COMPREPLY=($(compgen -W \"{} --help --version\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n",
      joined(firsts));
  for (const auto& [first, subs] : seconds)
    s += fmt::format(
        "  if [[ $cmd == {} && -z $sub ]]; then\n"
        "    COMPREPLY=($(compgen -W \"{} --help\" -- \"$cur\"))\n"
        "    return\n"
        "  fi\n",
        first, joined(subs));
  s += "  local opts=\"\" valued=\"\" words=\"\"\n  case \"$cmd\" in\n";
  for (const std::string& first : firsts) {
    s += fmt::format("    {})\n", first);
    const bool has_subs = seconds.count(first) > 0;
    if (has_subs) s += "      case \"$sub\" in\n";
    for (const CommandLine& cl : commands) {
      const auto [f, second] = split_command(cl.command());
      if (f != first) continue;
      std::vector<std::string> opts, valued;
      for (const CommandLine::OptionHelp& o : cl.option_help()) {
        opts.push_back("--" + o.long_name);
        if (o.short_name) opts.push_back(fmt::format("-{}", o.short_name));
        if (!o.value_name.empty()) {
          valued.push_back("--" + o.long_name);
          if (o.short_name) valued.push_back(fmt::format("-{}", o.short_name));
        }
      }
      std::string words;
      if (cl.command() == "list") words = joined(list_groups);
      if (cl.command() == "completion") words = "bash";
      const std::string indent = has_subs ? "        " : "      ";
      if (has_subs) s += fmt::format("      {})\n", second);
      s += fmt::format("{}opts=\"{}\"\n{}valued=\" {} \"\n", indent, joined(opts), indent,
                       joined(valued));
      if (!words.empty()) s += fmt::format("{}words=\"{}\"\n", indent, words);
      if (has_subs) s += "        ;;\n";
    }
    if (has_subs) s += "      esac\n";
    s += "      ;;\n";
  }
  s += "  esac\n"
       "  case \"$prev\" in\n"
       "    --out | -o)\n"
       "      COMPREPLY=($(compgen -d -- \"$cur\"))\n"
       "      return\n"
       "      ;;\n"
       "  esac\n"
       "  if [[ $valued == *\" $prev \"* ]]; then\n"
       "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "    return\n"
       "  fi\n"
       "  if [[ $cur == -* ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
       "  elif [[ -n $words ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
       "  else\n"
       "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "  fi\n"
       "}\n"
       "complete -o filenames -F _servesim servesim\n";
  return s;
}

std::string man_page(const std::vector<CommandLine>& commands, const std::string& version) {
  std::string s = fmt::format(
      ".\\\" servesim.1, generated from the command table by `servesim man`; do not edit.\n"
      ".TH SERVESIM 1 \"\" \"servesim {}\" \"User Commands\"\n"
      ".SH NAME\n"
      "servesim \\- a discrete\\-event simulator of LLM serving\n"
      ".SH SYNOPSIS\n"
      ".B servesim\n"
      ".I command\n"
      "[\\fIarguments\\fR] [\\fIoptions\\fR]\n"
      ".br\n"
      ".B servesim\n"
      "\\-\\-help | \\-\\-version\n"
      ".SH DESCRIPTION\n"
      "servesim replays a request trace or a synthetic workload against a step\\-time model of "
      "an inference server and reports time to first token, time per output token, end\\-to\\-end "
      "latency, queueing and throughput; it also searches capacity, sizes deployments, fits step "
      "models to measurements and writes an HTML report.\n"
      ".PP\n"
      "Every command takes the common options below, and \\fB\\-\\-out\\fR is always a folder, "
      "created if absent, into which the command writes its result files under fixed names.\n"
      ".SH COMMANDS\n",
      roff(version));
  for (const CommandLine& cl : commands) {
    s += fmt::format(".SS \"servesim {} {}\"\n{}\n", roff(cl.command()), roff(cl.synopsis()),
                     roff(cl.summary()));
    if (const auto& p = cl.positional_argument())
      s += fmt::format(".TP\n\\fI{}\\fR\n{}\n", roff(p->metavar), roff(p->help));
    for (const CommandLine::OptionHelp& o : cl.option_help())
      if (!o.common) s += man_option(o);
  }
  s += ".SH COMMON OPTIONS\nEvery command takes these, with the same meaning.\n";
  if (!commands.empty())
    for (const CommandLine::OptionHelp& o : commands.front().option_help())
      if (o.common) s += man_option(o);
  s += ".SH EXIT STATUS\n"
       ".TP\n0\nSuccess.\n"
       ".TP\n1\nAn internal error (a bug: please report it).\n"
       ".TP\n2\nBad input or usage: an unknown command or option, a bad value, a bad config or "
       "input file; the message on stderr names what and where. Nothing is half\\-written.\n"
       ".TP\n3\nOut of memory: the run needs more memory than the address\\-space limit or the "
       "machine allows (refused before it starts, or stopped when an allocation failed); the "
       "message names the limit and the options that bound a run. Nothing is written.\n"
       ".TP\n128 + N\nSignal N (SIGINT, SIGTERM, SIGHUP) stopped a command before it finished; "
       "\\fBrun\\fR instead writes its results marked partial and exits 0.\n"
       ".SH ENVIRONMENT\n"
       ".TP\nSERVESIM_LOG\nThe log level on stderr (debug, info, warn, error; default warn).\n"
       ".SH SEE ALSO\n"
       "The documentation in /usr/share/doc/servesim/docs: cli.md (these conventions), "
       "config.md (every config key), metrics.md (every metric), errors.md (exit statuses).\n";
  return s;
}

}  // namespace servesim
