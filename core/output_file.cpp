#include "core/output_file.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <random>

#include "core/errors.h"
#include "core/file_sink.h"

namespace servesim {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_suffix = ".partial";

const char* kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory:
      return "a folder";
    case fs::file_type::symlink:
      return "a symbolic link";
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

/// The folder of `path` ("." for a bare name) and its last component.
std::pair<fs::path, std::string> split(const std::string& path) {
  const fs::path p(path);
  return {p.has_parent_path() ? p.parent_path() : fs::path("."), p.filename().string()};
}

}  // namespace

void check_output_target(const std::string& path, const std::string& option) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec || st.type() == fs::file_type::not_found || st.type() == fs::file_type::regular) return;
  throw InputError(fmt::format(
      "{} {}: is {}; servesim writes an output only as a regular file, which it creates or "
      "replaces (give a new path or an existing regular file)",
      option, printable(path, 1024), kind_of(st.type())));
}

std::string temporary_name(const std::string& name) {
  std::random_device rd;
  return fmt::format(".{}.{}-{:08x}{}", name, static_cast<long>(::getpid()), rd(), k_suffix);
}

long temporary_owner(std::string_view name) {
  if (name.size() <= k_suffix.size() + 1 || name.front() != '.' || !name.ends_with(k_suffix))
    return 0;
  const std::string_view stem = name.substr(0, name.size() - k_suffix.size());
  const size_t dot = stem.rfind('.');
  const std::string_view tag =
      dot == std::string_view::npos ? std::string_view{} : stem.substr(dot + 1);
  const size_t dash = tag.find('-');
  long pid = 0;
  if (dot > 0 && dash != std::string_view::npos && dash + 9 == tag.size()) {
    const auto [end, err] = std::from_chars(tag.data(), tag.data() + dash, pid);
    if (err == std::errc() && end == tag.data() + dash && pid > 0) return pid;
  }
  return -1;
}

bool process_alive(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH);
}

OutputFile::OutputFile(std::string path, std::string option)
    : m_path(std::move(path)), m_option(std::move(option)) {
  const auto [dir, name] = split(m_path);
  if (name.empty() || name == "." || name == "..")
    throw InputError(fmt::format("{} {}: must name a file", m_option, printable(m_path, 1024)));
  check_output_target(m_path, m_option);
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path())
    m_created.push_back(p.string());
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw InputError(fmt::format("{} {}: cannot create the folder {}", m_option,
                                 printable(m_path, 1024), printable(dir.string(), 1024)));
  // A temporary of this same target whose writer is gone was left by a killed write.
  const std::string prefix = "." + name + ".";
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    if (!entry.starts_with(prefix)) continue;
    const long owner = temporary_owner(entry);
    if (owner > 0 && !process_alive(owner)) fs::remove(it->path(), ec);
  }
  m_temp = (dir / temporary_name(name)).string();
  try {
    m_sink =
        std::make_unique<FileSink>(m_temp, fmt::format("{} {}", m_option, printable(m_path, 1024)));
  } catch (...) {
    for (const std::string& d : m_created)
      if (!fs::remove(d, ec)) break;
    throw;
  }
  m_out = make_output_stream(*m_sink);
}

OutputFile::~OutputFile() {
  if (m_committed) return;
  m_out.reset();
  m_sink.reset();  // closed without writing what it holds
  std::error_code ec;
  fs::remove(m_temp, ec);
  for (const std::string& d : m_created)  // the folders it made, if nothing else went there
    if (!fs::remove(d, ec)) break;
}

void OutputFile::commit() {
  m_sink->close();  // throws WriteError, naming the bytes written and the reason
  check_output_target(m_path, m_option);  // it may have changed while we wrote
  std::error_code ec;
  fs::rename(m_temp, m_path, ec);
  if (ec)
    throw InputError(
        fmt::format("{} {}: cannot write ({})", m_option, printable(m_path, 1024), ec.message()));
  m_committed = true;
}

}  // namespace servesim
