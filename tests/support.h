#pragma once
// Helpers shared by the tests: scenarios from YAML text, traces in temporary files.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "core/config.h"
#include "core/errors.h"
#include "core/file_sink.h"
#include "metrics/run_scenario.h"
#include "sim/simulation.h"

namespace servesim::test {

/// This process's folder of temporary directories, servesim-test-PID in the system's temporary
/// folder, removed with everything in it when the process exits (by the process that made it:
/// a forked child leaves through _exit, and one that did not would not remove its parent's).
/// A suite run used to leave a directory behind for every temp_dir() call.
inline const std::filesystem::path& temp_root() {
  struct Root {
    pid_t owner = getpid();
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("servesim-test-" + std::to_string(owner));
    Root() {
      std::filesystem::remove_all(path);
      std::filesystem::create_directories(path);
    }
    Root(const Root&) = delete;
    Root& operator=(const Root&) = delete;
    ~Root() {
      std::error_code ec;
      if (getpid() == owner) std::filesystem::remove_all(path, ec);
    }
  };
  static const Root root;
  return root.path;
}

/// A fresh, empty temporary directory for this process (under temp_root()).
inline std::filesystem::path temp_dir() {
  static std::atomic<int> counter{0};
  auto p = temp_root() / std::to_string(counter++);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

/// A sink over /dev/full, whose every write fails with ENOSPC (a full disk), named `label` in
/// its messages; null where the machine has no /dev/full (the caller skips, saying so).
inline std::unique_ptr<FileSink> full_disk_sink(const std::string& label) {
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  return std::make_unique<FileSink>(fd, label);
}

/// Writes `text` to a new temporary file and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  auto p = temp_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

inline std::shared_ptr<Document> doc_of(const std::string& yaml) {
  return std::make_shared<Document>(yaml, "test.yaml");
}

/// Keeps a copy of every request that leaves the engine.
struct CollectingRecorder final : RequestRecorder {
  std::vector<Request> requests;
  void record(const Request& r) override { requests.push_back(r); }
  /// The requests in id order.
  std::vector<Request> by_id() const {
    std::vector<Request> out = requests;
    std::sort(out.begin(), out.end(),
              [](const Request& a, const Request& b) { return a.spec.id < b.spec.id; });
    return out;
  }
};

/// A run's requests in id order and the engine's statistics.
struct CheckedRun {
  std::vector<Request> requests;
  RunStats stats;
};

/// Builds and runs a scenario with the engine's invariant checks on.
inline CheckedRun run_checked(const std::string& yaml) {
  Scenario sc = build_scenario(doc_of(yaml));
  Simulation sim(std::move(sc.components), /*check=*/true);
  CollectingRecorder rec;
  sim.add_recorder(rec);
  sim.run();
  return {rec.by_id(), sim.stats()};
}

/// Runs a scenario and returns its requests in id order.
inline std::vector<Request> run_requests(const std::string& yaml) {
  return run_checked(yaml).requests;
}

/// The InputError message of building and running `yaml`, or "(no error)".
inline std::string input_error_of(const std::string& yaml) {
  try {
    (void)run_requests(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

/// A scenario replaying `csv` (rows "arrival_s,prompt_tokens,output_tokens") with the given
/// step_time, scheduler and kv sections (YAML flow maps).
inline std::string trace_scenario(const std::string& rows, const std::string& step_time,
                                  const std::string& scheduler, const std::string& kv) {
  const std::string path =
      write_temp("trace.csv", "arrival_s,prompt_tokens,output_tokens\n" + rows);
  return "workload: {trace: {path: " + path + "}}\nstep_time: " + step_time +
         "\nscheduler: " + scheduler + "\nkv: " + kv + "\n";
}

/// The command line, run in-process: exit status and what it printed.
struct CliResult {
  int code;
  std::string out, err;
};
inline CliResult cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

constexpr int64_t ms(double v) { return static_cast<int64_t>(v * 1e6 + 0.5); }

}  // namespace servesim::test
