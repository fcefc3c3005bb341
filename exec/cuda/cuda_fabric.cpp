// The CUDA fabric: tensor channels between CUDA devices of one process (NCCL send/recv between
// GPUs, device-to-device copies between virtual devices of one GPU) on communication streams.
#include "exec/cuda/cuda_fabric.h"

#include <fmt/format.h>

#include <exception>

#include "exec/cuda/cuda_check.h"

namespace zb::exec::cuda {

CudaFabric::CudaFabric(std::vector<CudaDevice*> devices)
    : devices_(std::move(devices)), per_device_(devices_.size()) {
  const int p = static_cast<int>(devices_.size());
  std::vector<std::pair<int, int>> nccl_pairs;
  // Copies into a device share one stream (its receives are issued in its program order
  // anyway): fewer streams than hardware work queues means no false dependencies between them.
  std::map<int, cudaStream_t> copy_streams;
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      if (a == b) continue;
      const bool same_gpu = devices_[a]->placement().ordinal == devices_[b]->placement().ordinal;
      if (same_gpu) {
        if (copy_streams.count(b) == 0) {
          copy_streams[b] = devices_[b]->create_stream();
          owned_streams_.push_back(copy_streams[b]);
        }
        Link link;
        link.recv_stream = copy_streams[b];
        links_[{a, b}] = link;
        continue;
      }
      const bool neighbours = b == a + 1 || a == b + 1 || (a == 0 && b == p - 1) || (a == p - 1 && b == 0);
      if (neighbours) nccl_pairs.emplace_back(a, b);
    }
  }
  if (nccl_pairs.empty()) return;
  try {
    make_nccl_links(nccl_pairs);
  } catch (const CudaError& error) {
    // Without working NCCL the GPUs still talk: peer copies pulled by the receiver.
    for (const auto& pair : nccl_pairs) {
      auto it = links_.find(pair);
      if (it != links_.end()) {
        if (it->second.send_comm) ncclCommAbort(it->second.send_comm);
        if (it->second.recv_comm) ncclCommAbort(it->second.recv_comm);
        links_.erase(it);
      }
    }
    nccl_links_ = 0;
    warnings_.push_back(fmt::format("NCCL unusable ({}); GPUs exchange tensors by peer copies instead",
                                    error.what()));
    for (const auto& [a, b] : nccl_pairs) {
      devices_[b]->make_current();
      if (cudaDeviceEnablePeerAccess(devices_[a]->placement().ordinal, 0) != cudaSuccess) {
        cudaGetLastError();  // no peer access: the copy goes through the host, still correct
      }
      if (copy_streams.count(b) == 0) {
        copy_streams[b] = devices_[b]->create_stream();
        owned_streams_.push_back(copy_streams[b]);
      }
      Link link;
      link.recv_stream = copy_streams[b];
      links_[{a, b}] = link;
    }
  }
}

void CudaFabric::make_nccl_links(const std::vector<std::pair<int, int>>& pairs) {
  for (const auto& [a, b] : pairs) {
    Link link;
    link.nccl = true;
    link.send_stream = devices_[a]->create_stream();
    link.recv_stream = devices_[b]->create_stream();
    owned_streams_.push_back(link.send_stream);
    owned_streams_.push_back(link.recv_stream);
    ncclComm_t comms[2] = {nullptr, nullptr};
    const int ordinals[2] = {devices_[a]->placement().ordinal, devices_[b]->placement().ordinal};
    check(ncclCommInitAll(comms, 2, ordinals),
          fmt::format("ncclCommInitAll for the link device {} (cuda:{}) -> device {} (cuda:{})", a,
                      ordinals[0], b, ordinals[1]));
    link.send_comm = comms[0];
    link.recv_comm = comms[1];
    links_[{a, b}] = link;
    ++nccl_links_;
  }
  // Connect every link now, from this one thread and in one group: NCCL sets up a peer
  // connection at its first send/recv, and doing that later from two worker threads could block
  // one on the other while both wait for something else.
  std::vector<std::pair<CudaDevice*, float*>> buffers;
  auto scratch = [&](CudaDevice* device) {
    device->make_current();
    float* p = nullptr;
    check(cudaMalloc(reinterpret_cast<void**>(&p), sizeof(float)), "cudaMalloc(NCCL warm-up)");
    check(cudaMemset(p, 0, sizeof(float)), "cudaMemset(NCCL warm-up)");
    buffers.emplace_back(device, p);
    return p;
  };
  std::vector<float*> send_buffers, recv_buffers;
  for (const auto& [a, b] : pairs) {
    send_buffers.push_back(scratch(devices_[a]));
    recv_buffers.push_back(scratch(devices_[b]));
  }
  check(ncclGroupStart(), "ncclGroupStart(warm-up)");
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Link& link = links_.at(pairs[i]);
    check(ncclSend(send_buffers[i], 1, ncclFloat, 1, link.send_comm, link.send_stream),
          fmt::format("ncclSend(warm-up {} -> {})", pairs[i].first, pairs[i].second));
    check(ncclRecv(recv_buffers[i], 1, ncclFloat, 0, link.recv_comm, link.recv_stream),
          fmt::format("ncclRecv(warm-up {} -> {})", pairs[i].first, pairs[i].second));
  }
  check(ncclGroupEnd(), "ncclGroupEnd(warm-up: connecting the NCCL links)");
  for (const auto& pair : pairs) {
    const Link& link = links_.at(pair);
    check(cudaStreamSynchronize(link.send_stream), "cudaStreamSynchronize(NCCL warm-up send)");
    check(cudaStreamSynchronize(link.recv_stream), "cudaStreamSynchronize(NCCL warm-up recv)");
  }
  for (auto& [device, p] : buffers) {
    device->make_current();
    cudaFree(p);
  }
}

CudaFabric::~CudaFabric() {
  for (std::size_t d = 0; d < per_device_.size(); ++d) {
    try {
      devices_[d]->make_current();
    } catch (const std::exception&) {
      // destructors do not throw; the calls below fail quietly
    }
    for (auto& hold : per_device_[d].holds) {
      if (!broken_) cudaEventSynchronize(hold.done);
      cudaEventDestroy(hold.done);
    }
    if (broken_) {
      // Still in flight on a dead link: leak the buffers rather than free memory a GPU may write.
      for (auto& hold : per_device_[d].holds) new Tensor(std::move(hold.tensor));
    }
    per_device_[d].holds.clear();
    for (cudaEvent_t e : per_device_[d].spare_events) cudaEventDestroy(e);
  }
  for (auto& [pair, link] : links_) {
    if (link.send_comm) broken_ ? ncclCommAbort(link.send_comm) : ncclCommDestroy(link.send_comm);
    if (link.recv_comm) broken_ ? ncclCommAbort(link.recv_comm) : ncclCommDestroy(link.recv_comm);
  }
  for (cudaStream_t stream : owned_streams_) cudaStreamDestroy(stream);
}

CudaDevice& CudaFabric::dev(int device) const {
  if (device < 0 || device >= static_cast<int>(devices_.size())) {
    throw ExecError(fmt::format("cuda fabric: no device {} (have {})", device, devices_.size()));
  }
  return *devices_[static_cast<std::size_t>(device)];
}

CudaFabric::Link& CudaFabric::link(int from, int to) {
  auto it = links_.find({from, to});
  if (it == links_.end()) {
    throw ExecError(fmt::format("cuda fabric: no link from device {} to device {} (NCCL links join "
                                "neighbouring devices and devices 0 and p-1 only)", from, to));
  }
  return it->second;
}

cudaEvent_t CudaFabric::take_event(int device) {
  auto& spare = per_device_[static_cast<std::size_t>(device)].spare_events;
  if (!spare.empty()) {
    cudaEvent_t e = spare.back();
    spare.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), fmt::format("device {}: cudaEventCreate", device));
  return e;
}

void CudaFabric::give_event(int device, cudaEvent_t event) {
  per_device_[static_cast<std::size_t>(device)].spare_events.push_back(event);
}

void CudaFabric::release_finished(int device) {
  auto& holds = per_device_[static_cast<std::size_t>(device)].holds;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < holds.size(); ++i) {
    const cudaError_t status = cudaEventQuery(holds[i].done);
    if (status == cudaErrorNotReady) {
      holds[kept++] = std::move(holds[i]);
      continue;
    }
    check(status, fmt::format("device {}: a transfer failed", device));
    give_event(device, holds[i].done);
    holds[i].tensor = Tensor();  // back to its device's free list
  }
  holds.resize(kept);
}

void CudaFabric::begin_run(int workers) {
  if (broken_) {
    throw ExecError("cuda fabric: unusable after an earlier failed run left NCCL transfers in "
                    "flight (start a new process)");
  }
  {
    std::lock_guard lock(transfers_mutex_);
    transfers_.clear();
  }
  host_.begin_run(workers);
}

void CudaFabric::worker_ended() { host_.worker_ended(); }

void CudaFabric::end_run(bool failed) {
  // Transfers posted but never received (a failed run): their copy events go, their buffers too.
  {
    std::lock_guard lock(transfers_mutex_);
    for (auto& [channel, queue] : transfers_) {
      for (auto& transfer : queue) {
        if (transfer.ready) cudaEventDestroy(transfer.ready);
      }
    }
    transfers_.clear();
  }
  bool stuck = false;
  for (auto& [pair, link] : links_) {
    for (auto [stream, device] : {std::pair{link.send_stream, pair.first}, std::pair{link.recv_stream, pair.second}}) {
      if (stream == nullptr) continue;
      dev(device).make_current();
      if (failed && link.nccl) {
        // A send whose receive never came never completes: do not wait for it.
        if (cudaStreamQuery(stream) == cudaErrorNotReady) stuck = true;
        continue;
      }
      check(cudaStreamSynchronize(stream), fmt::format("device {}: waiting for transfers", device));
    }
  }
  if (stuck) {
    broken_ = true;
    return;
  }
  for (std::size_t d = 0; d < per_device_.size(); ++d) {
    devices_[d]->make_current();
    for (auto& hold : per_device_[d].holds) {
      check(cudaEventSynchronize(hold.done), fmt::format("device {}: waiting for a transfer", d));
      give_event(static_cast<int>(d), hold.done);
    }
    per_device_[d].holds.clear();
  }
}

void CudaFabric::send(int from_device, int to_device, const MessageTag& tag, Tensor payload) {
  CudaDevice& source = dev(from_device);
  if (from_device == to_device) {
    // A stage boundary inside one device (the turn of a V placement): the tensor itself, as on
    // the CPU; one compute stream orders its producer before its consumers.
    const int rows = payload.rows();
    const int cols = payload.cols();
    {
      std::lock_guard lock(transfers_mutex_);
      transfers_[{tag.from_stage, tag.to_stage}].push_back(Transfer{rows, cols, std::move(payload), nullptr});
    }
    host_.send(from_device, to_device, tag, Tensor(nullptr, rows, cols));
    return;
  }
  Link& l = link(from_device, to_device);
  source.make_current();
  release_finished(from_device);
  const int rows = payload.rows();
  const int cols = payload.cols();
  Transfer transfer;
  transfer.rows = rows;
  transfer.cols = cols;
  const std::string what = fmt::format("device {} -> {}: sending the {}", from_device, to_device, describe(tag));
  if (l.nccl) {
    cudaEvent_t ready = take_event(from_device);
    check(cudaEventRecord(ready, source.compute_stream()), what);
    check(cudaStreamWaitEvent(l.send_stream, ready, 0), what);
    give_event(from_device, ready);  // a later record does not disturb the wait already enqueued
    check(ncclSend(payload.data(), payload.size(), ncclFloat, 1, l.send_comm, l.send_stream), what);
    cudaEvent_t done = take_event(from_device);
    check(cudaEventRecord(done, l.send_stream), what);
    per_device_[static_cast<std::size_t>(from_device)].holds.push_back(Hold{done, std::move(payload)});
  } else {
    // The receiver copies from the sender's buffer; it also owns this event and destroys it.
    check(cudaEventCreateWithFlags(&transfer.ready, cudaEventDisableTiming), what);
    check(cudaEventRecord(transfer.ready, source.compute_stream()), what);
    transfer.source = std::move(payload);
  }
  {
    std::lock_guard lock(transfers_mutex_);
    transfers_[{tag.from_stage, tag.to_stage}].push_back(std::move(transfer));
  }
  // The host message last: when the receiver sees it, the transfer above is in its queue.
  host_.send(from_device, to_device, tag, Tensor(nullptr, rows, cols));
}

Tensor CudaFabric::recv(int from_device, int to_device, const MessageTag& expected, Device& device) {
  CudaDevice& target = dev(to_device);
  if (&device != &target) {
    throw ExecError(fmt::format("cuda fabric: receive for device {} asked to place it on {}",
                                to_device, device.description()));
  }
  host_.recv(from_device, to_device, expected, device);  // waits, checks the tag
  Transfer transfer;
  {
    std::lock_guard lock(transfers_mutex_);
    auto& queue = transfers_[{expected.from_stage, expected.to_stage}];
    if (queue.empty()) throw ExecError(fmt::format("cuda fabric: the {} has no transfer", describe(expected)));
    transfer = std::move(queue.front());
    queue.pop_front();
  }
  if (from_device == to_device) return std::move(transfer.source);
  Link& l = link(from_device, to_device);
  target.make_current();
  release_finished(to_device);
  const std::string what = fmt::format("device {} <- {}: receiving the {}", to_device, from_device, describe(expected));
  Tensor out = target.alloc_uninitialized(transfer.rows, transfer.cols);
  cudaEvent_t allocated = take_event(to_device);
  check(cudaEventRecord(allocated, target.compute_stream()), what);
  check(cudaStreamWaitEvent(l.recv_stream, allocated, 0), what);
  give_event(to_device, allocated);
  if (l.nccl) {
    check(ncclRecv(out.data(), out.size(), ncclFloat, 0, l.recv_comm, l.recv_stream), what);
  } else {
    check(cudaStreamWaitEvent(l.recv_stream, transfer.ready, 0), what);
    check(cudaEventDestroy(transfer.ready), what);
    if (out.size() != 0) {
      check(cudaMemcpyAsync(out.data(), transfer.source.data(), out.size_bytes(),
                            cudaMemcpyDefault, l.recv_stream), what);  // same GPU or a peer
    }
  }
  cudaEvent_t done = take_event(to_device);
  check(cudaEventRecord(done, l.recv_stream), what);
  check(cudaStreamWaitEvent(target.compute_stream(), done, 0), what);
  if (l.nccl) {
    give_event(to_device, done);
  } else {
    // The sender's buffer lives until the copy is done, then returns to the sender's free list.
    per_device_[static_cast<std::size_t>(to_device)].holds.push_back(Hold{done, std::move(transfer.source)});
  }
  return out;
}

void CudaFabric::send_control(int from_device, int to_device, std::uint64_t key,
                              std::vector<double> values) {
  host_.send_control(from_device, to_device, key, std::move(values));
}

std::vector<double> CudaFabric::recv_control(int from_device, int to_device, std::uint64_t key) {
  return host_.recv_control(from_device, to_device, key);
}

std::optional<std::vector<double>> CudaFabric::try_recv_control(int from_device, int to_device,
                                                                std::uint64_t key) {
  return host_.try_recv_control(from_device, to_device, key);
}

void CudaFabric::abort(const std::string& reason) { host_.abort(reason); }

}  // namespace zb::exec::cuda
