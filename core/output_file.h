#pragma once
// Writing an output without harming what is there. An output is written under a temporary name
// in its own folder, unique to the process and the write (".NAME.PID-RANDOM.partial"), and
// renamed over the target only once it is complete; the target must be absent or a regular file,
// so a device, a FIFO, a folder or a symbolic link given as an output is refused rather than
// replaced. Used by every single-file output (trace gen --out, trace stats --json, calibrate
// --out, report --out) and, through metrics/result_files.h, by result folders. The bytes go
// through a FileSink (core/file_sink.h): a write the system refuses (a full disk, the file-size
// limit) throws WriteError out of the write, and the temporary goes with the OutputFile.
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/file_sink.h"

namespace servesim {

/// Throws InputError unless `path` is absent or a regular file (a symbolic link is refused, not
/// followed). `option` names the output in the message: "--out x: is a FIFO, ...".
void check_output_target(const std::string& path, const std::string& option);

/// A fresh temporary name for a file called `name`: ".NAME.PID-RANDOM.partial".
[[nodiscard]] std::string temporary_name(const std::string& name);

/// For a name in a folder: 0 when it is not one of servesim's temporaries; the pid that wrote it
/// when it is one of temporary_name()'s; -1 for a temporary of an older servesim
/// (".NAME.partial", a fixed name).
[[nodiscard]] long temporary_owner(std::string_view name);

/// Whether process `pid` still runs (false only when the system says there is no such process).
[[nodiscard]] bool process_alive(long pid);

/// One output file, written under a temporary name beside it and renamed into place by commit().
/// Destroyed without commit (an error, an interrupt) it removes its temporary, so the target is
/// either untouched or complete.
class OutputFile {
 public:
  /// Checks the target (check_output_target), creates its folder if needed, removes temporaries
  /// of the same target left by processes that no longer run (a killed write), and opens the
  /// temporary. Throws InputError naming `option` and the path.
  OutputFile(std::string path, std::string option);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  [[nodiscard]] std::ostream& stream() { return *m_out; }
  /// Closes the temporary, checks the target again and renames the temporary over it. Throws
  /// WriteError if a write failed, InputError if the target became something other than a
  /// regular file.
  void commit();

 private:
  std::string m_path;
  std::string m_option;
  std::string m_temp;
  std::vector<std::string> m_created;  ///< folders made for it, deepest first
  std::unique_ptr<FileSink> m_sink;
  std::unique_ptr<std::ostream> m_out;  ///< over m_sink: a refused write throws WriteError
  bool m_committed = false;
};

}  // namespace servesim
