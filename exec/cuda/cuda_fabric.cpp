// The CUDA fabric: tensor channels between CUDA devices (NCCL send/recv between GPUs, in this
// process or another, device-to-device copies between virtual devices of one GPU) on communication
// streams.
#include "exec/cuda/detail/cuda_fabric.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "exec/cuda/detail/cuda_check.h"

namespace zb::exec::cuda {

namespace {

// The process group's setup key of a channel's NCCL id: bit 63 (the group's barriers use bit 62
// and all bits), then the stages, which name the channel.
std::uint64_t nccl_id_key(int from_stage, int to_stage) {
  return (std::uint64_t{1} << 63) | (static_cast<std::uint64_t>(from_stage) << 31) |
         static_cast<std::uint64_t>(to_stage);
}

}  // namespace

CudaFabric::CudaFabric(std::vector<CudaDevice*> devices)
    : devices_(std::move(devices)),
      own_host_(std::make_unique<HostFabric>()),
      host_(own_host_.get()),
      per_device_(devices_.size()) {}

CudaFabric::CudaFabric(std::vector<CudaDevice*> devices, ProcessFabric& host)
    : devices_(std::move(devices)), process_host_(&host), host_(&host), per_device_(devices_.size()) {}

bool CudaFabric::spans_gpus() const {
  for (const CudaDevice* a : devices_) {
    for (const CudaDevice* b : devices_) {
      if (a && b && a->placement().ordinal != b->placement().ordinal) return true;
    }
  }
  return false;
}

void CudaFabric::prepare_channels(const std::vector<int>& stage_device) {
  prepared_.clear();  // a failure below leaves nothing prepared
  const int p = static_cast<int>(devices_.size());
  for (std::size_t s = 0; s < stage_device.size(); ++s) {
    if (stage_device[s] < 0 || stage_device[s] >= p) {
      throw ExecError(fmt::format("cuda fabric: stage {} is on device {}, but there are {} devices",
                                  s, stage_device[s], p));
    }
  }
  // Every boundary in both directions, in (from_stage, to_stage) order.
  std::vector<StagePair> boundaries;
  for (int s = 0; s + 1 < static_cast<int>(stage_device.size()); ++s) {
    boundaries.emplace_back(s, s + 1);
    boundaries.emplace_back(s + 1, s);
  }
  std::sort(boundaries.begin(), boundaries.end());
  std::map<StagePair, const Channel*> prepared;
  std::vector<ChannelId> fresh;  // new NCCL channels
  for (const auto& [a, b] : boundaries) {
    const int from = stage_device[static_cast<std::size_t>(a)];
    const int to = stage_device[static_cast<std::size_t>(b)];
    if (from == to) continue;  // handed over on the device itself
    if (!local(from) && !local(to)) continue;  // other processes' channel
    const ChannelId id{a, b, from, to};
    auto it = channels_.find(id);
    if (it == channels_.end()) {
      const bool in_process = local(from) && local(to);
      const bool same_gpu = in_process && dev(from).placement().ordinal == dev(to).placement().ordinal;
      Channel channel;
      if (same_gpu || (in_process && nccl_unusable_)) {
        channel = copy_channel(from, to);
      } else {
        channel.from_device = from;
        channel.to_device = to;
        channel.nccl = true;
        fresh.push_back(id);
      }
      it = channels_.emplace(id, channel).first;
    }
    prepared[{a, b}] = &it->second;  // map nodes stay put: the pointer survives later inserts
  }
  if (!fresh.empty()) {
    try {
      connect_nccl(fresh);
    } catch (const ExecError& error) {
      // Without working NCCL the GPUs of this process still talk: peer copies pulled by the
      // receiver. Nothing else reaches another process: there the run cannot go on.
      bool fall_back = dynamic_cast<const CudaError*>(&error) != nullptr;
      for (const ChannelId& id : fresh) {
        const Channel& channel = channels_.at(id);
        if (!local(channel.from_device) || !local(channel.to_device)) fall_back = false;
      }
      for (const ChannelId& id : fresh) {
        Channel& channel = channels_.at(id);
        if (channel.send_comm) ncclCommAbort(channel.send_comm);
        if (channel.recv_comm) ncclCommAbort(channel.recv_comm);
        if (fall_back) {
          channel = copy_channel(channel.from_device, channel.to_device);
        } else {
          channels_.erase(id);  // a later prepare_channels starts it afresh
        }
      }
      if (!fall_back) throw;
      nccl_unusable_ = true;
      warnings_.push_back(fmt::format(
          "NCCL unusable ({}); GPUs exchange tensors by peer copies instead", error.what()));
    }
  }
  prepared_ = std::move(prepared);
}

CudaFabric::Channel CudaFabric::copy_channel(int from_device, int to_device) {
  CudaDevice& receiver = dev(to_device);
  auto stream = copy_streams_.find(to_device);
  if (stream == copy_streams_.end()) {
    // Copies into a device share one stream (its receives are issued in its program order
    // anyway): fewer streams than hardware work queues means no false dependencies between them.
    stream = copy_streams_.emplace(to_device, receiver.create_stream()).first;
    owned_streams_.push_back(stream->second);
  }
  const int peer = dev(from_device).placement().ordinal;
  if (peer != receiver.placement().ordinal) {
    receiver.make_current();
    if (cudaDeviceEnablePeerAccess(peer, 0) != cudaSuccess) {
      cudaGetLastError();  // no peer access (or already on): the copy goes through the host, still correct
    }
  }
  Channel channel;
  channel.from_device = from_device;
  channel.to_device = to_device;
  channel.recv_stream = stream->second;
  return channel;
}

void CudaFabric::connect_nccl(const std::vector<ChannelId>& ids) {
  for (const ChannelId& id : ids) {
    Channel& channel = channels_.at(id);
    if (!local(channel.from_device)) {
      channel.recv_stream = dev(channel.to_device).create_stream();
      owned_streams_.push_back(channel.recv_stream);
      channel.recv_comm = join_remote_channel(id, channel);
      continue;
    }
    if (!local(channel.to_device)) {
      channel.send_stream = dev(channel.from_device).create_stream();
      owned_streams_.push_back(channel.send_stream);
      channel.send_comm = join_remote_channel(id, channel);
      continue;
    }
    CudaDevice& sender = dev(channel.from_device);
    CudaDevice& receiver = dev(channel.to_device);
    channel.send_stream = sender.create_stream();
    owned_streams_.push_back(channel.send_stream);
    channel.recv_stream = receiver.create_stream();
    owned_streams_.push_back(channel.recv_stream);
    ncclComm_t comms[2] = {nullptr, nullptr};
    const int ordinals[2] = {sender.placement().ordinal, receiver.placement().ordinal};
    check(ncclCommInitAll(comms, 2, ordinals),
          fmt::format("ncclCommInitAll for the channel stage {} -> {} (device {} on cuda:{} -> "
                      "device {} on cuda:{})", std::get<0>(id), std::get<1>(id),
                      channel.from_device, ordinals[0], channel.to_device, ordinals[1]));
    channel.send_comm = comms[0];
    channel.recv_comm = comms[1];
  }
  // Connect every channel now, from this one thread and in one group (per process): NCCL sets
  // up a peer connection at its first send/recv, and doing that later from two worker threads
  // could block one on the other while both wait for something else.
  std::vector<std::pair<CudaDevice*, float*>> buffers;
  auto scratch = [&](CudaDevice& device) {
    device.make_current();
    float* p = nullptr;
    check(cudaMalloc(reinterpret_cast<void**>(&p), sizeof(float)), "cudaMalloc(NCCL warm-up)");
    buffers.emplace_back(&device, p);
    check(cudaMemset(p, 0, sizeof(float)), "cudaMemset(NCCL warm-up)");
    return p;
  };
  // On a failure the buffers leak (a few bytes): a warm-up still in flight may write them.
  std::vector<std::pair<float*, float*>> ends;  // per channel: send buffer, receive buffer (local ends)
  for (const ChannelId& id : ids) {
    const Channel& channel = channels_.at(id);
    float* send_buffer = channel.send_comm ? scratch(dev(channel.from_device)) : nullptr;
    ends.emplace_back(send_buffer, channel.recv_comm ? scratch(dev(channel.to_device)) : nullptr);
  }
  check(ncclGroupStart(), "ncclGroupStart(warm-up)");
  try {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Channel& channel = channels_.at(ids[i]);
      const std::string what = fmt::format("warm-up of the channel stage {} -> {}",
                                           std::get<0>(ids[i]), std::get<1>(ids[i]));
      if (channel.send_comm) {
        check(ncclSend(ends[i].first, 1, ncclFloat, 1, channel.send_comm, channel.send_stream),
              "ncclSend(" + what + ")");
      }
      if (channel.recv_comm) {
        check(ncclRecv(ends[i].second, 1, ncclFloat, 0, channel.recv_comm, channel.recv_stream),
              "ncclRecv(" + what + ")");
      }
    }
  } catch (...) {
    ncclGroupEnd();  // leave no group open on this thread
    throw;
  }
  check(ncclGroupEnd(), "ncclGroupEnd(warm-up: connecting the NCCL channels)");
  for (const ChannelId& id : ids) {
    const Channel& channel = channels_.at(id);
    if (channel.send_stream) {
      check(cudaStreamSynchronize(channel.send_stream), "cudaStreamSynchronize(NCCL warm-up send)");
    }
    if (channel.recv_stream) {
      check(cudaStreamSynchronize(channel.recv_stream), "cudaStreamSynchronize(NCCL warm-up recv)");
    }
  }
  for (auto& [device, p] : buffers) {
    device->make_current();
    cudaFree(p);
  }
}

ncclComm_t CudaFabric::join_remote_channel(const ChannelId& id, const Channel& channel) {
  ProcessGroup& group = process_host_->group();
  const auto [from_stage, to_stage, from, to] = id;
  const bool sender = local(from);
  const std::string what = fmt::format("the channel stage {} -> {} (device {} -> {}, this is rank {})",
                                       from_stage, to_stage, from, to, group.rank());
  const std::uint64_t key = nccl_id_key(from_stage, to_stage);
  ncclUniqueId unique{};
  if (sender) {
    check(ncclGetUniqueId(&unique), "ncclGetUniqueId for " + what);
    std::vector<std::byte> bytes(sizeof unique);
    std::memcpy(bytes.data(), &unique, sizeof unique);
    group.send_setup(to, key, bytes);
  } else {
    const std::vector<std::byte> bytes = group.recv_setup(from, key);
    if (bytes.size() != sizeof unique) {
      throw ExecError(fmt::format("cuda fabric: the NCCL id of {} has {} bytes, not {}", what,
                                  bytes.size(), sizeof unique));
    }
    std::memcpy(&unique, bytes.data(), sizeof unique);
  }
  dev(sender ? channel.from_device : channel.to_device).make_current();
  ncclComm_t comm = nullptr;
  check(ncclCommInitRank(&comm, 2, unique, sender ? 0 : 1), "ncclCommInitRank for " + what);
  return comm;
}

CudaFabric::~CudaFabric() {
  for (std::size_t d = 0; d < per_device_.size(); ++d) {
    if (devices_[d] == nullptr) continue;
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
  for (auto& [id, channel] : channels_) {
    if (channel.send_comm) broken_ ? ncclCommAbort(channel.send_comm) : ncclCommDestroy(channel.send_comm);
    if (channel.recv_comm) broken_ ? ncclCommAbort(channel.recv_comm) : ncclCommDestroy(channel.recv_comm);
  }
  for (cudaStream_t stream : owned_streams_) cudaStreamDestroy(stream);
}

CudaDevice& CudaFabric::dev(int device) const {
  if (device < 0 || device >= static_cast<int>(devices_.size())) {
    throw ExecError(fmt::format("cuda fabric: no device {} (have {})", device, devices_.size()));
  }
  if (!local(device)) {
    throw ExecError(fmt::format("cuda fabric: device {} is another process's (this is rank {})",
                                device, process_host_ ? process_host_->group().rank() : 0));
  }
  return *devices_[static_cast<std::size_t>(device)];
}

const CudaFabric::Channel& CudaFabric::channel(const MessageTag& tag, int from_device, int to_device) const {
  auto it = prepared_.find({tag.from_stage, tag.to_stage});
  if (it == prepared_.end()) {
    throw ExecError(fmt::format("cuda fabric: the channel stage {} -> {} (device {} -> {}) was not "
                                "prepared (Backend::prepare_channels must run before the run)",
                                tag.from_stage, tag.to_stage, from_device, to_device));
  }
  const Channel& c = *it->second;
  if (c.from_device != from_device || c.to_device != to_device) {
    throw ExecError(fmt::format("cuda fabric: the channel stage {} -> {} was prepared for device {} "
                                "-> {}, not {} -> {}", tag.from_stage, tag.to_stage, c.from_device,
                                c.to_device, from_device, to_device));
  }
  return c;
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
  if (own_host_) {
    own_host_->begin_run(workers);
  } else {
    process_host_->begin_run(workers);  // a barrier: every process has cleared its channels
  }
}

void CudaFabric::worker_ended() {
  if (own_host_) {
    own_host_->worker_ended();
  } else {
    process_host_->worker_ended();
  }
}

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
  for (const auto& [id, c] : channels_) {
    for (auto [stream, device] : {std::pair{c.send_stream, c.from_device}, std::pair{c.recv_stream, c.to_device}}) {
      if (stream == nullptr) continue;  // no such end, or the end is in another process
      dev(device).make_current();
      if (failed && c.nccl) {
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
    if (devices_[d] == nullptr) continue;
    devices_[d]->make_current();
    for (auto& hold : per_device_[d].holds) {
      check(cudaEventSynchronize(hold.done), fmt::format("device {}: waiting for a transfer", d));
      give_event(static_cast<int>(d), hold.done);
    }
    per_device_[d].holds.clear();
  }
}

void CudaFabric::send(int from_device, int to_device, const MessageTag& tag, Tensor payload) {
  const int rows = payload.rows();
  const int cols = payload.cols();
  if (from_device == to_device) {
    // A stage boundary inside one device (the turn of a V placement): the tensor itself, as on
    // the CPU; one compute stream orders its producer before its consumers.
    {
      std::lock_guard lock(transfers_mutex_);
      transfers_[{tag.from_stage, tag.to_stage}].push_back(Transfer{std::move(payload), nullptr});
    }
    host_->send(from_device, to_device, tag, Tensor(nullptr, rows, cols));
    return;
  }
  const Channel& c = channel(tag, from_device, to_device);
  CudaDevice& source = dev(from_device);
  source.make_current();
  release_finished(from_device);
  const std::string what = fmt::format("device {} -> {}: sending the {}", from_device, to_device, describe(tag));
  if (c.nccl) {
    // The k-th send of this channel's communicator meets its k-th receive: no transfer record.
    cudaEvent_t ready = take_event(from_device);
    check(cudaEventRecord(ready, source.current_stream()), what);
    check(cudaStreamWaitEvent(c.send_stream, ready, 0), what);
    give_event(from_device, ready);  // a later record does not disturb the wait already enqueued
    check(ncclSend(payload.data(), payload.size(), ncclFloat, 1, c.send_comm, c.send_stream), what);
    cudaEvent_t done = take_event(from_device);
    check(cudaEventRecord(done, c.send_stream), what);
    per_device_[static_cast<std::size_t>(from_device)].holds.push_back(Hold{done, std::move(payload)});
  } else {
    // The receiver copies from the sender's buffer; it also owns this event and destroys it.
    Transfer transfer;
    check(cudaEventCreateWithFlags(&transfer.ready, cudaEventDisableTiming), what);
    check(cudaEventRecord(transfer.ready, source.current_stream()), what);
    transfer.source = std::move(payload);
    std::lock_guard lock(transfers_mutex_);
    transfers_[{tag.from_stage, tag.to_stage}].push_back(std::move(transfer));
  }
  // The host message last: when the receiver sees it, the transfer above is in its queue. It
  // carries the shape.
  host_->send(from_device, to_device, tag, Tensor(nullptr, rows, cols));
}

Tensor CudaFabric::recv(int from_device, int to_device, const MessageTag& expected, Device& device) {
  CudaDevice& target = dev(to_device);
  if (&device != &target) {
    throw ExecError(fmt::format("cuda fabric: receive for device {} asked to place it on {}",
                                to_device, device.description()));
  }
  const Tensor header = host_->recv(from_device, to_device, expected, device);  // waits, checks the tag
  auto take_transfer = [&] {
    std::lock_guard lock(transfers_mutex_);
    auto& queue = transfers_[{expected.from_stage, expected.to_stage}];
    if (queue.empty()) throw ExecError(fmt::format("cuda fabric: the {} has no transfer", describe(expected)));
    Transfer transfer = std::move(queue.front());
    queue.pop_front();
    return transfer;
  };
  if (from_device == to_device) return std::move(take_transfer().source);
  const Channel& c = channel(expected, from_device, to_device);
  target.make_current();
  release_finished(to_device);
  const std::string what = fmt::format("device {} <- {}: receiving the {}", to_device, from_device, describe(expected));
  Tensor out = target.alloc_uninitialized(header.rows(), header.cols());
  cudaEvent_t allocated = take_event(to_device);
  check(cudaEventRecord(allocated, target.current_stream()), what);
  check(cudaStreamWaitEvent(c.recv_stream, allocated, 0), what);
  give_event(to_device, allocated);
  Transfer transfer;
  if (c.nccl) {
    check(ncclRecv(out.data(), out.size(), ncclFloat, 0, c.recv_comm, c.recv_stream), what);
  } else {
    transfer = take_transfer();
    check(cudaStreamWaitEvent(c.recv_stream, transfer.ready, 0), what);
    check(cudaEventDestroy(transfer.ready), what);
    if (out.size() != 0) {
      check(cudaMemcpyAsync(out.data(), transfer.source.data(), out.size_bytes(),
                            cudaMemcpyDefault, c.recv_stream), what);  // same GPU or a peer
    }
  }
  cudaEvent_t done = take_event(to_device);
  check(cudaEventRecord(done, c.recv_stream), what);
  check(cudaStreamWaitEvent(target.current_stream(), done, 0), what);
  if (c.nccl) {
    give_event(to_device, done);
  } else {
    // The sender's buffer lives until the copy is done, then returns to the sender's free list.
    per_device_[static_cast<std::size_t>(to_device)].holds.push_back(Hold{done, std::move(transfer.source)});
  }
  return out;
}

void CudaFabric::send_control(int from_device, int to_device, std::uint64_t key,
                              std::vector<double> values) {
  host_->send_control(from_device, to_device, key, std::move(values));
}

std::vector<double> CudaFabric::recv_control(int from_device, int to_device, std::uint64_t key) {
  return host_->recv_control(from_device, to_device, key);
}

std::optional<std::vector<double>> CudaFabric::try_recv_control(int from_device, int to_device,
                                                                std::uint64_t key) {
  return host_->try_recv_control(from_device, to_device, key);
}

void CudaFabric::abort(const std::string& reason) { host_->abort(reason); }

}  // namespace zb::exec::cuda
