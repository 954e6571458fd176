#pragma once
// The one way servesim puts an output's bytes on disk (docs/errors.md#a-full-disk-or-a-file-size-
// limit). A FileSink is a stream buffer over a file it creates (a temporary: OutputFile and
// ResultFiles rename it into place). It counts the bytes the system took and stops at the first
// write the system refuses (a full disk, ENOSPC; a quota, EDQUOT; the file-size limit of
// `ulimit -f`, EFBIG, which reaches a write as an error only because servesim ignores SIGXFSZ:
// ignore_file_size_signal()) by throwing WriteError, whose message names the file, the bytes
// written, the system's reason and what to do. A stream over it (make_output_stream) rethrows
// that error out of the `<<` or write() that failed, so a long run stops at its first failed
// write rather than computing results it cannot keep.
#include <cstdint>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "core/errors.h"

namespace servesim {

/// An output could not be written: the disk or the process's limits, not the input. A kind of
/// InputError, so the command exits with status 2 and prints the message.
class WriteError : public InputError {
 public:
  using InputError::InputError;
};

/// Makes SIGXFSZ (sent by the kernel to a process writing past its file-size limit, `ulimit -f`,
/// whose default action kills it without a word: exit 153) ignored, so the write fails with EFBIG
/// and is reported. Called by main() and at `import servesim`. A handler someone else installed
/// is kept.
void ignore_file_size_signal();

/// What the system's reason `err` (an errno value) means for an output of `bytes` bytes so far
/// and what to do about it: "the file reached this process's file-size limit (ulimit -f, 64
/// KiB): raise the limit (ulimit -f unlimited) or write less".
[[nodiscard]] std::string write_advice(int err, uint64_t bytes);

/// The message of a write that failed: "LABEL: write failed after N bytes: REASON: ADVICE;
/// nothing this command wrote was kept" (its callers remove what it wrote: OutputFile,
/// ResultFiles).
[[nodiscard]] std::string write_failure(const std::string& label, uint64_t bytes, int err);

class FileSink : public std::streambuf {
 public:
  /// Creates `path` (it must not exist: O_EXCL, mode 0666 less the umask) for writing. `label`
  /// names the output in messages ("--out o/requests.csv"). Throws WriteError if the system
  /// refuses to create it, naming the reason.
  FileSink(std::string path, std::string label);
  /// Takes over `fd`, a file opened for writing elsewhere (a test's /dev/full), which it closes.
  FileSink(int fd, std::string label);
  /// Closes the file without writing what is buffered: an abandoned output.
  ~FileSink() override;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  /// Writes what is buffered and closes the file, checking both (a network filesystem or a quota
  /// may report a failed write only at close). Throws WriteError. Idempotent once it succeeded.
  void close();
  /// Throws the WriteError of an earlier failed write, if there was one (a caller that caught it,
  /// or a stream that swallowed it).
  void check() const;
  /// The bytes the system has taken so far (not those still buffered).
  [[nodiscard]] uint64_t bytes_written() const { return m_written; }
  [[nodiscard]] const std::string& path() const { return m_path; }
  [[nodiscard]] const std::string& label() const { return m_label; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  /// Writes [p, p + n) to the file, all of it; throws WriteError on a refusal.
  void drain(const char* p, size_t n);
  /// Writes the put area and empties it.
  void flush_buffer();
  [[noreturn]] void fail(int err);

  std::string m_path;
  std::string m_label;
  int m_fd = -1;
  std::vector<char> m_buf;
  uint64_t m_written = 0;
  int m_error = 0;  ///< errno of the first failed write; 0: none
};

/// An ostream over `sink` that rethrows the sink's WriteError out of the operation that failed
/// (exceptions on badbit: the stream's own catch records the state, then rethrows the original).
[[nodiscard]] std::unique_ptr<std::ostream> make_output_stream(FileSink& sink);

}  // namespace servesim
