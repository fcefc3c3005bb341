// The CUDA fabric: tensor channels between CUDA devices of one process (NCCL send/recv between
// GPUs, device-to-device copies between virtual devices of one GPU) on communication streams.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "exec/cpu_fabric.h"
#include "exec/cuda/cuda_device.h"
#include "exec/fabric.h"

namespace zb::exec::cuda {

// The host side (which message comes next on each channel, the tag check, control messages,
// deadlock detection, abort) is the CPU fabric's, unchanged: a receive waits on the host until
// the sender has posted the message, exactly as on the CPU backend. Only the bytes travel
// differently: the sender enqueues its half on a communication stream after its compute stream
// has produced the tensor, the receiver enqueues its half on its own communication stream and
// makes its compute stream wait for it. Neither compute stream ever waits for a send.
//
// A channel from a device to itself (the turn of a V placement) hands the tensor over, as on the
// CPU: one compute stream orders producer and consumers.
//
// Between GPUs, every directed device pair is its own link: its own streams and its own 2-rank
// NCCL communicator. So NCCL's in-order matching only ever sees the sends of one sender and the
// receives of one receiver, and a blocked send holds up nothing but later sends on that link.
class CudaFabric final : public Fabric {
 public:
  // `devices[d]` is pipeline device d. Links between different GPUs use NCCL (created here, for
  // neighbouring devices d, d+1 and the wrap-around pair 0, p-1: every placement's stage
  // boundaries); links within one GPU use copies.
  explicit CudaFabric(std::vector<CudaDevice*> devices);
  ~CudaFabric() override;
  CudaFabric(const CudaFabric&) = delete;
  CudaFabric& operator=(const CudaFabric&) = delete;

  void begin_run(int workers);
  void worker_ended();
  // After every worker has ended: waits for the transfers still in flight and releases the
  // buffers they hold. After a failure, NCCL transfers that can never complete make the fabric
  // unusable (later runs are refused) instead of hanging.
  void end_run(bool failed);
  bool uses_nccl() const { return nccl_links_ > 0; }
  // What fell back and why (NCCL failing to initialise: peer copies instead).
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
  struct Link {
    bool nccl = false;
    cudaStream_t send_stream = nullptr;  // on the sender (NCCL links)
    cudaStream_t recv_stream = nullptr;  // on the receiver
    ncclComm_t send_comm = nullptr;      // rank 0, the sender's GPU
    ncclComm_t recv_comm = nullptr;      // rank 1, the receiver's GPU
  };
  // What the sender leaves for the receiver besides the host message.
  struct Transfer {
    int rows = 0;
    int cols = 0;
    Tensor source;               // copy links: the sender's tensor
    cudaEvent_t ready = nullptr; // copy links: the sender's compute stream produced `source`
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
  Link& link(int from, int to);
  void make_nccl_links(const std::vector<std::pair<int, int>>& pairs);
  cudaEvent_t take_event(int device);
  void give_event(int device, cudaEvent_t event);
  void release_finished(int device);

  std::vector<CudaDevice*> devices_;
  std::map<std::pair<int, int>, Link> links_;
  std::vector<cudaStream_t> owned_streams_;  // every stream above, once
  int nccl_links_ = 0;
  CpuFabric host_;
  std::mutex transfers_mutex_;
  std::map<std::pair<int, int>, std::deque<Transfer>> transfers_;  // per (from_stage, to_stage)
  std::vector<PerDevice> per_device_;
  bool broken_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace zb::exec::cuda
