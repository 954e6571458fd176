#include <malloc.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "core/file_sink.h"

namespace {
// The one global: a signal handler can only reach static storage. Commands poll it
// (core/interrupt.h); it holds the number of the first signal.
volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_signal(int signal) {
  if (g_interrupted != 0) {  // a second signal: stop at once, the default way
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_interrupted = signal;
}

/// SIGINT, SIGTERM and SIGHUP stop a command cleanly (docs/errors.md#signals). A signal ignored
/// when servesim starts stays ignored: `nohup servesim run ...` must survive its terminal.
void install_handlers() {
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(s, &sa, nullptr);
  }
}
}  // namespace

int main(int argc, char** argv) {
  // The heap grows 4 MiB past each request instead of glibc's 128 KiB (and is no longer handed
  // back to the kernel at every free at its top): a run touches memory it frees and takes again
  // (growing vectors, the per-run buffers), and each page the kernel must give anew is a fault,
  // about 3 us on the benchmark machine. The Azure benchmark's faults 1,186 -> 1,045, Vidur's
  // 1,492 -> 1,328 (docs/performance.md, branch mpi49). Memory is only used as it is touched.
  mallopt(M_TOP_PAD, 4 << 20);
  // Diagnostics go to stderr; results go to files and the summary to stdout.
  spdlog::set_default_logger(spdlog::stderr_color_mt("servesim"));
  spdlog::set_level(spdlog::level::warn);
  if (const char* lvl = std::getenv("SERVESIM_LOG"))
    spdlog::set_level(spdlog::level::from_str(lvl));
  std::vector<std::string> args(argv + 1, argv + argc);
  install_handlers();
  // Past `ulimit -f` a write fails with EFBIG and is reported, instead of SIGXFSZ killing the
  // process without a word (docs/errors.md#a-full-disk-or-a-file-size-limit).
  servesim::ignore_file_size_signal();
  int status = servesim::run_cli(args, std::cout, std::cerr, &g_interrupted);
  // What was printed must have reached stdout too: a redirection to a full disk or past the
  // file-size limit would otherwise end with status 0 and a cut-off output.
  std::cout.flush();
  const bool cut = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (cut && status == 0) {
    std::cerr << "servesim: error: writing the standard output failed (a full disk or the "
                 "file-size limit, ulimit -f, where it is redirected to a file?); what it holds "
                 "is incomplete\n";
    status = 2;
  }
  return status;
}
