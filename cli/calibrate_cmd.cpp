#include "cli/calibrate_cmd.h"

#include <fmt/format.h>

#include <array>
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/cli_options.h"
#include "core/config.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "core/interrupt.h"
#include "core/output_file.h"
#include "models/fit.h"
#include "models/measurements.h"
#include "models/step_time_model.h"

namespace po = boost::program_options;

namespace servesim {
namespace {

struct Candidate {
  std::string form;
  Fitter fitter;
};

std::string pct(double v) { return fmt::format("{:.2f}%", 100.0 * v); }

/// The `cpu_overhead` key a step_time section takes (models/step_time_model.h).
std::string overhead_yaml(const OverheadFit& o) {
  return fmt::format("cpu_overhead: {{per_step_ms: {:.6g}, per_sequence_ms: {:.6g}}}\n",
                     o.overhead.per_step_ms, o.overhead.per_sequence_ms);
}

nlohmann::ordered_json overhead_json(const MeasurementSet& set) {
  if (!set.cpu_overhead) return nullptr;
  const OverheadFit& o = *set.cpu_overhead;
  return {{"source", set.cpu_overhead_source},
          {"points", o.points},
          {"per_step_ms", o.overhead.per_step_ms},
          {"per_sequence_ms", o.overhead.per_sequence_ms},
          {"mape", o.mape},
          {"max_ape", o.max_ape}};
}

/// Vidur's tables: the engine's CPU time a step, fitted apart from the GPU time.
void report_overhead(const MeasurementSet& set, std::ostream& out) {
  if (set.cpu_overhead_source.empty()) return;
  if (!set.cpu_overhead) {
    out << "cpu overhead: not fitted (" << set.cpu_overhead_source << ")\n\n";
    return;
  }
  const OverheadFit& o = *set.cpu_overhead;
  out << fmt::format(
      "cpu overhead a step (schedule + sampler_e2e + prepare_inputs_e2e + process_model_outputs "
      "medians), {} points at batch {} to {} from {}:\n  ms = {:.4f} + {:.5f} x batch; MAPE {}, "
      "max APE {}\n  as a step_time key (not in the step fits below, which are GPU time): {}\n",
      o.points, o.min_batch, o.max_batch, set.cpu_overhead_source, o.overhead.per_step_ms,
      o.overhead.per_sequence_ms, pct(o.mape), pct(o.max_ape), overhead_yaml(o));
}

/// --check-step-time: a given step_time file's errors on the measurements, all steps and by kind of
/// step.
nlohmann::ordered_json check_model(const std::string& path, const MeasurementSet& set,
                                   std::ostream& out) {
  const auto doc = Document::load_file(path);
  const auto model = make_step_time_model(Cfg::root(doc));
  doc->check_all_read();
  struct Sum {
    size_t n = 0;
    double ape = 0, max_ape = 0, signed_err = 0;
  };
  std::array<Sum, 4> sums{};  // all, decode only, prefill only, mixed
  for (const StepSample& s : set.samples) {
    const double err = (model->step_ms(s.shape) - s.ms) / s.ms;
    const size_t kind = s.shape.prefill_tokens == 0 ? 1 : s.shape.decode_sequences == 0 ? 2 : 3;
    for (size_t k : {size_t{0}, kind}) {
      sums[k].n += 1;
      sums[k].ape += std::abs(err);
      sums[k].max_ape = std::max(sums[k].max_ape, std::abs(err));
      sums[k].signed_err += err;
    }
  }
  out << fmt::format("{} on {} steps\n{:<14}{:>7}{:>12}{:>12}{:>14}\n", path, set.samples.size(),
                     "steps", "count", "MAPE", "max APE", "mean error");
  const char* names[] = {"all", "decode only", "prefill only", "mixed"};
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (size_t k = 0; k < sums.size(); ++k)
    if (sums[k].n > 0) {
      const double n = static_cast<double>(sums[k].n);
      out << fmt::format("{:<14}{:>7}{:>12}{:>12}{:>14}\n", names[k], sums[k].n,
                         pct(sums[k].ape / n), pct(sums[k].max_ape), pct(sums[k].signed_err / n));
      j[names[k]] = {{"count", sums[k].n},
                     {"mape", sums[k].ape / n},
                     {"max_ape", sums[k].max_ape},
                     {"mean_error", sums[k].signed_err / n}};
    }
  return j;
}

/// Measurements are read whole into memory: a file (or each CSV table of a profile folder) must
/// be a regular file of at most this size. Published profiles are a few megabytes.
constexpr uintmax_t k_max_measurement_bytes = uintmax_t{256} << 20;

void check_measurement_file(const std::filesystem::path& given) {
  // `name.csv` stands for `name.csv.gz` when only that is there (core/input_file.h).
  const std::filesystem::path p = find_input(given).value_or(given);
  std::error_code ec;
  const auto st = std::filesystem::status(p, ec);
  if (!std::filesystem::exists(st))
    throw InputError(fmt::format("{}: cannot open measurements (no such file or folder)",
                                 printable(p.string(), 1024)));
  if (!std::filesystem::is_regular_file(st))
    throw InputError(
        fmt::format("{}: not a regular file (measurements are read whole: give a "
                    "CSV file or a profile folder)",
                    printable(p.string(), 1024)));
  const uintmax_t size = std::filesystem::file_size(p, ec);
  if (ec || size > k_max_measurement_bytes)
    throw InputError(fmt::format("{}: larger than {} MiB; not a measurement table",
                                 printable(p.string(), 1024), k_max_measurement_bytes >> 20));
}

/// A measurement file, or a profile folder whose CSV tables (and its tp1/ neighbour's, which
/// layer profiles fall back on) are each checked like a file.
void check_measurements_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return check_measurement_file(path);
  const fs::path dir(path);
  for (const fs::path& d : {dir, dir.parent_path() / "tp1"}) {
    if (!fs::is_directory(d, ec)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".csv" || e.path().extension() == ".gz")
        check_measurement_file(e.path());
  }
}

}  // namespace

CommandLine calibrate_command_line() {
  CommandLine cl("calibrate", "MEASUREMENTS [options]",
                 "Fits step-time models to measured step latencies: DIR/step_time.yaml.");
  cl.positional("measurements", 1, "MEASUREMENTS", "measurement file or profile folder");
  cl.out_option(nullptr, "step_time.yaml (the chosen model as a step_time section)");
  // clang-format off
  cl.options()
      ("input-format", po::value<std::string>()->default_value("auto"), "the measurements' format: auto, csv, llmservingsim, splitwise, vidur")
      ("form", po::value<std::string>()->default_value("auto"), "auto, hinge, linear, roofline, table")
      ("source-model", po::value<std::string>(), k_source_model_help)
      ("model-shape", po::value<std::string>(), "vidur: catalogue model (or model YAML) whose shape picks the tables' rows")
      ("source-hardware", po::value<std::string>(), "splitwise: the rows' hardware to select")
      ("catalog-model", po::value<std::string>(), "roofline form: catalogue model (servesim list models)")
      ("catalog-hardware", po::value<std::string>(), "roofline form: catalogue accelerator")
      ("weight-dtype", po::value<std::string>(), "fp32, bf16, fp16, fp8, int8, int4 (default bf16)")
      ("check-step-time", po::value<std::string>(), "fit nothing: print this step_time YAML file's errors on the measurements");
  // clang-format on
  cl.int_option("source-tp", 1, 1024,
                "splitwise, vidur: the rows' tensor parallel degree to select");
  cl.int_option("layers", 1, 100'000, "layer profiles, vidur: the model's layer count");
  cl.int_option("max-kv-per-seq", 1, 1'000'000'000,
                "fit only steps whose decodes hold at most this many KV tokens each");
  cl.int_option("folds", 2, 100, "cross-validation folds", 5);
  cl.int_option("worst", 0, 1000, "rows in the worst-points table", 8);
  cl.require("measurements", "give a measurement file or profile folder");
  // The source-data selectors were --model, --hardware and --tp, which name a catalogue entry
  // and a deployment on every other command; --format and --check mean other things elsewhere.
  cl.renamed("format", "input-format")
      .renamed("model", "source-model")
      .renamed("hardware", "source-hardware")
      .renamed("tp", "source-tp")
      .renamed("check", "check-step-time");
  return cl;
}

int cmd_calibrate(const std::vector<std::string>& args, std::ostream& out_stream,
                  const volatile std::sig_atomic_t* interrupt) {
  const std::optional<po::variables_map> parsed = calibrate_command_line().parse(args, out_stream);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const CommonOptions c = common_options(vm);
  std::ostream sink(nullptr);  // the tables, unless -q or --json
  std::ostream& out = c.tables() ? out_stream : sink;
  const std::string dir = out_folder(vm, "calibrate", "step_time.yaml");
  // CommandLine::int_option checked the ranges.
  const int folds_asked = static_cast<int>(vm["folds"].as<int64_t>());
  const int worst = static_cast<int>(vm["worst"].as<int64_t>());
  const std::string form = vm["form"].as<std::string>();
  const std::vector<std::string> forms{"auto", "hinge", "linear", "roofline", "table"};
  if (std::find(forms.begin(), forms.end(), form) == forms.end())
    throw InputError(fmt::format("--form {}: unknown{} (valid: {})", form,
                                 did_you_mean(form, forms), join_names(forms)));

  MeasurementFilter filter;
  if (vm.count("source-model")) filter.model = vm["source-model"].as<std::string>();
  if (vm.count("source-hardware")) filter.hardware = vm["source-hardware"].as<std::string>();
  if (vm.count("source-tp")) filter.tp = static_cast<int>(vm["source-tp"].as<int64_t>());
  if (vm.count("model-shape")) filter.model_shape = vm["model-shape"].as<std::string>();
  if (vm.count("layers")) filter.layers = static_cast<int>(vm["layers"].as<int64_t>());
  if (vm.count("max-kv-per-seq")) filter.max_kv_per_seq = vm["max-kv-per-seq"].as<int64_t>();
  const std::string path = vm["measurements"].as<std::string>();
  check_measurements_path(path);
  const MeasurementSet set = read_measurements(path, vm["input-format"].as<std::string>(), filter);
  out << "read " << set.description << "\n\n";
  report_overhead(set, out);
  nlohmann::ordered_json j{{"command", "calibrate"},
                           {"measurements", set.description},
                           {"files", nlohmann::ordered_json::array()},
                           {"cpu_overhead", overhead_json(set)}};
  if (vm.count("check-step-time")) {
    j["check"] = vm["check-step-time"].as<std::string>();
    j["errors"] = check_model(vm["check-step-time"].as<std::string>(), set, out);
    if (c.json) print_json(out_stream, c, j);
    return 0;
  }

  // Cross-validation holds out one fold at a time, each of at least one measurement: with
  // fewer measurements than --folds it uses one fold per measurement (and says so), and one
  // measurement cannot be cross-validated at all (main reported a 0% error it never measured).
  if (set.samples.size() < 2)
    throw InputError(fmt::format(
        "calibrate: {} measurement left to fit; cross-validation needs at least 2 (one fitted, "
        "one held out); give more measurements",
        set.samples.size()));
  const int folds = std::min(folds_asked, static_cast<int>(set.samples.size()));
  std::vector<Candidate> candidates;
  if (form == "auto" || form == "linear") candidates.push_back({"linear", &fit_linear});
  if (form == "auto" || form == "hinge") candidates.push_back({"hinge", &fit_hinge});
  if (form == "auto" || form == "table") candidates.push_back({"table", &fit_table});
  // The roofline form needs a catalogue model and accelerator; with them, `auto` tries it too.
  if (vm.count("catalog-model") != vm.count("catalog-hardware"))
    throw InputError("calibrate: --catalog-model and --catalog-hardware go together");
  if (form == "roofline" && !vm.count("catalog-model"))
    throw InputError("calibrate --form roofline: give --catalog-model and --catalog-hardware");
  if (vm.count("catalog-model") && (form == "auto" || form == "roofline")) {
    std::string yaml = fmt::format("kind: roofline\nmodel: {}\nhardware: {}\n",
                                   vm["catalog-model"].as<std::string>(),
                                   vm["catalog-hardware"].as<std::string>());
    if (filter.tp) yaml += fmt::format("tensor_parallel: {}\n", *filter.tp);
    if (vm.count("weight-dtype"))
      yaml += fmt::format("weight_dtype: {}\n", vm["weight-dtype"].as<std::string>());
    candidates.push_back({"roofline", make_roofline_fitter(yaml)});
  }
  const uint64_t seed = 1;
  out << fmt::format("{:<8}{:>12}{:>12}{:>14}{:>14}\n", "form", "MAPE", "max APE",
                     fmt::format("MAPE {}-fold", folds), "max APE CV");
  const Candidate* best = nullptr;
  FitReport best_rep;
  std::vector<std::string> notes;
  j["folds"] = folds;
  j["forms"] = nlohmann::ordered_json::array();
  for (const Candidate& cand : candidates) {
    check_interrupt(interrupt);
    FitReport rep;
    try {
      rep = evaluate_fit(cand.fitter, set.samples, folds, size_t(worst), seed);
    } catch (const InputError& e) {
      if (form != "auto") throw;
      notes.push_back(fmt::format("{}: not fitted ({})", cand.form, e.what()));
      continue;
    }
    out << fmt::format("{:<8}{:>12}{:>12}{:>14}{:>14}\n", cand.form, pct(rep.mape_in),
                       pct(rep.max_ape_in), pct(rep.mape_cv), pct(rep.max_ape_cv));
    j["forms"].push_back({{"form", cand.form},
                          {"mape", rep.mape_in},
                          {"max_ape", rep.max_ape_in},
                          {"mape_cv", rep.mape_cv},
                          {"max_ape_cv", rep.max_ape_cv}});
    if (!best || rep.mape_cv < best_rep.mape_cv) {
      best = &cand;
      best_rep = rep;
    }
  }
  for (const auto& n : notes) out << n << "\n";
  j["not_fitted"] = notes;
  if (!best) throw InputError("calibrate: no model form could be fitted");

  const auto model = best->fitter(set.samples);
  out << fmt::format("\nchosen: {} (lowest cross-validated MAPE)\n\n", best->form);
  out << model->yaml();
  j["chosen"] = best->form;
  j["step_time_yaml"] = model->yaml();
  j["worst_cv"] = nlohmann::ordered_json::array();
  if (!best_rep.worst_cv.empty()) {
    out << fmt::format("\nworst cross-validated points ({}):\n", best->form);
    out << fmt::format("{:>12}{:>12}{:>9}  {}\n", "measured ms", "predicted", "error",
                       "measurement");
    for (const PointError& e : best_rep.worst_cv) {
      out << fmt::format("{:>12.4f}{:>12.4f}{:>9}  {}\n", e.measured_ms, e.predicted_ms, pct(e.ape),
                         set.samples[e.index].label);
      j["worst_cv"].push_back({{"measured_ms", e.measured_ms},
                               {"predicted_ms", e.predicted_ms},
                               {"ape", e.ape},
                               {"measurement", set.samples[e.index].label}});
    }
  }
  if (!dir.empty()) {
    std::string yaml = fmt::format(
        "# Fitted by `servesim calibrate` from {}\n# {} form: MAPE {} in-sample, {} under "
        "{}-fold cross-validation (max {}).\n# Use it as `step_time: <this file>` in a "
        "scenario.\n{}",
        set.description, best->form, pct(best_rep.mape_in), pct(best_rep.mape_cv), folds,
        pct(best_rep.max_ape_cv), model->yaml());
    if (set.cpu_overhead)
      yaml += fmt::format(
          "# The engine's CPU time a step, fitted to {} (MAPE {}); the errors above "
          "are GPU time only.\n{}",
          set.cpu_overhead_source, pct(set.cpu_overhead->mape), overhead_yaml(*set.cpu_overhead));
    check_interrupt(interrupt);
    const std::string yaml_path = (std::filesystem::path(dir) / "step_time.yaml").string();
    OutputFile file(yaml_path, "--out");
    file.stream() << yaml;
    file.commit();
    out << "\nwrote " << yaml_path << "\n";
    j["out"] = dir;
    j["files"].push_back(yaml_path);
  }
  if (c.json) print_json(out_stream, c, j);
  return 0;
}

}  // namespace servesim
