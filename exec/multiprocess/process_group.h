// The processes of one multi-process run (one pipeline device each) over a transport (MPI).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "exec/runtime/transport.h"
#include "sim/support/error.h"

namespace zb::exec {

// The longest timeout a group takes (about 11.5 days): a clock's nanoseconds hold far more, and
// anything longer is a mistake (1e300 s would overflow a deadline into the past).
inline constexpr double kLongestTimeoutS = 1e6;

struct GroupOptions {
  // Every rank sends rank 0 a heartbeat every second, and rank 0 sends one to every rank; a rank
  // not heard from for this long (stopped, hung in the kernel, its node unreachable: nothing the
  // MPI library reports) fails the group on every rank, naming it. 0: off.
  double silence_timeout_s = 60;
  // How long a setup message (agreement, barrier, NCCL id) is waited for.
  double setup_timeout_s = 300;  // at most kLongestTimeoutS
  // A rank whose group has failed but which has not ended this many seconds later (a device
  // thread blocked in a send to a stopped rank never returns) prints the failure and exits at
  // once (Transport::abort_all); the launcher ends the others. 0: never (the tests' threads).
  double exit_after_failure_s = 0;
};

// What the executor needs from the processes of a run, on any Transport: the ranks' shared clock,
// frames to any rank (sent straight to it), a setup mailbox, barrier, agreement on the run, a
// heartbeat watchdog, and how failures reach every rank.
//
// The clock: the constructor measures each rank's steady clock against rank 0's by round trips
// over the transport (the best of 16 per rank: within half that round trip; a few microseconds on
// one node) and gives every rank one epoch, the same instant on every rank. MPI_Wtime is not used:
// Open MPI's is not global (MPI_WTIME_IS_GLOBAL is false) and nothing would align it.
// agree()'s verdict: ranks started with different flags (an InputError, exit code 2).
class Disagreement : public InputError {
 public:
  using InputError::InputError;
};

class ProcessGroup {
 public:
  // kind < kFirstSetupKind: delivered to the handler; the others are this class's own.
  static constexpr std::uint8_t kFirstSetupKind = 200;
  using Handler = std::function<void(int from_rank, std::uint8_t kind, std::vector<std::byte> body)>;
  using FailureHandler = std::function<void(const std::string& reason)>;

  // Collective: every rank constructs its group at the same time (the clock alignment).
  ProcessGroup(std::unique_ptr<Transport> transport, const GroupOptions& options = {});
  // Without finish(): stops the threads; the transport is neither finalised nor aborted.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  std::string describe() const { return transport_->describe(); }
  std::chrono::steady_clock::time_point epoch() const { return epoch_; }
  // Estimated |error| of epoch() against rank 0's (half the best round trip), in microseconds.
  double clock_error_us() const { return clock_error_us_; }

  // Frames that arrived before a handler was set are delivered to it at once, in order. Waits
  // for a call of the previous handlers still in progress, so that their owner may go after
  // set_handler(nullptr, nullptr). A failure of the group (a rank abandoned the run, a rank fell
  // silent) reaches on_failure.
  void set_handler(Handler handler, FailureHandler on_failure);
  // Thread-safe; to another rank, straight. Frames from one rank to another arrive in order.
  void send(int to_rank, std::uint8_t kind, const std::vector<std::byte>& body);

  // Setup messages outside a run (configuration checks, NCCL ids): a blocking mailbox keyed by
  // (sender, key). Throws ExecError after the setup timeout or when the group failed. Keys in
  // use: bit 63 set: NCCL ids of the CUDA fabric's channels; bit 62: ProcessFabric's run
  // barriers; bit 61: agree(); ~0: finish().
  void send_setup(int to_rank, std::uint64_t key, const std::vector<std::byte>& body);
  std::vector<std::byte> recv_setup(int from_rank, std::uint64_t key);
  // Every rank reaches it before any leaves. `key` tells barriers apart.
  void barrier(std::uint64_t key);

  // Every rank passes its own account of the run (flags, schedule); rank 0 compares them with
  // its own. Throws InputError on every rank when one differs, naming that rank and the first line
  // that differs: ranks launched with different flags would otherwise compute different things.
  // The error is a Disagreement: every rank has it from rank 0 itself, so none needs telling.
  void agree(const std::string& account);

  // Leaving because of a failure (reason: what went wrong here): every other rank's group fails
  // with "rank R: reason". When this rank has already heard of a failure, that first cause is
  // what every rank reports: this one tells no one.
  void abandon(const std::string& reason);

  // The orderly end: a barrier, the threads stop, the transport is finalised.
  void finish();

  // The end after a failure on this rank (or heard from another): tells the others (abandon),
  // then waits up to `grace_s` for every other rank to be leaving too. If they all are, the
  // transport is finalised and this returns; if one is not (it is stopped, or busy and not
  // listening), this rank exits with status `code` at once (Transport::abort_all) and the
  // launcher ends the others.
  // A Disagreement is known to every rank already: leaving on it tells no one, so no rank hears
  // a peer's notice before rank 0's verdict and reports it as that peer's failure.
  void leave(int code, const std::exception& why, double grace_s = 3);

 private:
  void align_clocks();
  void start_threads();
  void stop_threads(bool finalize);
  void receive_loop();
  std::chrono::milliseconds period() const;
  void beat();   // the heartbeat thread: heartbeats and failure notices (MPI calls)
  void watch();  // the watchdog thread: silences and the exit deadline (no MPI calls)
  void tell_others(const std::string& reason);
  void deliver(int from_rank, std::uint8_t kind, std::vector<std::byte> body);
  void fail(const std::string& reason, bool tell_others);
  void send_raw(int to_rank, std::uint8_t kind, const std::vector<std::byte>& body);

  std::unique_ptr<Transport> transport_;
  GroupOptions options_;
  int rank_ = 0;
  int world_ = 1;
  std::chrono::steady_clock::time_point epoch_;
  double clock_error_us_ = 0;
  std::vector<TransportMessage> early_;  // arrived while this rank was aligning its clock
  std::thread receiver_;
  std::thread heartbeat_;
  std::thread watchdog_;
  bool finished_ = false;

  std::mutex heartbeat_mutex_;
  bool heartbeats_off_ = false;  // under heartbeat_mutex_: this rank has sent its last message

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_beat_ = false;
  bool stop_watch_ = false;
  std::vector<std::int64_t> last_heard_ns_;  // per rank: any message counts
  std::vector<bool> done_;                   // per rank: reached the end (no more heartbeats)
  std::vector<bool> leaving_;                // per rank: leaving after a failure
  Handler handler_;
  FailureHandler on_failure_;
  std::vector<std::tuple<int, std::uint8_t, std::vector<std::byte>>> pending_;  // before a handler
  std::map<std::pair<int, std::uint64_t>, std::vector<std::byte>> setup_;
  std::optional<std::string> failure_;
  std::int64_t failure_at_ns_ = 0;
  std::optional<std::string> to_tell_;  // a failure the heartbeat thread is to tell the others
  bool failing_ = false;  // fail() is passing the failure on; failure_ is set after
  std::uint64_t agreements_ = 0;
  int callbacks_running_ = 0;  // handler or failure handler calls in progress (outside the lock)
};

}  // namespace zb::exec
