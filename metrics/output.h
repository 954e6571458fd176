#pragma once
// Results as files. Every file is written under a temporary name and renamed into place only
// once all of them are written, so an interrupted run never leaves a file that looks complete.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <deque>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/request.h"
#include "metrics/metrics.h"
#include "sim/recorder.h"

namespace servesim {

/// Streams requests.csv, one row per request in id order, as requests leave the engine. Rows of
/// requests that left before a lower id are held until that id leaves (memory: the rows of
/// requests that overtook a request still in flight). Times in seconds with nanosecond digits.
class RequestsCsvWriter final : public RequestRecorder {
 public:
  /// Writes the header. REQUIRES: `out` outlives this writer.
  explicit RequestsCsvWriter(std::ostream& out);
  void record(const Request& r) override;
  /// Writes the rows still held (a bounded run leaves gaps in the ids) and flushes.
  void finish();

 private:
  void flush_buffer();

  std::ostream& m_out;
  fmt::memory_buffer m_buf;
  std::deque<std::string> m_held;    // m_held[i]: the row of id m_next_id + i ("" until it comes)
  std::vector<std::string> m_spare;  // emptied rows, kept for their capacity
  uint64_t m_next_id = 0;
};

/// requests.csv of a finished set of requests, as one string (tests).
[[nodiscard]] std::string requests_csv(const std::vector<Request>& requests);

/// Result files written under temporary names in a directory and renamed into place together
/// by commit(). Destroyed without commit (an error, an exception), it removes its temporaries,
/// so a failed or interrupted run never leaves a file that looks complete.
class ResultFiles {
 public:
  /// Creates `dir` if needed (and removes it again, if still empty, when never committed);
  /// throws InputError naming it if it cannot.
  explicit ResultFiles(std::string dir);
  ~ResultFiles();
  ResultFiles(const ResultFiles&) = delete;
  ResultFiles& operator=(const ResultFiles&) = delete;
  /// A stream for `name`, written to a temporary file until commit().
  [[nodiscard]] std::ostream& open(const std::string& name);
  /// Closes every file and renames it into place. Throws InputError if any write failed.
  void commit();

 private:
  struct File {
    std::string name;
    std::string temp_path;
    std::unique_ptr<std::ofstream> out;
  };
  std::string m_dir;
  bool m_created_dir = false;
  std::vector<File> m_files;
  bool m_committed = false;
};
/// summary.json: the metrics, the seed and the resolved config.
[[nodiscard]] nlohmann::ordered_json summary_json(const Summary& s, const YAML::Node& config,
                                                  uint64_t seed);
/// The table printed after a run.
[[nodiscard]] std::string summary_table(const Summary& s);
/// A YAML tree as JSON (numbers and booleans typed, everything else strings).
[[nodiscard]] nlohmann::ordered_json yaml_to_json(const YAML::Node& node);

/// Writes name -> contents into `dir` (created if needed), all or nothing as far as the
/// filesystem allows. Throws InputError naming the directory if it cannot be written.
void write_files(const std::string& dir,
                 const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace servesim
