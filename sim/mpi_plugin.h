/* The MPI plugin's interface (sim/mpi_plugin.c, built as libservesim_mpi.so when CMake finds
 * MPI). The servesim executable does not link MPI: Open MPI's libraries (seven shared objects,
 * about a third of the process's start-up) are loaded only by a run or a sweep that an MPI
 * launcher started, through sim/mpi_library.h. Plain C, so that the plugin needs no C++ runtime
 * of its own; every function returns 0 on success and MPI's error code otherwise. */
#ifndef SERVESIM_SIM_MPI_PLUGIN_H
#define SERVESIM_SIM_MPI_PLUGIN_H

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the table below changes; the loader refuses a plugin of another version. */
#define SERVESIM_MPI_PLUGIN_VERSION 1

struct servesim_mpi_api {
  int version; /* SERVESIM_MPI_PLUGIN_VERSION */
  /* MPI_Init unless MPI is initialised already (*initialized_here says which), then this
   * process's rank and the world's size. */
  int (*init)(int* initialized_here, int* rank, int* size);
  int (*finalize)(void);
  /* One int from every rank, in rank order, into all[0..size) on every rank (MPI_Allgather). */
  int (*allgather_int)(int mine, int* all);
  /* One int from every rank into all[0..size) on rank `root` (MPI_Gather). */
  int (*gather_int)(int mine, int* all, int root);
  /* Rank r's `len` bytes at all + at[r] on every rank (MPI_Allgatherv of MPI_CHAR). */
  int (*allgatherv_bytes)(const char* mine, int len, char* all, const int* lens, const int* at);
  /* The same on rank `root` only (MPI_Gatherv). */
  int (*gatherv_bytes)(const char* mine, int len, char* all, const int* lens, const int* at,
                       int root);
  /* Ends every rank of the launch with `code` (MPI_Abort). */
  void (*abort_all)(int code);
};

/* The plugin's one exported symbol. */
const struct servesim_mpi_api* servesim_mpi_plugin(void);

#ifdef __cplusplus
}
#endif

#endif
