#include "core/heap_warmer.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace servesim {
namespace {

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14's value, for older headers
#endif

/// The heap's first address ("[heap]" in /proc/self/maps), 0 when there is none.
uintptr_t heap_start() {
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (!f) return 0;
  uintptr_t start = 0;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    if (!std::strstr(line, "[heap]")) continue;
    unsigned long a = 0, b = 0;
    if (std::sscanf(line, "%lx-%lx", &a, &b) == 2) start = a;
    break;
  }
  std::fclose(f);
  return start;
}

}  // namespace

void HeapWarmer::warm() {
  if (m_off) return;
  if (m_done == 0) {
    m_done = heap_start();
    if (m_done == 0) {
      m_off = true;
      return;
    }
  }
  const auto brk = static_cast<uintptr_t>(syscall(SYS_brk, 0));
  if (brk <= m_done) {
    m_done = brk;  // the heap shrank: start again from its end
    return;
  }
  if (madvise(reinterpret_cast<void*>(m_done), brk - m_done, MADV_POPULATE_WRITE) != 0 &&
      errno == EINVAL) {
    m_off = true;  // a kernel without MADV_POPULATE_WRITE
    return;
  }
  m_done = brk;
}

}  // namespace servesim
