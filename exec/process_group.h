// The processes of one multi-process run (one pipeline device each) and the wire between them.
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
#include <vector>

namespace zb::exec {

// Who this process is and where the others are found: rank 0 writes its address (and a token
// for this run) into `file`, which every rank can read (a shared file system across nodes).
struct Rendezvous {
  int rank = 0;
  int world = 1;
  std::string file;
  double timeout_s = 300;  // joining: how long to wait for the file and for every rank
  // After joining, ranks exchange a heartbeat every second; a rank not heard from for this long
  // (stopped, or its node unreachable: TCP alone may never notice) fails the group. 0: off.
  double silence_timeout_s = 60;
};

// Fills rank and world from the flags, or else from the launcher's environment (Slurm's
// SLURM_PROCID/SLURM_NTASKS, Open MPI's OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE). Throws
// InputError naming the flag when neither gives a value, or when rank is outside [0, world).
Rendezvous resolve_rendezvous(std::optional<int> rank, std::optional<int> world, std::string file);

// Ordered frames between any two ranks over TCP. Rank 0 accepts one connection from every other
// rank and forwards frames between them (a star: few connections, and per sender-receiver pair
// the order is kept). Joining also aligns the clocks: epoch() is one instant on every rank, as
// measured by the lowest-latency of several round trips to rank 0 (within tens of microseconds on
// one node; across nodes, within half the best round trip).
class ProcessGroup {
 public:
  // kind < kFirstSetupKind: delivered to the handler; the setup kinds are this class's own.
  static constexpr std::uint8_t kFirstSetupKind = 200;
  using Handler = std::function<void(int from_rank, std::uint8_t kind, std::vector<std::byte> body)>;
  using FailureHandler = std::function<void(const std::string& reason)>;

  // Blocks until every rank has joined (or throws ExecError after rendezvous.timeout_s, naming
  // the ranks still missing; InputError when the file is unusable).
  static std::unique_ptr<ProcessGroup> join(const Rendezvous& rendezvous);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  std::chrono::steady_clock::time_point epoch() const { return epoch_; }
  // Estimated |error| of epoch() against rank 0's (half the best round trip), in microseconds.
  double clock_error_us() const { return clock_error_us_; }

  // Frames that arrived before a handler was set are delivered to it at once, in order. Waits
  // for a call of the previous handlers still in progress, so that their owner may go after
  // set_handler(nullptr, nullptr). A failure of the group (a rank vanished or abandoned the run)
  // reaches on_failure on every rank: rank 0 relays it.
  void set_handler(Handler handler, FailureHandler on_failure);
  // Thread-safe; never waits for the receiver. Sending to one's own rank is refused.
  void send(int to_rank, std::uint8_t kind, const std::vector<std::byte>& body);

  // Setup messages outside a run (configuration checks, NCCL ids): a blocking mailbox keyed by
  // (sender, key). Throws ExecError after the join timeout or when a rank failed. Keys in use:
  // bit 63 set: NCCL ids of the CUDA fabric's channels; bit 62: ProcessFabric's run barriers;
  // bit 61: agree(); ~0: finish().
  void send_setup(int to_rank, std::uint64_t key, const std::vector<std::byte>& body);
  std::vector<std::byte> recv_setup(int from_rank, std::uint64_t key);
  // Every rank reaches it before any leaves. `key` tells barriers apart.
  void barrier(std::uint64_t key);

  // Every rank passes its own account of the run (flags, schedule); rank 0 compares them with
  // its own. Throws InputError on every rank when one differs, naming that rank and the first line
  // that differs: ranks launched with different flags would otherwise compute different things.
  void agree(const std::string& account);

  // Leaving because of a failure (reason: what went wrong here): every other rank's group fails
  // with "rank R: reason" instead of only noticing, later, that this rank has gone.
  void abandon(const std::string& reason);

  // The orderly end: a barrier, then the connections close. Without it, a rank that disappears
  // is reported to the others as a failure.
  void finish();

 private:
  ProcessGroup(int rank, int world, double timeout_s);
  struct Connection;

  void accept_ranks(const Rendezvous& rendezvous, std::chrono::steady_clock::time_point deadline);
  void connect_to_rank0(const Rendezvous& rendezvous, std::chrono::steady_clock::time_point deadline);
  void start_readers();
  void watch(double silence_timeout_s);  // the heartbeat thread's loop
  void stop_heartbeat();
  void remove_file();
  void read_loop(Connection& connection);
  void deliver(int from_rank, std::uint8_t kind, std::vector<std::byte> body);
  void fail(const std::string& reason);
  Connection& route_to(int rank);
  void write_frame(Connection& connection, int from_rank, int to_rank, std::uint8_t kind,
                   const std::vector<std::byte>& body);

  int rank_ = 0;
  int world_ = 1;
  std::string file_;  // rank 0 removes it at the end, so that no later run reads a stale address
  std::uint64_t token_ = 0;
  double timeout_s_ = 300;
  std::chrono::steady_clock::time_point epoch_;
  double clock_error_us_ = 0;
  // Rank 0: one connection per other rank (index = rank); others: one, to rank 0 (index 0).
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<std::thread> readers_;
  std::thread heartbeat_;
  bool stop_heartbeat_ = false;  // under mutex_

  std::mutex mutex_;
  std::condition_variable changed_;
  Handler handler_;
  FailureHandler on_failure_;
  std::vector<std::tuple<int, std::uint8_t, std::vector<std::byte>>> pending_;  // before a handler
  std::map<std::pair<int, std::uint64_t>, std::vector<std::byte>> setup_;
  std::vector<bool> said_goodbye_;
  bool finishing_ = false;
  std::optional<std::string> failure_;
  bool failing_ = false;  // fail() is passing the failure on; failure_ is set after
  std::uint64_t agreements_ = 0;
  int callbacks_running_ = 0;  // handler or failure handler calls in progress (outside the lock)
};

}  // namespace zb::exec
