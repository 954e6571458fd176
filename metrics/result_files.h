#pragma once
// A result folder (`--out DIR` of run, capacity and size). One command at a time writes into a
// folder: it holds an exclusive lock (flock) on DIR/.servesim.lock from construction to
// destruction, and a second command into the same folder is refused with exit status 2. Every
// file is written under a temporary name unique to the process and renamed into place only once
// all of them are written (commit), so a failed or interrupted command never leaves a file that
// looks complete, and temporaries a killed command left behind are removed by the next command
// that takes the folder's lock.
//
// The set is made consistent by its marker, the file whose presence says the folder's results are
// complete (summary.json of run and size, capacity.json of capacity): commit() removes the old
// marker first, renames every other file, then the marker, last; a rename that fails takes back
// the files this commit renamed. So a folder with its marker holds a whole set from one command,
// and a folder without it holds nothing that claims to be complete (docs/errors.md#a-full-disk-
// or-a-file-size-limit). The bytes go through FileSink (core/file_sink.h): a write the system
// refuses throws WriteError from the stream at once, and the temporaries go with the object.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/output_file.h"

namespace servesim {

class ResultFiles {
 public:
  /// Creates `dir` if needed (and removes it again, if still empty, when never committed), takes
  /// its lock and removes stale temporaries (core/output_file.h: those of processes that no
  /// longer run, and the fixed-name ".NAME.partial" of older servesims). Throws InputError
  /// naming the folder if it cannot be created or locked, or another command holds its lock.
  /// `marker` is the file renamed last (see above); it need not be opened (capacity writes
  /// summary.json only when a rate met the SLOs, and capacity.json always).
  explicit ResultFiles(std::string dir, std::string marker = "summary.json");
  /// Removes the temporaries unless committed, then releases and removes the lock file.
  ~ResultFiles();
  ResultFiles(const ResultFiles&) = delete;
  ResultFiles& operator=(const ResultFiles&) = delete;
  /// A stream for `name`, written to a temporary file until commit(). Throws InputError when
  /// DIR/name exists and is not a regular file (a FIFO, a device, a folder, a symbolic link).
  [[nodiscard]] std::ostream& open(const std::string& name);
  /// A file of this command's layout that this run does not write (requests.csv under
  /// --no-requests-csv, ...): an older run's copy is removed by commit(), before the marker.
  void drop(const std::string& name);
  /// Closes every file and renames it into place, the marker last (above). Throws WriteError if
  /// a write failed, InputError if a rename did; either way no marker of this set is left.
  void commit();
  /// After a commit, a step that belongs to the set failed (report.html of run --report): removes
  /// the marker and the files the commit renamed, so the folder no longer looks complete.
  void retract();

  /// The lock file's name in a result folder.
  static constexpr const char* k_lock_name = ".servesim.lock";

 private:
  void lock();
  void unlock();

  struct File {
    std::string name;
    std::string temp_path;
    std::unique_ptr<FileSink> sink;
    std::unique_ptr<std::ostream> out;  ///< over sink: a refused write throws WriteError
  };
  /// Renames one file into place; throws InputError.
  void place(const File& f);
  std::string m_dir;
  std::string m_marker;
  std::vector<std::string> m_dropped;
  std::vector<std::string> m_placed;  ///< names this commit renamed into place
  bool m_created_dir = false;
  int m_lock_fd = -1;
  std::vector<File> m_files;
  bool m_committed = false;
};

/// Writes name -> contents into the result folder `dir` (created if needed), all or nothing as
/// far as the filesystem allows, under its lock. Throws InputError naming the folder.
void write_files(const std::string& dir,
                 const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace servesim
