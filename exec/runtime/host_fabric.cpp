// The host fabric: in-process FIFO channels between device threads (see host_fabric.h).
#include "exec/runtime/host_fabric.h"

#include <fmt/format.h>

#include "exec/runtime/exec_error.h"

namespace zb::exec {

std::string describe(const MessageTag& tag) {
  const bool forward = tag.to_stage > tag.from_stage;
  return fmt::format("{} of stage {} -> {}, microbatch {}, step {}",
                     forward ? "activation" : "gradient", tag.from_stage, tag.to_stage,
                     tag.microbatch, tag.step);
}

std::uint64_t control_key(int step, int stage, ControlKind kind) {
  return (static_cast<std::uint64_t>(step) << 34) | (static_cast<std::uint64_t>(stage) << 2) |
         static_cast<std::uint64_t>(kind);
}

void HostFabric::begin_run(int workers) {
  std::lock_guard lock(mutex_);
  channels_.clear();
  control_.clear();
  waiting_.clear();
  live_workers_ = workers;
  aborted_ = false;
  abort_reason_.clear();
}

void HostFabric::worker_ended() {
  std::lock_guard lock(mutex_);
  --live_workers_;
  check_deadlock_locked();
  changed_.notify_all();
}

void HostFabric::check_deadlock_locked() {
  if (detection_ == DeadlockDetection::off || aborted_ || live_workers_ <= 0 || static_cast<int>(waiting_.size()) < live_workers_) return;
  for (const auto& [device, waiter] : waiting_) {
    if (waiter.ready()) return;  // woken but not yet running: not stuck
  }
  std::string report = "deadlock: every running device waits for a message that nobody will send:";
  for (const auto& [device, waiter] : waiting_) {
    report += fmt::format("\n  device {} waits for {}", device, waiter.waiting_for);
  }
  aborted_ = true;
  abort_reason_ = report;
  changed_.notify_all();
}

void HostFabric::throw_aborted_locked() const { throw ExecError(abort_reason_); }

template <typename Ready>
void HostFabric::wait_until(std::unique_lock<std::mutex>& lock, int device,
                           const std::string& waiting_for, Ready ready) {
  if (aborted_) throw_aborted_locked();
  if (ready()) return;
  waiting_[device] = Waiter{waiting_for, ready};
  check_deadlock_locked();
  changed_.wait(lock, [&] { return aborted_ || ready(); });
  waiting_.erase(device);
  if (aborted_) throw_aborted_locked();
}

void HostFabric::send(int from_device, int /*to_device*/, const MessageTag& tag, Tensor payload) {
  std::lock_guard lock(mutex_);
  if (aborted_) throw_aborted_locked();
  // Zero-copy: the threads share memory, so the tensor itself is handed over.
  channels_[{tag.from_stage, tag.to_stage}].push_back(Message{tag, from_device, std::move(payload)});
  changed_.notify_all();
}

Tensor HostFabric::recv(int from_device, int to_device, const MessageTag& expected, Device& /*device*/) {
  std::unique_lock lock(mutex_);
  auto& queue = channels_[{expected.from_stage, expected.to_stage}];
  wait_until(lock, to_device, fmt::format("the {} from device {}", describe(expected), from_device),
             [&] { return !queue.empty(); });
  Message message = std::move(queue.front());
  queue.pop_front();
  if (message.tag != expected || message.from_device != from_device) {
    throw ExecError(fmt::format(
        "mismatched message on channel stage {} -> {} (device {} -> {}): expected the {}, "
        "received the {} from device {}",
        expected.from_stage, expected.to_stage, from_device, to_device, describe(expected),
        describe(message.tag), message.from_device));
  }
  return std::move(message.payload);
}

void HostFabric::send_control(int from_device, int to_device, std::uint64_t key,
                             std::vector<double> values) {
  std::lock_guard lock(mutex_);
  if (aborted_) throw_aborted_locked();
  const ControlId id{{from_device, to_device}, key};
  if (control_.count(id) != 0) {
    throw ExecError(fmt::format("control message {} from device {} to {} sent twice", key,
                                from_device, to_device));
  }
  control_[id] = std::move(values);
  changed_.notify_all();
}

std::vector<double> HostFabric::recv_control(int from_device, int to_device, std::uint64_t key) {
  std::unique_lock lock(mutex_);
  const ControlId id{{from_device, to_device}, key};
  wait_until(lock, to_device,
             fmt::format("optimizer control message {:#x} from device {}", key, from_device),
             [&] { return control_.count(id) != 0; });
  auto node = control_.extract(id);
  return std::move(node.mapped());
}

std::optional<std::vector<double>> HostFabric::try_recv_control(int from_device, int to_device,
                                                               std::uint64_t key) {
  std::lock_guard lock(mutex_);
  if (aborted_) throw_aborted_locked();
  auto it = control_.find({{from_device, to_device}, key});
  if (it == control_.end()) return std::nullopt;
  std::vector<double> values = std::move(it->second);
  control_.erase(it);
  return values;
}

std::optional<std::string> HostFabric::abort_reason() {
  std::lock_guard lock(mutex_);
  if (!aborted_) return std::nullopt;
  return abort_reason_;
}

void HostFabric::abort(const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (aborted_) return;  // keep the first (root) cause
  aborted_ = true;
  abort_reason_ = "aborted after a failure elsewhere: " + reason;
  changed_.notify_all();
}

}  // namespace zb::exec
