// Communication between devices: tagged point-to-point tensor channels and small control messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/runtime/device.h"
#include "exec/runtime/tensor.h"

namespace zb::exec {

// What a tensor message is: the output of `from_stage` for `to_stage` (to_stage = from_stage + 1:
// an activation travelling forward; from_stage - 1: a gradient travelling backward).
struct MessageTag {
  int step = 0;
  int from_stage = 0;
  int to_stage = 0;
  int microbatch = 0;

  friend bool operator==(const MessageTag&, const MessageTag&) = default;
};

// "activation of stage 0 -> 1, microbatch 3, step 2".
std::string describe(const MessageTag& tag);

// A control message key: the optimizer's partial norm travelling down the stages, its verdict,
// (multi-process runs) a device's results gathered at device 0 after the run, and (two model
// copies, DualPipe) the up copy's losses for the down copy. Two bits (control_key).
enum class ControlKind : std::uint8_t { norm_partial, verdict, gather, copy_losses };
std::uint64_t control_key(int step, int stage, ControlKind kind);

// Channels are FIFO per (from_stage, to_stage), like NCCL's in-order matching of send/recv: the
// receiver names the message it expects and the channel checks the one that arrives. A backend
// may implement this with threads and queues (CPU) or with NCCL plus a header (CUDA).
class Fabric {
 public:
  virtual ~Fabric() = default;

  // Never blocks on the receiver (channels buffer without limit).
  virtual void send(int from_device, int to_device, const MessageTag& tag, Tensor payload) = 0;
  // Next message of channel expected.from_stage -> expected.to_stage, placed on `device`. Throws
  // ExecError when the message that arrives carries another tag (a mismatched microbatch), when
  // the run was aborted, or when every device is waiting (a deadlock).
  virtual Tensor recv(int from_device, int to_device, const MessageTag& expected, Device& device) = 0;

  virtual void send_control(int from_device, int to_device, std::uint64_t key,
                            std::vector<double> values) = 0;
  virtual std::vector<double> recv_control(int from_device, int to_device, std::uint64_t key) = 0;
  virtual std::optional<std::vector<double>> try_recv_control(int from_device, int to_device,
                                                              std::uint64_t key) = 0;

  // Stops the run: every pending and later receive throws ExecError with `reason`.
  virtual void abort(const std::string& reason) = 0;
};

}  // namespace zb::exec
