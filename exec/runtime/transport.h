// The wire of a multi-process run: ordered messages between ranks (MPI in zbexec, threads in tests).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace zb::exec {

struct TransportMessage {
  int from = 0;
  int tag = 0;  // 0 .. kMaxTag
  std::vector<std::byte> body;
};

// Point-to-point messages, sent straight to their receiver (no relay). Messages from one sender
// to one receiver arrive in the order they were sent (MPI's non-overtaking rule). The process
// group (exec/multiprocess/process_group.h) builds everything else on it: clocks, heartbeats, agreement.
class Transport {
 public:
  static constexpr int kMaxTag = 32767;  // the least MPI_TAG_UB an MPI library may have

  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int world() const = 0;
  // One line for the start-up message: the library and how it was initialised.
  virtual std::string describe() const = 0;

  // Thread-safe (MPI_THREAD_MULTIPLE); returns once `body` may be reused. To one's own rank too.
  // Throws ExecError when the library reports an error.
  virtual void send(int to_rank, int tag, std::span<const std::byte> body) = 0;
  // Like send, but never waits, not even for a receiver that is stopped (heartbeats, failure
  // notices, the last words of a failed run); small bodies only.
  virtual void post(int to_rank, int tag, std::span<const std::byte> body) = 0;
  // The next message for this rank from any rank, waiting as long as it takes. Called by one
  // thread at a time (the group's receiver).
  virtual TransportMessage receive() = 0;

  // The orderly end, once every rank has stopped sending (MPI_Finalize). No call after it.
  virtual void finalize() = 0;
  // Ends this rank now with exit status `code`, in a way that makes the launcher end every rank
  // (MPI: exit without MPI_Finalize); does not return.
  [[noreturn]] virtual void abort_all(int code) = 0;
};

}  // namespace zb::exec
