#include "cli/report_cmd.h"

#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <optional>
#include <ostream>

#include "cli/cli_options.h"
#include "report/report.h"

namespace servesim {

int cmd_report(const std::vector<std::string>& args, std::ostream& out,
               const volatile std::sig_atomic_t* interrupt) {
  namespace po = boost::program_options;
  CommandLine cl("report", "RESULT_DIR... [--out report.html]");
  cl.options()("dirs", po::value<std::vector<std::string>>(), "result directories")(
      "out,o", po::value<std::string>()->default_value("report.html"), "the HTML file to write")(
      "label", po::value<std::vector<std::string>>(),
      "the name a result directory gets in the page (repeatable: one per directory, in order; "
      "default: the shortest path suffix that tells them apart)");
  const std::optional<po::variables_map> parsed =
      cl.quiet_option()
          .positional("dirs", -1)
          .require("dirs",
                   "give at least one result directory (servesim run --out DIR, or a sweep's): "
                   "servesim report DIR... [--out report.html]")
          .parse(args, out);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const auto dirs = vm["dirs"].as<std::vector<std::string>>();
  const std::string path = vm["out"].as<std::string>();
  const auto labels =
      vm.count("label") ? vm["label"].as<std::vector<std::string>>() : std::vector<std::string>{};
  write_report(dirs, path, interrupt, labels);
  if (!vm["quiet"].as<bool>())
    out << fmt::format("wrote {} ({} result{}, {} bytes)\n", path, dirs.size(),
                       dirs.size() == 1 ? "" : "s", std::filesystem::file_size(path));
  return 0;
}

}  // namespace servesim
