#include "cli/report_cmd.h"

#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <optional>
#include <ostream>

#include "cli/cli_options.h"
#include "report/report.h"
#include "sizing/run_cost.h"

namespace servesim {

CommandLine report_command_line() {
  CommandLine cl("report", "RESULT_DIR... [options]",
                 "Writes one HTML page of charts for result folders: DIR/report.html.");
  cl.positional("dirs", -1, "RESULT_DIR...",
                "result folders: servesim run --out DIR, a sweep's or a capacity search's");
  cl.out_option("servesim-report", "report.html");
  cl.options()("label", boost::program_options::value<std::vector<std::string>>(),
               "the name a result directory gets in the page (repeatable: one per directory, in "
               "order; default: the shortest path suffix that tells them apart)");
  cl.require("dirs",
             "give at least one result directory (servesim run --out DIR, or a sweep's): "
             "servesim report DIR... [--out DIR]");
  return cl;
}

int cmd_report(const std::vector<std::string>& args, std::ostream& out,
               const volatile std::sig_atomic_t* interrupt) {
  namespace po = boost::program_options;
  const std::optional<po::variables_map> parsed = report_command_line().parse(args, out);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const CommonOptions c = common_options(vm);
  const auto dirs = vm["dirs"].as<std::vector<std::string>>();
  const std::string dir = out_folder(vm, "report", "report.html");
  const std::string path = (std::filesystem::path(dir) / "report.html").string();
  const auto labels =
      vm.count("label") ? vm["label"].as<std::vector<std::string>>() : std::vector<std::string>{};
  write_report(dirs, path, interrupt, labels, &run_cost_json);
  const auto bytes = std::filesystem::file_size(path);
  if (c.json)
    print_json(out, c,
               {{"command", "report"},
                {"out", dir},
                {"files", {path}},
                {"results", dirs},
                {"bytes", bytes}});
  else if (c.tables())
    out << fmt::format("wrote {} ({} result{}, {} bytes)\n", path, dirs.size(),
                       dirs.size() == 1 ? "" : "s", bytes);
  return 0;
}

}  // namespace servesim
