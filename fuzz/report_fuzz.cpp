// libFuzzer harness: `servesim report`'s inputs. The first byte picks which file of a result
// folder the rest becomes (0: summary.json alone; 1: requests.csv, 2: steps.csv, beside a small
// valid summary.json; 3: points.csv beside a sweep's summary.json); the folder is then read and
// the page written to a string, as `servesim report` does. Expected: a page, or an InputError
// with a clean message naming the folder. A crash, a sanitizer report, another exception type,
// a hang or a message with raw control characters is a finding.
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/errors.h"
#include "fuzz/check.h"
#include "report/report.h"
#include "report/report_data.h"

namespace {

namespace fs = std::filesystem;

// One folder per process, emptied for each input.
const fs::path& input_dir() {
  static const fs::path dir =
      fs::temp_directory_path() / ("servesim-fuzz-report-" + std::to_string(getpid()));
  return dir;
}

void write(const fs::path& p, const uint8_t* data, size_t size) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

void write(const fs::path& p, const std::string& text) {
  write(p, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim;
  if (size == 0) return 0;
  const fs::path& dir = input_dir();
  fs::remove_all(dir);
  fs::create_directories(dir);
  static const char* const k_files[] = {"summary.json", "requests.csv", "steps.csv", "points.csv"};
  const unsigned which = data[0] % 4;
  if (which == 1 || which == 2) write(dir / "summary.json", "{\"finished\": 1}");
  if (which == 3) write(dir / "summary.json", "{\"kind\": \"sweep\", \"slo\": {\"ttft_ms\": 500}}");
  write(dir / k_files[which], data + 1, size - 1);
  try {
    std::ostringstream page;
    write_report_html(report_data({dir.string()}), page);
    if (page.str().empty()) fuzz::finding("an empty page", "");
  } catch (const InputError& e) {
    fuzz::check_message(e.what(), dir.string());
  } catch (const std::exception& e) {
    fuzz::finding("an exception other than InputError", e.what());
  }
  return 0;
}
