// libFuzzer harness: `servesim calibrate`'s measurement files. The first byte picks the format
// (even: servesim's generic CSV, odd: Splitwise's perf_model.csv) and, with bit 1, a
// --max-kv-per-seq of 1000; the rest is the file. What is read is then fitted as calibrate
// does, cheaply: a linear fit under 2-fold cross-validation. Expected: samples that keep the
// importers' contract (at least one sequence, a measured time > 0 and finite) and a finite fit,
// or an InputError with a clean message. Anything else is a finding.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "fuzz/check.h"
#include "models/fit.h"
#include "models/measurements.h"

namespace {

// One file per process, rewritten for each input (the importers read paths, not streams).
const std::string& input_path() {
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("servesim-fuzz-calibrate-" + std::to_string(getpid()) + ".csv"))
                                      .string();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim;
  if (size == 0) return 0;
  const std::string& path = input_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  MeasurementFilter filter;
  if (data[0] & 2) filter.max_kv_per_seq = 1000;
  try {
    const MeasurementSet set = read_measurements(path, data[0] & 1 ? "splitwise" : "csv", filter);
    if (set.samples.empty()) fuzz::finding("an empty measurement set was accepted", "");
    for (const StepSample& s : set.samples) {
      if (s.shape.sequences < 1) fuzz::finding("a sample without sequences", s.label);
      if (!(s.ms > 0) || !std::isfinite(s.ms)) fuzz::finding("a sample time not > 0", s.label);
    }
    if (set.samples.size() >= 2) {
      const FitReport rep = evaluate_fit(&fit_linear, set.samples, 2, 3, 1);
      if (std::isnan(rep.mape_in)) fuzz::finding("a NaN in-sample error", set.description);
    }
  } catch (const InputError& e) {
    fuzz::check_message(e.what(), "");
  } catch (const std::exception& e) {
    fuzz::finding("an exception other than InputError", e.what());
  }
  return 0;
}
