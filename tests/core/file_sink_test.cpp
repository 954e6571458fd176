// The one writer of outputs (core/file_sink.h) against a full disk (/dev/full: ENOSPC) and a
// file-size limit (RLIMIT_FSIZE, set in a forked child so the test process keeps its own): the
// write stops at once with the file, the bytes written, the system's reason and what to do, and
// nothing that looks complete is left (docs/errors.md#a-full-disk-or-a-file-size-limit).
#include "core/file_sink.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>

#include "core/output_file.h"
#include "tests/support.h"

namespace t_core_file_sink_test {

using namespace servesim;
using namespace servesim::test;
namespace fs = std::filesystem;

namespace {

struct Child {
  std::string text;  ///< what the child's body returned
  int status = 0;    ///< its wait status
};

/// Runs `body` in a forked child whose file-size limit is `limit_bytes` and, when
/// `ignore_signal`, whose SIGXFSZ is ignored as main() does; the child returns its text through
/// a pipe. A child killed by SIGXFSZ returns nothing and a signalled status.
Child under_file_limit(rlim_t limit_bytes, bool ignore_signal,
                       const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    const struct rlimit lim { limit_bytes, limit_bytes };
    ::setrlimit(RLIMIT_FSIZE, &lim);
    ::signal(SIGXFSZ, SIG_DFL);
    if (ignore_signal) ignore_file_size_signal();
    std::string text;
    try {
      text = body();
    } catch (const std::exception& e) {
      text = std::string("exception: ") + e.what();
    }
    for (size_t at = 0; at < text.size();) {
      const ssize_t w = ::write(fds[1], text.data() + at, text.size() - at);
      if (w <= 0) break;
      at += static_cast<size_t>(w);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  Child c;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) c.text.append(buf, buf + n);
  ::close(fds[0]);
  ::waitpid(pid, &c.status, 0);
  return c;
}

/// Names in `dir`, sorted, each followed by a space; "" when it does not exist.
std::string listing(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.insert(it->path().filename().string());
  std::string out;
  for (const std::string& n : names) out += n + " ";
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("file_sink: a full disk stops the write with the file, the bytes and what to do",
          "[core][file_sink]") {
  const std::unique_ptr<FileSink> full = test::full_disk_sink("--out o/requests.csv");
  if (!full) {
    WARN("no /dev/full here: skipped");
    return;
  }
  FileSink& sink = *full;
  const auto out = make_output_stream(sink);
  *out << "id,arrival_s\n";  // buffered: nothing has reached the disk yet
  CHECK(sink.bytes_written() == 0);
  CHECK_THROWS_WITH(out->flush(),
                    "--out o/requests.csv: write failed after 0 bytes: No space left on device: "
                    "free space on that disk, or give --out a folder on another disk; "
                    "nothing this command wrote was kept");
  // The error stays: a later write or the close reports it again, never a silent success.
  CHECK_THROWS_AS(sink.close(), WriteError);
  CHECK_THROWS_AS(sink.check(), WriteError);
}

TEST_CASE("file_sink: a block larger than the buffer goes straight through, counted",
          "[core][file_sink]") {
  const fs::path dir = temp_dir();
  {
    OutputFile f((dir / "big.csv").string(), "--out");
    const std::string block(200'000, 'x');
    f.stream() << "a" << block << 'b';
    f.commit();
  }
  CHECK(fs::file_size(dir / "big.csv") == 200'002);
  CHECK(listing(dir) == "big.csv ");
}

TEST_CASE("file_sink: past the file-size limit the write fails with EFBIG, named, not SIGXFSZ",
          "[core][file_sink]") {
  const fs::path dir = temp_dir();
  const std::string target = (dir / "t" / "trace.csv").string();
  const Child c = under_file_limit(4096, true, [&] {
    OutputFile f(target, "--out");
    f.stream() << std::string(10'000, 'x');  // past 4 KiB: the first buffer's write fails
    f.commit();
    return std::string("committed");
  });
  REQUIRE(WIFEXITED(c.status));
  CHECK(c.text == "exception: --out " + target +
                      ": write failed after 4096 bytes: File too large: the file reached this "
                      "process's file-size limit of 4 KiB (ulimit -f): raise the limit (ulimit -f "
                      "unlimited) or write less; nothing this command wrote was kept");
  CHECK(listing(dir) == "");  // no file, no temporary, not even the folder it made
}

TEST_CASE("file_sink: without SIGXFSZ ignored the limit kills the process, as servesim once died",
          "[core][file_sink]") {
  // The behaviour ignore_file_size_signal() exists to prevent: exit 153 (128 + SIGXFSZ) with no
  // message at all.
  const fs::path dir = temp_dir();
  const Child c = under_file_limit(4096, false, [&] {
    OutputFile f((dir / "trace.csv").string(), "--out");
    f.stream() << std::string(10'000, 'x');
    f.commit();
    return std::string("committed");
  });
  REQUIRE(WIFSIGNALED(c.status));
  CHECK(WTERMSIG(c.status) == SIGXFSZ);
}

TEST_CASE("file_sink: a run past the file-size limit exits 2 and keeps no result",
          "[core][file_sink]") {
  const fs::path dir = temp_dir();
  const std::string config = write_temp("c.yaml", R"(workload:
  synthetic:
    requests: 2000
    arrival: {kind: fixed, rate_per_s: 100}
    prompt_tokens: {kind: fixed, value: 10}
    output_tokens: {kind: fixed, value: 3}
step_time: {kind: linear, base_ms: 1}
scheduler: {kind: continuous, max_num_seqs: 4}
kv: {policy: paged, capacity_tokens: 1000}
)");
  // An earlier complete set in one folder, none in the other.
  REQUIRE(cli({"run", config, "--out", (dir / "old").string(), "-q"}).code == 0);
  const std::string old_summary = read_file(dir / "old" / "summary.json");
  const Child c = under_file_limit(32768, true, [&] {
    std::string text;
    for (const char* out : {"new", "old"}) {
      const CliResult r = cli({"run", config, "--out", (dir / out).string(), "-q"});
      text += std::to_string(r.code) + " " + r.err;
    }
    return text;
  });
  REQUIRE(WIFEXITED(c.status));
  const std::string expected =
      ": write failed after 32768 bytes: File too large: the file reached this process's "
      "file-size limit of 32 KiB (ulimit -f): raise the limit (ulimit -f unlimited) or write "
      "less; nothing this command wrote was kept\n";
  CHECK(c.text == "2 servesim: error: --out " + (dir / "new" / "requests.csv").string() + expected +
                      "2 servesim: error: --out " + (dir / "old" / "requests.csv").string() +
                      expected);
  CHECK_FALSE(fs::exists(dir / "new"));
  CHECK(listing(dir / "old") == "requests.csv summary.json ");  // the earlier set, untouched
  CHECK(read_file(dir / "old" / "summary.json") == old_summary);
}

}  // namespace t_core_file_sink_test
