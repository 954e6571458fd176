#include "cli/capacity_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_options.h"
#include "cli/sim_options.h"
#include "core/config.h"
#include "core/errors.h"
#include "metrics/output.h"
#include "sizing/capacity_json.h"
#include "sizing/mlperf_server.h"
#include "sizing/sweep.h"

namespace po = boost::program_options;

namespace servesim {

namespace {

std::string probe_line(const CapacityProbe& p) {
  const Summary& s = p.run.summary;
  return fmt::format("{:>12.6g}  {:>10.4f}  {:>10.1f}  {:>9.2f}  {:>10.4f}  {}\n", p.rate_scale,
                     p.run.offered_rate_per_s, s.ttft_s.p99 * 1e3, s.tpot_s.p99 * 1e3,
                     s.slo ? s.slo->attainment : 0.0, p.meets_slo ? "yes" : "no");
}

void print_capacity(std::ostream& out, const CapacityResult& r, const CapacityOptions& o,
                    const std::string& dir, const std::string& latency,
                    const std::string& export_files) {
  out << "  rate scale  requests/s    TTFT p99   TPOT p99  attainment  meets SLOs\n"
      << "                              ms         ms\n";
  for (const auto& p : r.probes) out << probe_line(p);
  if (!r.meeting) {
    out << fmt::format("\nno rate meets the SLOs (down to rate scale {:g})\n", o.min_scale);
  } else {
    const CapacityProbe& m = r.probes[*r.meeting];
    out << fmt::format("\ncapacity   {:.4f} requests/s offered (rate scale {:.6g}){}\n\n",
                       m.run.offered_rate_per_s, m.rate_scale,
                       r.failing
                           ? fmt::format(", fails at {:.6g}", r.probes[*r.failing].rate_scale)
                           : fmt::format(": the SLOs hold up to the limit {:g}", o.max_scale));
    out << summary_table(m.run.summary);
    if (!latency.empty()) out << "\n" << latency;
  }
  out << fmt::format("\nwrote {0}/capacity.json{1}{2}\n", dir,
                     r.meeting ? fmt::format(", {}/summary.json", dir) : "", export_files);
}

}  // namespace

CommandLine capacity_command_line() {
  CommandLine cl("capacity", "CONFIG.yaml [options]",
                 "Finds the highest request rate at which a scenario meets its SLOs.");
  cl.positional("config", 1, "CONFIG.yaml", "scenario YAML with an slo section");
  cl.out_option("servesim-capacity",
                "capacity.json, summary.json (the run at the capacity) and the exports");
  add_simulation_options(cl);
  cl.real_option("tolerance", 1e-6, 1, "relative", "width of the final bracket", 0.01);
  cl.real_option("min-attainment", 0, 1, "", "also require this share of requests within the SLOs");
  cl.options()("mlperf", po::value<std::string>(),
               "an MLPerf Server search for this benchmark (llama2-70b, llama3_1-8b, ...): its p99 "
               "TTFT and TPOT limits as the SLOs, LoadGen's 600 s and 100 queries at each rate");
  cl.real_option("min-duration", k_loadgen_min_duration_s, 86400, "s",
                 "with --mlperf: the run's minimum duration (LoadGen's min_duration: mlperf.conf's "
                 "600 s unless the run set a longer one), which sets each probe's query count");
  cl.require("config", "give a scenario file with an slo section");
  return cl;
}

int cmd_capacity(const std::vector<std::string>& args, std::ostream& out,
                 const volatile std::sig_atomic_t* interrupt) {
  const std::optional<po::variables_map> parsed = capacity_command_line().parse(args, out);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const CommonOptions c = common_options(vm);
  const std::string config = vm["config"].as<std::string>();
  CapacityOptions o;
  o.tolerance = vm["tolerance"].as<double>();  // ranges checked by CommandLine
  if (vm.count("min-attainment")) o.min_attainment = vm["min-attainment"].as<double>();
  if (vm.count("mlperf")) o.mlperf = mlperf_server_rules(vm["mlperf"].as<std::string>());
  if (vm.count("min-duration")) {
    if (!o.mlperf)
      throw InputError(
          "capacity: --min-duration without --mlperf: it is LoadGen's minimum run length, which "
          "only an MLPerf Server search uses (give --mlperf BENCHMARK)");
    o.mlperf_min_duration_s = vm["min-duration"].as<double>();
  }
  o.limits = run_limits(vm, interrupt);
  const TokenOutputs t = token_outputs(vm);
  o.percentiles = t.percentiles;  // summary.json's ITL too, as on run
  o.keep_tokens = t.wanted();
  std::vector<std::string> sets = overrides(vm);
  if (auto r = requests_override(vm)) {
    // LoadGen's query count follows from each probe's rate: a fixed count would contradict it.
    if (o.mlperf)
      throw InputError(
          "capacity: --requests with --mlperf: the MLPerf search sets each probe's request count "
          "from its rate (LoadGen's 600 s minimum); give one or the other");
    sets.push_back(*r);
  }
  const std::string dir = out_folder(vm, "capacity", "capacity.json");
  const std::string text = read_text_file(config, "config");
  // The folder is taken (locked) for the whole search; capacity.json, always written, is the
  // set's marker, renamed last (metrics/result_files.h).
  ResultFiles files(dir, "capacity.json");
  const CapacityResult r = find_capacity(text, config, sets, o);
  const nlohmann::ordered_json result = capacity_json(config, r, o);
  files.open("capacity.json") << result.dump(2) << "\n";
  nlohmann::ordered_json written = {dir + "/capacity.json"};
  std::string export_files;  // ", DIR/a, DIR/b" as the "wrote" line names them
  if (r.meeting) {
    const Summary& s = r.probes[*r.meeting].run.summary;
    files.open("summary.json") << r.probes[*r.meeting].run.summary_json;
    written.push_back(dir + "/summary.json");
    for (const ExportFormat* f : t.exports) {
      write_export(*f, files.open(f->file), s, *r.tokens, t.percentiles);
      written.push_back(dir + "/" + f->file);
      export_files += fmt::format(", {}/{}", dir, f->file);
    }
  } else {
    files.drop("summary.json");  // an earlier search's would describe another rate
  }
  // Exports an earlier command left in the folder would not match this result.
  for (const ExportFormat& f : export_formats())
    if (!r.meeting || std::find(t.exports.begin(), t.exports.end(), &f) == t.exports.end())
      files.drop(f.file);
  files.commit();
  std::optional<LatencyReport> latency;
  if (r.meeting && !t.percentiles.empty()) latency = latency_report(*r.tokens, t.percentiles);
  if (c.json) {
    nlohmann::ordered_json j{
        {"command", "capacity"}, {"out", dir}, {"files", written}, {"capacity", result}};
    if (latency) j["latency_s"] = latency_json(*latency);
    print_json(out, c, j);
  } else if (c.tables()) {
    print_capacity(out, r, o, dir, latency ? latency_table(*latency) : "", export_files);
  }
  return 0;
}

}  // namespace servesim
