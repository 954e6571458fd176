/* The MPI plugin (sim/mpi_plugin.h): MPI's C functions behind a table, in a shared object of
 * its own that links MPI, loaded by sim/mpi_library.cpp only when an MPI launcher started the
 * process. */
#include "sim/mpi_plugin.h"

#include <mpi.h>
#include <stdlib.h>

static int init(int* initialized_here, int* rank, int* size) {
  int already = 0;
  int rc = MPI_Initialized(&already);
  if (rc != MPI_SUCCESS) return rc;
  *initialized_here = 0;
  if (!already) {
    rc = MPI_Init(NULL, NULL);
    if (rc != MPI_SUCCESS) return rc;
    *initialized_here = 1;
  }
  rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Comm_size(MPI_COMM_WORLD, size);
}

static int finalize(void) { return MPI_Finalize(); }

static int allgather_int(int mine, int* all) {
  return MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
}

static int gather_int(int mine, int* all, int root) {
  return MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD);
}

static int allgatherv_bytes(const char* mine, int len, char* all, const int* lens, const int* at) {
  return MPI_Allgatherv(mine, len, MPI_CHAR, all, lens, at, MPI_CHAR, MPI_COMM_WORLD);
}

static int gatherv_bytes(const char* mine, int len, char* all, const int* lens, const int* at,
                         int root) {
  return MPI_Gatherv(mine, len, MPI_CHAR, all, lens, at, MPI_CHAR, root, MPI_COMM_WORLD);
}

static void abort_all(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  abort();
}

static const struct servesim_mpi_api k_api = {SERVESIM_MPI_PLUGIN_VERSION,
                                              init,
                                              finalize,
                                              allgather_int,
                                              gather_int,
                                              allgatherv_bytes,
                                              gatherv_bytes,
                                              abort_all};

__attribute__((visibility("default"))) const struct servesim_mpi_api* servesim_mpi_plugin(void) {
  return &k_api;
}
