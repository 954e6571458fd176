#include "core/input_file.h"

#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <fstream>
#include <streambuf>

#include "core/errors.h"

namespace servesim {
namespace fs = std::filesystem;

namespace {

bool is_gz(const fs::path& p) { return p.extension() == ".gz"; }

/// Decompressed bytes of a gzip file, read a buffer at a time (zlib's own input buffer is set
/// large too: the tables are read whole, once a run).
class GzBuf final : public std::streambuf {
 public:
  explicit GzBuf(const fs::path& path) : m_name(path.string()) {
    m_file = gzopen(m_name.c_str(), "rb");
    if (m_file == nullptr) throw InputError(fmt::format("{}: cannot open file", m_name));
    gzbuffer(m_file, k_buffer_bytes);
  }
  GzBuf(const GzBuf&) = delete;
  GzBuf& operator=(const GzBuf&) = delete;
  ~GzBuf() override { gzclose(m_file); }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int n = gzread(m_file, m_buffer.data(), static_cast<unsigned>(m_buffer.size()));
    if (n < 0 || (n == 0 && !gzeof(m_file))) fail();
    // gzread copies a file that is not gzip data as it is: a ".gz" file must be gzip data.
    if (!m_checked) {
      m_checked = true;
      if (gzdirect(m_file))
        throw InputError(
            fmt::format("{}: is not gzip data (a .gz file must be gzip-compressed; "
                        "store the plain file without .gz)",
                        m_name));
    }
    if (n == 0) {
      // zlib reports a file cut short (Z_BUF_ERROR, "unexpected end of file") only through
      // gzerror, and lets reads go on after it: the end is checked here.
      int code = Z_OK;
      (void)gzerror(m_file, &code);
      if (code != Z_OK) fail();
      return traits_type::eof();
    }
    setg(m_buffer.data(), m_buffer.data(), m_buffer.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  [[noreturn]] void fail() const {
    int code = Z_OK;
    const char* msg = gzerror(m_file, &code);
    throw InputError(
        fmt::format("{}: corrupt gzip data ({}); restore the file from the "
                    "repository or gzip it again with gzip -9 -n",
                    m_name, msg != nullptr && *msg != 0 ? msg : "read error"));
  }

  static constexpr unsigned k_buffer_bytes = 1u << 17;
  std::string m_name;
  gzFile m_file = nullptr;
  std::array<char, k_buffer_bytes> m_buffer{};
  bool m_checked = false;
};

/// An istream that owns its GzBuf.
class GzStream final : public std::istream {
 public:
  explicit GzStream(const fs::path& path) : std::istream(nullptr), m_buf(path) {
    rdbuf(&m_buf);
    exceptions(std::ios::badbit);  // a corrupt file's InputError reaches the reader
  }

 private:
  GzBuf m_buf;
};

}  // namespace

std::optional<fs::path> find_input(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  fs::path gz = path;
  gz += ".gz";
  if (fs::is_regular_file(gz, ec)) return gz;
  return std::nullopt;
}

bool input_exists(const fs::path& path) { return find_input(path).has_value(); }

std::unique_ptr<std::istream> open_input(const fs::path& path) {
  const std::optional<fs::path> found = find_input(path);
  if (!found) {
    std::error_code ec;
    if (fs::exists(path, ec))
      throw InputError(fmt::format("{}: not a regular file", path.string()));
    throw InputError(is_gz(path) ? fmt::format("{}: no such file", path.string())
                                 : fmt::format("{}: no such file (nor {}.gz)", path.string(),
                                               path.filename().string()));
  }
  if (is_gz(*found)) return std::make_unique<GzStream>(*found);
  auto in = std::make_unique<std::ifstream>(*found, std::ios::binary);
  if (!*in) throw InputError(fmt::format("{}: cannot open file", found->string()));
  return in;
}

std::string read_input(const fs::path& path) {
  // istream::read, not `<< rdbuf()`: an ostream would swallow a corrupt file's InputError.
  const std::unique_ptr<std::istream> in = open_input(path);
  std::string out;
  std::array<char, 1 << 16> buf{};
  while (in->read(buf.data(), buf.size()) || in->gcount() > 0)
    out.append(buf.data(), static_cast<size_t>(in->gcount()));
  return out;
}

}  // namespace servesim
