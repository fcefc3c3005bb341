// The host fabric: in-process FIFO channels between device threads, with deadlock detection (the CPU
// backend's fabric; the CUDA and process fabrics embed one for their host-side messages).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "exec/runtime/fabric.h"

namespace zb::exec {

// One mutex guards everything: with a handful of devices and one message per action, contention
// is negligible, and a single lock makes "every live worker is waiting" an exact test.
class HostFabric final : public Fabric {
 public:
  // off: when this process's workers all wait, others (other processes) may still send.
  enum class DeadlockDetection { on, off };
  explicit HostFabric(DeadlockDetection detection = DeadlockDetection::on) : detection_(detection) {}

  // Starts a run with `workers` live device threads (clears all channels and any abort).
  void begin_run(int workers);
  // A worker has ended; if all remaining workers wait, that is a deadlock.
  void worker_ended();

  void send(int from_device, int to_device, const MessageTag& tag, Tensor payload) override;
  Tensor recv(int from_device, int to_device, const MessageTag& expected, Device& device) override;
  void send_control(int from_device, int to_device, std::uint64_t key,
                    std::vector<double> values) override;
  std::vector<double> recv_control(int from_device, int to_device, std::uint64_t key) override;
  std::optional<std::vector<double>> try_recv_control(int from_device, int to_device,
                                                      std::uint64_t key) override;
  void abort(const std::string& reason) override;
  // Why the run was aborted, once it was.
  std::optional<std::string> abort_reason();

 private:
  struct Message {
    MessageTag tag;
    int from_device = 0;
    Tensor payload;
  };
  using ChannelKey = std::pair<int, int>;  // (from_stage, to_stage)
  using ControlId = std::pair<std::pair<int, int>, std::uint64_t>;

  // Waits (lock held) until ready() or an abort; registers the wait for deadlock detection.
  template <typename Ready>
  void wait_until(std::unique_lock<std::mutex>& lock, int device, const std::string& waiting_for,
                  Ready ready);
  void check_deadlock_locked();
  [[noreturn]] void throw_aborted_locked() const;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<ChannelKey, std::deque<Message>> channels_;
  std::map<ControlId, std::vector<double>> control_;
  // A waiting device, what it waits for, and whether that has arrived (it may not have woken yet).
  struct Waiter {
    std::string waiting_for;
    std::function<bool()> ready;
  };
  std::map<int, Waiter> waiting_;
  DeadlockDetection detection_;
  int live_workers_ = 0;
  bool aborted_ = false;
  std::string abort_reason_;
};

}  // namespace zb::exec
