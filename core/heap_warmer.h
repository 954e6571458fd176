#pragma once
// Page faults taken for the engine's thread by a helper thread (core/side_thread.h). Every page
// of memory a process touches for the first time is a fault, 3-5 us each on the benchmark
// machine, and a run's heap grows for its whole length (requests' slots, the latency sketches'
// values, the output batches): the Vidur benchmark's engine thread took about 600 such faults
// in the heap. A HeapWarmer, called now and then from a helper thread, asks the kernel to
// populate the heap's pages up to the current program break (madvise MADV_POPULATE_WRITE, Linux
// 5.14 and later: the pages' contents are left as they are, so it is safe beside the thread
// that uses them), so that the engine's thread finds them present. The pages are those malloc
// has taken from the system already (its top pad included, up to 4 MiB more than in use:
// cli/main.cpp), so the resident memory can grow by that much.
#include <cstdint>

namespace servesim {

class HeapWarmer {
 public:
  /// Populates the heap's pages from where the last call stopped to the program break. Cheap
  /// when the break has not moved (one system call). Does nothing where the system cannot
  /// (an older kernel: it stops trying).
  void warm();

 private:
  uintptr_t m_done = 0;  ///< populated up to here; 0 before the first call
  bool m_off = false;
};

}  // namespace servesim
