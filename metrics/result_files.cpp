#include "metrics/result_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/errors.h"
#include "core/file_sink.h"

namespace servesim {
namespace fs = std::filesystem;

ResultFiles::ResultFiles(std::string dir, std::string marker)
    : m_dir(std::move(dir)), m_marker(std::move(marker)) {
  std::error_code ec;
  m_created_dir = fs::create_directories(m_dir, ec);
  if (ec || !fs::is_directory(m_dir))
    throw InputError(fmt::format("--out {}: cannot create the output directory ({})", m_dir,
                                 ec ? ec.message() : "not a directory"));
  try {
    lock();
  } catch (...) {
    if (m_created_dir) fs::remove(m_dir, ec);
    throw;
  }
  // Under the lock no other command writes result files here; a temporary whose writer is gone
  // is what a killed command left (a single-file output written into this folder by a live
  // process, `trace gen --out DIR/x.csv`, keeps its own).
  // Older servesims used fixed names, ".summary.json.partial": only those of result files go.
  const std::set<std::string> fixed{".capacity.json.partial", ".points.csv.partial",
                                    ".requests.csv.partial",  ".steps.csv.partial",
                                    ".summary.json.partial",  ".timeline.json.partial"};
  for (fs::directory_iterator it(m_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const long owner = temporary_owner(name);
    if ((owner > 0 && !process_alive(owner)) || (owner < 0 && fixed.count(name))) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
}

void ResultFiles::lock() {
  const std::string path = (fs::path(m_dir) / k_lock_name).string();
  // The holder removes the lock file as it lets go, so a lock taken on a file that is no longer
  // the one at `path` is worth nothing: take it again on the new one.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw InputError(fmt::format("--out {}: cannot create the lock file {} ({})", m_dir,
                                   k_lock_name, std::strerror(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK)
        throw InputError(fmt::format(
            "--out {}: another servesim command is writing results into this folder (it holds "
            "{}); wait for it to finish or give another --out",
            m_dir, (fs::path(m_dir) / k_lock_name).string()));
      throw InputError(
          fmt::format("--out {}: cannot lock {} ({})", m_dir, k_lock_name, std::strerror(err)));
    }
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      m_lock_fd = fd;
      return;
    }
    ::close(fd);
  }
  throw InputError(fmt::format("--out {}: cannot lock {} (it keeps changing)", m_dir, k_lock_name));
}

void ResultFiles::unlock() {
  if (m_lock_fd < 0) return;
  ::unlink((fs::path(m_dir) / k_lock_name).c_str());  // while held: see lock()
  ::close(m_lock_fd);
  m_lock_fd = -1;
}

ResultFiles::~ResultFiles() {
  std::error_code ec;
  if (!m_committed)
    for (File& f : m_files) {
      f.out.reset();
      f.sink.reset();  // closed without writing what it holds
      fs::remove(f.temp_path, ec);
    }
  unlock();
  if (!m_committed && m_created_dir && fs::is_empty(m_dir, ec)) fs::remove(m_dir, ec);
}

std::ostream& ResultFiles::open(const std::string& name) {
  const std::string target = (fs::path(m_dir) / name).string();
  check_output_target(target, "--out");
  File f;
  f.name = name;
  f.temp_path = (fs::path(m_dir) / temporary_name(name)).string();
  f.sink = std::make_unique<FileSink>(f.temp_path, "--out " + printable(target, 1024));
  f.out = make_output_stream(*f.sink);
  m_files.push_back(std::move(f));
  return *m_files.back().out;
}

void ResultFiles::drop(const std::string& name) { m_dropped.push_back(name); }

void ResultFiles::place(const File& f) {
  const fs::path target = fs::path(m_dir) / f.name;
  check_output_target(target.string(), "--out");
  std::error_code ec;
  // The older file goes first: renamed over, ext4 (its auto_da_alloc default) writes the new
  // file's data out before the rename returns, milliseconds for a large requests.csv, where
  // after a removal the rename is immediate and the data goes out later. The folder has had
  // no marker since commit() began, so nothing claims the set is complete in between.
  if (fs::is_regular_file(fs::symlink_status(target, ec))) fs::remove(target, ec);
  fs::rename(f.temp_path, target, ec);
  if (ec)
    throw InputError(
        fmt::format("--out {}: cannot write {} ({}); nothing this command wrote was "
                    "kept",
                    m_dir, f.name, ec.message()));
  m_placed.push_back(f.name);
}

void ResultFiles::commit() {
  for (File& f : m_files) f.sink->close();  // throws WriteError: nothing was renamed yet
  std::error_code ec;
  const fs::path dir(m_dir);
  // From here to the marker's rename, the folder holds no marker: an older set stops looking
  // complete before any of its files is replaced.
  if (fs::is_regular_file(fs::symlink_status(dir / m_marker, ec))) fs::remove(dir / m_marker, ec);
  try {
    for (const std::string& name : m_dropped)
      if (fs::is_regular_file(fs::symlink_status(dir / name, ec))) fs::remove(dir / name, ec);
    const File* marker = nullptr;
    for (const File& f : m_files)
      if (f.name == m_marker)
        marker = &f;
      else
        place(f);
    if (marker) place(*marker);
  } catch (...) {
    retract();
    throw;
  }
  m_committed = true;
}

void ResultFiles::retract() {
  std::error_code ec;
  // The marker first: from then on the folder does not claim to be complete.
  if (std::find(m_placed.begin(), m_placed.end(), m_marker) != m_placed.end())
    fs::remove(fs::path(m_dir) / m_marker, ec);
  for (const std::string& name : m_placed) fs::remove(fs::path(m_dir) / name, ec);
  m_placed.clear();
  m_committed = false;  // a folder this command made goes again if it is empty
}

void write_files(const std::string& dir,
                 const std::vector<std::pair<std::string, std::string>>& files) {
  ResultFiles out(dir);
  for (const auto& [name, text] : files) out.open(name) << text;
  out.commit();
}

}  // namespace servesim
