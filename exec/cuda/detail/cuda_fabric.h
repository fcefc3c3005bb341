// The CUDA fabric: tensor channels between CUDA devices (NCCL send/recv between GPUs, in this
// process or another, device-to-device copies between virtual devices of one GPU) on communication
// streams.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "exec/runtime/host_fabric.h"
#include "exec/cuda/detail/cuda_device.h"
#include "exec/runtime/fabric.h"
#include "exec/multiprocess/process_fabric.h"

namespace zb::exec::cuda {

// The host side (which message comes next on each channel, the tag check, control messages,
// deadlock detection, abort) is a host fabric's, unchanged: a CPU fabric when every device is in
// this process, a process fabric (borrowed) when each process runs one device. A receive waits on
// the host until the sender has posted the message, exactly as on the CPU backend; the host
// message carries the shape. Only the bytes travel differently: the sender enqueues its half on
// a communication stream after its compute stream has produced the tensor, the receiver enqueues
// its half on its own communication stream and makes its compute stream wait for it. Neither
// compute stream ever waits for a send.
//
// A channel from a device to itself (the turn of a V placement) hands the tensor over, as on the
// CPU: one compute stream orders producer and consumers.
//
// Between GPUs, every channel (from_stage -> to_stage) is its own link: its own 2-rank NCCL
// communicator, a send stream on the sender and a receive stream on the receiver. NCCL matches
// the k-th send with the k-th receive of a communicator, and the engine guarantees that order per
// channel only: with an interleaved or V placement one device pair carries several channels
// (stages 0->1 and 2->3 on devices 0->1), whose sends the sender may post in another order than
// the receiver posts their receives. One communicator per device pair would then swap tensors of
// equal size silently. prepare_channels creates them, for the placement of the next run, from
// the calling thread (a communicator's first transfer connects it, which must not happen inside
// two worker threads that also wait for each other's messages).
//
// A channel whose other end is another process's is always NCCL: the sender's process makes the
// communicator's id and sends it over the process group. Every process creates its channels in
// one global order, (from_stage, to_stage), so the blocking pairwise inits cannot deadlock.
//
// Between virtual devices of one GPU the receiver copies from the sender's buffer on one copy
// stream per receiving device; the per-channel transfer queues say which buffer.
class CudaFabric final : public Fabric {
 public:
  // `devices[d]` is pipeline device d; all in this process.
  explicit CudaFabric(std::vector<CudaDevice*> devices);
  // One device per process: `devices[d]` is null where device d is another process's, and the
  // host messages cross processes through `host` (which must outlive this fabric).
  CudaFabric(std::vector<CudaDevice*> devices, ProcessFabric& host);
  ~CudaFabric() override;
  CudaFabric(const CudaFabric&) = delete;
  CudaFabric& operator=(const CudaFabric&) = delete;

  // The links of every stage boundary (both directions) of a run placing stage s on device
  // stage_device[s] (the channels with an end in this process). Communicators are kept across
  // runs and created only for channels new to this placement. Throws CudaError when CUDA fails
  // (ExecError when the process group does); NCCL failing to initialise between GPUs of this
  // process is not an error (peer copies instead, with a warning), between processes it is.
  // Every process of a multi-process run calls it with the same placement.
  void prepare_channels(const std::vector<int>& stage_device);
  void begin_run(int workers);
  void worker_ended();
  // After every worker has ended: waits for the transfers still in flight and releases the
  // buffers they hold. After a failure, NCCL transfers that can never complete make the fabric
  // unusable (later runs are refused) instead of hanging.
  void end_run(bool failed);
  // Whether any two devices are on different GPUs (their channels use NCCL unless it failed).
  bool spans_gpus() const;
  // What fell back and why (NCCL failing to initialise: peer copies instead). Grows when
  // prepare_channels falls back.
  const std::vector<std::string>& warnings() const { return warnings_; }

  void send(int from_device, int to_device, const MessageTag& tag, Tensor payload) override;
  Tensor recv(int from_device, int to_device, const MessageTag& expected, Device& device) override;
  void send_control(int from_device, int to_device, std::uint64_t key,
                    std::vector<double> values) override;
  std::vector<double> recv_control(int from_device, int to_device, std::uint64_t key) override;
  std::optional<std::vector<double>> try_recv_control(int from_device, int to_device,
                                                      std::uint64_t key) override;
  void abort(const std::string& reason) override;

 private:
  // One direction of one stage boundary between two different devices.
  struct Channel {
    int from_device = 0;
    int to_device = 0;
    bool nccl = false;
    // Null where that end is another process's.
    cudaStream_t send_stream = nullptr;  // NCCL: on the sender
    cudaStream_t recv_stream = nullptr;  // on the receiver (copies: its shared copy stream)
    ncclComm_t send_comm = nullptr;      // rank 0, the sender's GPU
    ncclComm_t recv_comm = nullptr;      // rank 1, the receiver's GPU
  };
  using StagePair = std::pair<int, int>;             // (from_stage, to_stage)
  using ChannelId = std::tuple<int, int, int, int>;  // (from_stage, to_stage, from_device, to_device)
  // What the sender leaves for the receiver besides the host message (copies and hand-overs).
  struct Transfer {
    Tensor source;                // the sender's tensor
    cudaEvent_t ready = nullptr;  // copies: the sender's compute stream produced `source`
  };
  // A buffer that must outlive a transfer still in flight.
  struct Hold {
    cudaEvent_t done = nullptr;
    Tensor tensor;
  };
  struct PerDevice {
    std::vector<cudaEvent_t> spare_events;  // touched only by the device's own worker
    std::vector<Hold> holds;
  };

  CudaDevice& dev(int device) const;
  bool local(int device) const { return devices_[static_cast<std::size_t>(device)] != nullptr; }
  // The prepared channel of a message between two different devices.
  const Channel& channel(const MessageTag& tag, int from_device, int to_device) const;
  Channel copy_channel(int from_device, int to_device);
  // Creates the NCCL communicators of `ids` (all in channels_, nccl set; in the global order)
  // and connects them.
  void connect_nccl(const std::vector<ChannelId>& ids);
  // This process's communicator of a channel with one end in another process.
  ncclComm_t join_remote_channel(const ChannelId& id, const Channel& channel);
  cudaEvent_t take_event(int device);
  void give_event(int device, cudaEvent_t event);
  void release_finished(int device);

  std::vector<CudaDevice*> devices_;
  // Written by prepare_channels only (before the workers start), read by the workers.
  std::map<ChannelId, Channel> channels_;         // every channel ever prepared
  std::map<StagePair, const Channel*> prepared_;  // this placement's
  std::map<int, cudaStream_t> copy_streams_;      // per receiving device
  std::vector<cudaStream_t> owned_streams_;       // every stream above, once
  bool nccl_unusable_ = false;
  // The host fabric: owned (one process) or borrowed (one device per process); host_ is either.
  std::unique_ptr<HostFabric> own_host_;
  ProcessFabric* process_host_ = nullptr;
  Fabric* host_ = nullptr;
  std::mutex transfers_mutex_;
  std::map<StagePair, std::deque<Transfer>> transfers_;
  std::vector<PerDevice> per_device_;
  bool broken_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace zb::exec::cuda
