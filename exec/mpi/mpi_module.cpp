// libzbexec_mpi.so: the MPI calls of multi-process runs behind a small C interface (see
// mpi_module_abi.h). The only code of zbsim that links an MPI library.
// Plain C library calls only (no C++ runtime), so the module loads wherever libmpi does.
#include <mpi.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "exec/mpi/mpi_module_abi.h"

namespace {

MPI_Comm g_comm = MPI_COMM_NULL;
int g_rank = 0;
int g_world = 1;
int g_provided = MPI_THREAD_SINGLE;

void put(char* out, size_t size, const char* text) {
  if (size == 0) return;
  std::snprintf(out, size, "%s", text);
}

// 0, or the library's words for `code` written into `error`.
int check(int code, const char* what, char* error, size_t error_size) {
  if (code == MPI_SUCCESS) return 0;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  char message[MPI_MAX_ERROR_STRING + 128];
  std::snprintf(message, sizeof message, "%s: %s", what, text);
  put(error, error_size, message);
  return code;
}

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown thread level";
  }
}

int init(char* error, size_t error_size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    put(error, error_size, "MPI is initialised already");
    return 1;
  }
  if (check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &g_provided), "MPI_Init_thread", error,
            error_size) != 0) {
    return 1;
  }
  if (g_provided < MPI_THREAD_MULTIPLE) {
    char message[256];
    std::snprintf(message, sizeof message,
                  "the MPI library gives %s, but zbexec's device threads send concurrently and need "
                  "MPI_THREAD_MULTIPLE (an MPI built with thread support)", level_name(g_provided));
    put(error, error_size, message);
    MPI_Finalize();
    return 1;
  }
  if (check(MPI_Comm_dup(MPI_COMM_WORLD, &g_comm), "MPI_Comm_dup", error, error_size) != 0) return 1;
  MPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(g_comm, &g_rank);
  MPI_Comm_size(g_comm, &g_world);
  return 0;
}

int rank() { return g_rank; }
int world() { return g_world; }

void describe(char* out, size_t out_size) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  version[std::strcspn(version, ",\r\n")] = '\0';  // "Open MPI v4.1.4": up to the first comma or line end
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  MPI_Get_processor_name(host, &length);
  char text[MPI_MAX_LIBRARY_VERSION_STRING + MPI_MAX_PROCESSOR_NAME + 64];
  std::snprintf(text, sizeof text, "%s, %s, host %s", version, level_name(g_provided), host);
  put(out, out_size, text);
}

int send(int to_rank, int tag, const void* data, size_t size, char* error, size_t error_size) {
  if (size > static_cast<size_t>(INT_MAX)) {
    put(error, error_size, "MPI_Send: a message over 2 GiB (MPI counts are int)");
    return 1;
  }
  return check(MPI_Send(data, static_cast<int>(size), MPI_BYTE, to_rank, tag, g_comm), "MPI_Send", error,
               error_size);
}

int post(int to_rank, int tag, const void* data, size_t size, char* error, size_t error_size) {
  if (size > static_cast<size_t>(INT_MAX)) {
    put(error, error_size, "MPI_Isend: a message over 2 GiB (MPI counts are int)");
    return 1;
  }
  void* copy = nullptr;
  if (size > 0) {
    copy = std::malloc(size);  // never freed: the request is, and nothing says when it completed
    if (copy == nullptr) {
      put(error, error_size, "out of memory");
      return 1;
    }
    std::memcpy(copy, data, size);
  }
  MPI_Request request = MPI_REQUEST_NULL;
  if (check(MPI_Isend(copy, static_cast<int>(size), MPI_BYTE, to_rank, tag, g_comm, &request), "MPI_Isend",
            error, error_size) != 0) {
    return 1;
  }
  return check(MPI_Request_free(&request), "MPI_Request_free", error, error_size);
}

long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

int probe(int* from_rank, int* tag, size_t* size, void** message, char* error, size_t error_size) {
  const long long idle_since = now_ns();
  while (true) {
    int found = 0;
    MPI_Message handle = MPI_MESSAGE_NULL;
    MPI_Status status;
    if (check(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, g_comm, &found, &handle, &status), "MPI_Improbe",
              error, error_size) != 0) {
      return 1;
    }
    if (found) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      *from_rank = status.MPI_SOURCE;
      *tag = status.MPI_TAG;
      *size = static_cast<size_t>(count);
      auto* kept = static_cast<MPI_Message*>(std::malloc(sizeof(MPI_Message)));
      if (kept == nullptr) {
        put(error, error_size, "out of memory");
        return 1;
      }
      *kept = handle;
      *message = kept;
      return 0;
    }
    // Polling, not a blocking probe (Open MPI's would spin a core): yield for the first 200 us
    // of quiet (messages of a run come in bursts), then sleep 50 us between polls.
    if (now_ns() - idle_since < 200000) {
      sched_yield();
    } else {
      const timespec pause{0, 50000};
      nanosleep(&pause, nullptr);
    }
  }
}

int take(void* message, void* data, size_t size, char* error, size_t error_size) {
  auto* handle = static_cast<MPI_Message*>(message);
  const int code = MPI_Mrecv(data, static_cast<int>(size), MPI_BYTE, handle, MPI_STATUS_IGNORE);
  std::free(handle);
  return check(code, "MPI_Mrecv", error, error_size);
}

void finalize() {
  if (g_comm != MPI_COMM_NULL) MPI_Comm_free(&g_comm);
  MPI_Finalize();
}

void abort_all(int code) {
  // Not MPI_Abort: with a SIGSTOPped rank in the job, Open MPI 4.1.4's mpirun hung in 2 of 6
  // trials while tearing the job down after MPI_Abort. A rank that exits without MPI_Finalize
  // makes the launcher end the whole job (mpirun always; srun with --kill-on-bad-exit=1).
  std::fflush(nullptr);
  _exit(code);
}

const zb_mpi_api kApi = {ZB_MPI_ABI_VERSION, init, rank, world, describe, send, post, probe, take, finalize, abort_all};

}  // namespace

extern "C" __attribute__((visibility("default"))) const zb_mpi_api* zb_mpi_module(void) { return &kApi; }
