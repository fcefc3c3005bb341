// The C interface between zbexec and its MPI module (libzbexec_mpi.so, loaded with dlopen only
// when a run is launched by MPI), so that zbexec itself needs no MPI library to start.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_MPI_ABI_VERSION 2

// Every function returning int returns 0 on success; otherwise it has written a message into
// `error` (at most error_size bytes, terminated). Only plain C types cross: zbexec may be linked
// with a static C++ runtime and the module with the shared one.
typedef struct zb_mpi_api {
  int abi_version;  // ZB_MPI_ABI_VERSION
  // MPI_Init_thread asking for MPI_THREAD_MULTIPLE (an error when the library gives less), and a
  // communicator of zbexec's own (a duplicate of MPI_COMM_WORLD, errors returned, not fatal).
  int (*init)(char* error, size_t error_size);
  int (*rank)(void);
  int (*world)(void);
  // The library's version line, the thread level and this host's name.
  void (*describe)(char* out, size_t out_size);
  // Blocking standard-mode send (MPI_Send of bytes); thread-safe.
  int (*send)(int to_rank, int tag, const void* data, size_t size, char* error, size_t error_size);
  // Sends without ever waiting (MPI_Isend, the request freed): for heartbeats and failure
  // notices, which must not hang behind a receiver that is stopped. The bytes are copied and kept
  // for the life of the process (such messages are few and small).
  int (*post)(int to_rank, int tag, const void* data, size_t size, char* error, size_t error_size);
  // Waits for the next message from any rank (MPI_Improbe, sleeping briefly between polls so that
  // an idle receiver costs little CPU) and tells its sender, tag and size; `message` is then
  // passed to take() once, which receives its bytes (MPI_Mrecv).
  int (*probe)(int* from_rank, int* tag, size_t* size, void** message, char* error, size_t error_size);
  int (*take)(void* message, void* data, size_t size, char* error, size_t error_size);
  void (*finalize)(void);
  // Ends this rank at once without MPI_Finalize, so that the launcher ends every rank of the job
  // (see mpi_module.cpp for why not MPI_Abort); does not return.
  void (*abort_all)(int code);
} zb_mpi_api;

// The module's one exported symbol.
const zb_mpi_api* zb_mpi_module(void);

#ifdef __cplusplus
}
#endif
