// The fabric of a multi-process run: pipeline device d is rank d; messages cross the process group.
#pragma once

#include <atomic>
#include <string>

#include "exec/runtime/host_fabric.h"
#include "exec/runtime/fabric.h"
#include "exec/multiprocess/process_group.h"

namespace zb::exec {

// The host side of every message (which comes next on a channel, the tag check, control
// messages, abort) is the CPU fabric's: a frame that arrives from another rank is posted into
// this process's CPU fabric as if a local thread had sent it, so a receive behaves exactly as in
// one process. Deadlock detection is off (a device waiting on another process is normal); the
// validator and the channel-order check refuse deadlocking schedules before any run.
//
// A failure on one rank aborts every rank (an abort frame), and a rank that abandons the run or
// falls silent aborts the others' runs naming it (the group's failure).
class ProcessFabric final : public Fabric {
 public:
  // carry_payloads: tensor bytes travel in the frame (the CPU backend). Without, the frame
  // carries the tag and the shape only and the receiver gets a tensor with no storage of that
  // shape (the CUDA backend moves the bytes by NCCL).
  // It takes the group's frame handler: one ProcessFabric per group at a time (a backend's).
  ProcessFabric(ProcessGroup& group, bool carry_payloads);
  ~ProcessFabric() override;

  ProcessGroup& group() { return group_; }
  bool is_local(int device) const { return device == group_.rank(); }

  // Starts a run with `workers` local device threads; a barrier, so that no rank sends before
  // every rank has cleared its channels.
  void begin_run(int workers);
  void worker_ended();

  void send(int from_device, int to_device, const MessageTag& tag, Tensor payload) override;
  Tensor recv(int from_device, int to_device, const MessageTag& expected, Device& device) override;
  void send_control(int from_device, int to_device, std::uint64_t key,
                    std::vector<double> values) override;
  std::vector<double> recv_control(int from_device, int to_device, std::uint64_t key) override;
  std::optional<std::vector<double>> try_recv_control(int from_device, int to_device,
                                                      std::uint64_t key) override;
  // Aborts this rank's run and tells every other rank (once; an abort that came from another
  // rank is not sent back).
  void abort(const std::string& reason) override;

 private:
  void on_frame(int from_rank, std::uint8_t kind, std::vector<std::byte> body);
  void tell_others(const std::string& text);  // an abort frame to every other rank, best effort
  void send_frame(int to_rank, std::uint8_t kind, const std::vector<std::byte>& body);

  ProcessGroup& group_;
  bool carry_payloads_;
  HostFabric local_{HostFabric::DeadlockDetection::off};
  std::atomic<bool> abort_sent_{false};
  // The run this rank is in (runs begun so far); every frame carries it. Read by the reader thread.
  std::atomic<std::uint64_t> run_{0};
};

}  // namespace zb::exec
