// The CUDA backend: one worker thread per device (a GPU or a green-context slice of one), the
// CUDA fabric between them, CUDA-event timing and NVTX ranges named like the schedule's text form.
// In a multi-process run (one GPU per process) this process's device only.
#include "exec/cuda/detail/cuda_backend.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "exec/cuda/detail/cuda_check.h"
#include "exec/runtime/device_threads.h"
#include "sim/core/action.h"
#include "sim/support/error.h"

namespace zb::exec::cuda {

int usable_gpu_count() {
  // Every stream its own hardware work queue (the default is 8), so a wait or a blocked NCCL
  // kernel at the head of one stream never holds up another. Read when the context is created;
  // a value set by the user wins.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  std::string why;
  if (!cuda_available(&why)) throw InputError(fmt::format("--backend cuda: no usable GPU ({})", why));
  int gpus = 0;
  check(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
  return gpus;
}

SmPartition parse_sm_partition(std::string_view text) {
  if (text == "green") return SmPartition::green;
  if (text == "streams") return SmPartition::streams;
  throw InputError(fmt::format("--sm-partition '{}': expected green or streams", text));
}

namespace {

std::string gpu_name(int ordinal) {
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, ordinal), fmt::format("cuda:{}: cudaGetDeviceProperties", ordinal));
  return properties.name;
}

// Refuses GPUs this machine does not have as bad input.
void check_gpus(const std::vector<int>& ordinals, const std::string& flag) {
  const int gpus = usable_gpu_count();
  for (int ordinal : ordinals) {
    if (ordinal < 0 || ordinal >= gpus) {
      throw InputError(fmt::format("--devices {}: there is no cuda:{} (this machine has {} GPU{})",
                                   flag, ordinal, gpus, gpus == 1 ? "" : "s"));
    }
  }
}

}  // namespace

CudaBackend::CudaBackend(const DeviceSet& devices, const CudaOptions& options)
    : on_warning_(options.on_warning) {
  check_gpus(devices.ordinals, devices.describe());
  const auto epoch = CudaDevice::Clock::now();
  std::vector<DevicePlacement> placements;
  if (devices.kind == DeviceSet::Kind::virtual_gpu) {
    const int ordinal = devices.ordinals.at(0);
    const int total_sms = sm_count_of(ordinal);
    if (options.sm_partition == SmPartition::green && devices.count > 1) {
      try {
        partitions_ = create_green_partitions(ordinal, devices.count);
      } catch (const CudaError& error) {
        warn(fmt::format("green contexts unavailable ({}); the {} virtual devices share all {} "
                         "SMs through plain streams", error.what(), devices.count, total_sms));
      }
    }
    auto virtual_placements = [&] {
      placements.clear();
      for (int d = 0; d < devices.count; ++d) {
        DevicePlacement placement;
        placement.ordinal = ordinal;
        if (!partitions_.empty()) {
          placement.green = partitions_[static_cast<std::size_t>(d)].green;
          placement.context = partitions_[static_cast<std::size_t>(d)].context;
          placement.sm_count = partitions_[static_cast<std::size_t>(d)].sm_count;
        } else {
          placement.sm_count = total_sms;
        }
        placement.label = fmt::format("cuda:{} virtual {}/{} ({} SMs)", ordinal, d, devices.count, placement.sm_count);
        placements.push_back(placement);
      }
    };
    virtual_placements();
    try {
      make_devices(placements, options.precision, epoch);
    } catch (const CudaError& error) {
      if (partitions_.empty()) throw;
      // Green contexts were created but cannot host a device here: plain streams instead.
      devices_.clear();
      destroy_green_partitions(partitions_);
      check(cudaSetDevice(ordinal), "cudaSetDevice(primary context)");
      warn(fmt::format("green contexts unusable ({}); the {} virtual devices share all {} SMs "
                       "through plain streams", error.what(), devices.count, total_sms));
      virtual_placements();
      make_devices(placements, options.precision, epoch);
    }
    summary_ = fmt::format("{} ({}, {} SMs): {}", devices.describe(), gpu_name(ordinal), total_sms,
                           partitions_.empty() ? "plain streams, all SMs shared"
                                               : fmt::format("{} green contexts x {} SMs",
                                                             devices.count, partitions_.front().sm_count));
  } else {
    std::vector<std::string> names;
    for (int d = 0; d < devices.count; ++d) {
      DevicePlacement placement;
      placement.ordinal = devices.ordinals[static_cast<std::size_t>(d)];
      placement.sm_count = sm_count_of(placement.ordinal);
      placement.label = fmt::format("cuda:{}", placement.ordinal);
      placements.push_back(placement);
      names.push_back(gpu_name(placement.ordinal));
    }
    make_devices(placements, options.precision, epoch);
    summary_ = fmt::format("{} ({})", devices.describe(), fmt::join(names, ", "));
  }
  summary_ += fmt::format(", {} GEMMs", precision_name(options.precision));
  std::vector<CudaDevice*> raw;
  for (auto& device : devices_) raw.push_back(device.get());
  fabric_ = std::make_unique<CudaFabric>(raw);
  if (fabric_->spans_gpus()) summary_ += ", NCCL between GPUs (a communicator per stage boundary and direction)";
  release_green_context();
}

CudaBackend::CudaBackend(ProcessGroup& group, int gpu, const CudaOptions& options)
    : group_(&group), on_warning_(options.on_warning) {
  const int rank = group.rank();
  const int world = group.world();
  check_gpus({gpu}, fmt::format("cuda:{} (rank {})", gpu, rank));
  DevicePlacement placement;
  placement.ordinal = gpu;
  placement.sm_count = sm_count_of(gpu);
  placement.label = fmt::format("cuda:{} (rank {})", gpu, rank);
  devices_.resize(static_cast<std::size_t>(world));
  // The group's epoch is one instant on every rank: event times of all processes share a clock.
  devices_[static_cast<std::size_t>(rank)] =
      std::make_unique<CudaDevice>(rank, placement, options.precision, group.epoch());
  process_fabric_ = std::make_unique<ProcessFabric>(group, /*carry_payloads=*/false);
  std::vector<CudaDevice*> raw;
  for (auto& device : devices_) raw.push_back(device.get());
  fabric_ = std::make_unique<CudaFabric>(raw, *process_fabric_);
  // The ranks any placement can connect this one to: the neighbours, and 0 with world-1 (the
  // wrap-around of an interleaved placement).
  std::vector<int> peers;
  for (int r : {rank - 1, rank + 1, rank == 0 ? world - 1 : -1, rank == world - 1 ? 0 : -1}) {
    if (r >= 0 && r < world && r != rank && std::find(peers.begin(), peers.end(), r) == peers.end()) {
      peers.push_back(r);
    }
  }
  std::sort(peers.begin(), peers.end());
  summary_ = fmt::format("rank {} of {} on cuda:{} ({}), {} GEMMs, {}", rank, world, gpu, gpu_name(gpu),
                         precision_name(options.precision),
                         peers.empty() ? std::string("no other rank")
                                       : fmt::format("NCCL to ranks {}", fmt::join(peers, ",")));
}

void CudaBackend::warn(std::string warning) {
  if (on_warning_) on_warning_(warning);
  warnings_.push_back(std::move(warning));
}

void CudaBackend::prepare_channels(const std::vector<int>& stage_device) {
  const std::size_t known = fabric_->warnings().size();
  try {
    fabric_->prepare_channels(stage_device);
  } catch (...) {
    release_green_context();
    throw;
  }
  release_green_context();
  for (std::size_t i = known; i < fabric_->warnings().size(); ++i) warn(fabric_->warnings()[i]);
}

void CudaBackend::release_green_context() const {
  // A green context may be current to one thread at a time: the calling thread goes back to
  // the primary context before (or after) the workers take theirs.
  if (!partitions_.empty()) check(cudaSetDevice(devices_.front()->placement().ordinal), "cudaSetDevice(primary context)");
}

void CudaBackend::make_devices(const std::vector<DevicePlacement>& placements, Precision precision,
                               CudaDevice::Clock::time_point epoch) {
  devices_.clear();
  for (std::size_t d = 0; d < placements.size(); ++d) {
    devices_.push_back(std::make_unique<CudaDevice>(static_cast<int>(d), placements[d], precision, epoch));
  }
}

CudaBackend::~CudaBackend() {
  fabric_.reset();  // links first: they hold buffers of the devices (and use the process fabric)
  process_fabric_.reset();
  devices_.clear();
  destroy_green_partitions(partitions_);
}

bool CudaBackend::is_local(int index) const {
  return index >= 0 && index < device_count() && devices_[static_cast<std::size_t>(index)] != nullptr;
}

Device& CudaBackend::device(int index) { return cuda_device(index); }

CudaDevice& CudaBackend::cuda_device(int index) {
  if (index < 0 || index >= device_count()) {
    throw ExecError(fmt::format("cuda backend: no device {} (have {})", index, device_count()));
  }
  if (!is_local(index)) {
    throw ExecError(fmt::format("cuda backend: device {} runs in the process of rank {}, not in "
                                "this one (rank {})", index, index, group_ ? group_->rank() : 0));
  }
  return *devices_[static_cast<std::size_t>(index)];
}

void CudaBackend::label_actions(const zb::Schedule& schedule) {
  for (int d = 0; d < device_count() && d < schedule.device_count(); ++d) {
    if (!is_local(d)) continue;
    std::vector<std::string> labels;
    for (const zb::Action& action : schedule.devices[static_cast<std::size_t>(d)]) {
      labels.push_back(zb::to_token(action));
    }
    cuda_device(d).set_action_labels(std::move(labels));
  }
}

void CudaBackend::run_on_devices(const std::function<void(int device)>& body) {
  const std::vector<int> local = local_devices(*this);
  release_green_context();
  fabric_->begin_run(static_cast<int>(local.size()));
  const auto failure = run_device_threads(
      local, *fabric_,
      [&](int d) {
        cuda_device(d).make_current();  // the runtime's current device is per thread
        body(d);
      },
      [&] { fabric_->worker_ended(); });
  fabric_->end_run(failure.has_value());
  if (failure) throw ExecError(*failure);
}

}  // namespace zb::exec::cuda
