#pragma once
// A result folder (`--out DIR` of run, capacity and size). One command at a time writes into a
// folder: it holds an exclusive lock (flock) on DIR/.servesim.lock from construction to
// destruction, and a second command into the same folder is refused with exit status 2. Every
// file is written under a temporary name unique to the process and renamed into place only once
// all of them are written (commit), so a failed or interrupted command never leaves a file that
// looks complete, and temporaries a killed command left behind are removed by the next command
// that takes the folder's lock.
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
  explicit ResultFiles(std::string dir);
  /// Removes the temporaries unless committed, then releases and removes the lock file.
  ~ResultFiles();
  ResultFiles(const ResultFiles&) = delete;
  ResultFiles& operator=(const ResultFiles&) = delete;
  /// A stream for `name`, written to a temporary file until commit(). Throws InputError when
  /// DIR/name exists and is not a regular file (a FIFO, a device, a folder, a symbolic link).
  [[nodiscard]] std::ostream& open(const std::string& name);
  /// Closes every file and renames it into place. Throws InputError if any write failed.
  void commit();

  /// The lock file's name in a result folder.
  static constexpr const char* k_lock_name = ".servesim.lock";

 private:
  void lock();
  void unlock();

  struct File {
    std::string name;
    std::string temp_path;
    std::unique_ptr<std::ofstream> out;
  };
  std::string m_dir;
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
