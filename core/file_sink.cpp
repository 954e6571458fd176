#include "core/file_sink.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace servesim {
namespace {

constexpr size_t k_buffer_bytes = size_t{1} << 16;

/// "64 KiB", "1.5 MiB", "300 bytes".
std::string size_text(uint64_t bytes) {
  constexpr const char* k_units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double v = static_cast<double>(bytes) / 1024;
  size_t u = 0;
  for (; v >= 1024 && u + 1 < std::size(k_units); ++u) v /= 1024;
  return v == static_cast<double>(static_cast<uint64_t>(v))
             ? fmt::format("{} {}", static_cast<uint64_t>(v), k_units[u])
             : fmt::format("{:.1f} {}", v, k_units[u]);
}

}  // namespace

void ignore_file_size_signal() {
  struct sigaction old {};
  if (::sigaction(SIGXFSZ, nullptr, &old) != 0) return;
  if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) return;  // someone's own
  struct sigaction sa {};
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGXFSZ, &sa, nullptr);
}

std::string write_advice(int err, uint64_t bytes) {
  switch (err) {
    case EFBIG: {
      struct rlimit lim {};
      if (::getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
          bytes >= lim.rlim_cur)
        return fmt::format(
            "the file reached this process's file-size limit of {} (ulimit -f): raise the limit "
            "(ulimit -f unlimited) or write less",
            size_text(lim.rlim_cur));
      return "the file reached the largest size its filesystem allows: give --out a folder on "
             "another filesystem, or write less";
    }
    case ENOSPC:
      return "free space on that disk, or give --out a folder on another disk";
#ifdef EDQUOT
    case EDQUOT:
      return "free space within the quota, or give --out a folder on another disk";
#endif
    case EROFS:
      return "give --out a folder on a filesystem that can be written";
    case EACCES:
    case EPERM:
      return "give --out a folder you can write";
    case EIO:
      return "the disk may be failing or gone: check it, or give --out a folder on another disk";
    default:
      return "check the disk and the folder, or give --out another folder";
  }
}

std::string write_failure(const std::string& label, uint64_t bytes, int err) {
  return fmt::format("{}: write failed after {} bytes: {}: {}; nothing this command wrote was kept",
                     label, bytes, std::strerror(err), write_advice(err, bytes));
}

FileSink::FileSink(std::string path, std::string label)
    : m_path(std::move(path)), m_label(std::move(label)), m_buf(k_buffer_bytes) {
  m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (m_fd < 0) {
    const int err = errno;
    throw WriteError(fmt::format("{}: cannot create a file in its folder: {}: {}", m_label,
                                 std::strerror(err), write_advice(err, 0)));
  }
  setp(m_buf.data(), m_buf.data() + m_buf.size());
}

FileSink::FileSink(int fd, std::string label)
    : m_path(), m_label(std::move(label)), m_fd(fd), m_buf(k_buffer_bytes) {
  setp(m_buf.data(), m_buf.data() + m_buf.size());
}

FileSink::~FileSink() {
  if (m_fd >= 0) ::close(m_fd);
}

void FileSink::fail(int err) {
  if (m_error == 0) m_error = err;
  setp(m_buf.data(), m_buf.data() + m_buf.size());  // drop what cannot be written
  throw WriteError(write_failure(m_label, m_written, m_error));
}

void FileSink::check() const {
  if (m_error != 0) throw WriteError(write_failure(m_label, m_written, m_error));
}

void FileSink::drain(const char* p, size_t n) {
  if (m_error != 0) fail(m_error);
  if (m_fd < 0) fail(EBADF);
  while (n > 0) {
    const ssize_t w = ::write(m_fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    if (w == 0) fail(EIO);  // a regular file never takes nothing without an error
    m_written += static_cast<uint64_t>(w);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void FileSink::flush_buffer() {
  const size_t n = static_cast<size_t>(pptr() - pbase());
  setp(m_buf.data(), m_buf.data() + m_buf.size());
  if (n > 0) drain(m_buf.data(), n);
}

FileSink::int_type FileSink::overflow(int_type c) {
  flush_buffer();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize FileSink::xsputn(const char* s, std::streamsize n) {
  const auto count = static_cast<size_t>(n);
  if (count <= static_cast<size_t>(epptr() - pptr())) {
    std::memcpy(pptr(), s, count);
    pbump(static_cast<int>(count));
    return n;
  }
  flush_buffer();
  if (count >= m_buf.size()) {
    drain(s, count);  // a large block goes straight to the file
  } else {
    std::memcpy(pptr(), s, count);
    pbump(static_cast<int>(count));
  }
  return n;
}

int FileSink::sync() {
  flush_buffer();
  return 0;
}

void FileSink::close() {
  check();  // a write that failed earlier fails the close too, even with nothing left to write
  if (m_fd < 0) return;
  flush_buffer();
  const int fd = m_fd;
  m_fd = -1;
  if (::close(fd) != 0 && errno != EINTR) fail(errno);  // EINTR: the file is closed all the same
}

std::unique_ptr<std::ostream> make_output_stream(FileSink& sink) {
  auto out = std::make_unique<std::ostream>(&sink);
  out->exceptions(std::ios::badbit);
  return out;
}

}  // namespace servesim
