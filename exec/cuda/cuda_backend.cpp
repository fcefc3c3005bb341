// The CUDA backend: one worker thread per device (a GPU or a green-context slice of one), the
// CUDA fabric between them, CUDA-event timing and NVTX ranges named like the schedule's text form.
#include "exec/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "exec/cuda/cuda_check.h"
#include "sim/schedule/action.h"
#include "sim/schedule/error.h"

namespace zb::exec::cuda {

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

}  // namespace

CudaBackend::CudaBackend(const DeviceSet& devices, const CudaOptions& options) {
  // Every stream its own hardware work queue (the default is 8), so a wait or a blocked NCCL
  // kernel at the head of one stream never holds up another. Read when the context is created;
  // a value set by the user wins.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  std::string why;
  if (!cuda_available(&why)) throw InputError(fmt::format("--backend cuda: no usable GPU ({})", why));
  int gpus = 0;
  check(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
  for (int ordinal : devices.ordinals) {
    if (ordinal >= gpus) {
      throw InputError(fmt::format("--devices {}: there is no cuda:{} (this machine has {} GPU{})",
                                   devices.describe(), ordinal, gpus, gpus == 1 ? "" : "s"));
    }
  }
  const auto epoch = CudaDevice::Clock::now();
  std::vector<DevicePlacement> placements;
  if (devices.kind == DeviceSet::Kind::virtual_gpu) {
    const int ordinal = devices.ordinals.at(0);
    const int total_sms = sm_count_of(ordinal);
    if (options.sm_partition == SmPartition::green && devices.count > 1) {
      try {
        partitions_ = create_green_partitions(ordinal, devices.count);
      } catch (const CudaError& error) {
        warnings_.push_back(fmt::format("green contexts unavailable ({}); the {} virtual devices "
                                        "share all {} SMs through plain streams",
                                        error.what(), devices.count, total_sms));
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
      warnings_.push_back(fmt::format("green contexts unusable ({}); the {} virtual devices share "
                                      "all {} SMs through plain streams",
                                      error.what(), devices.count, total_sms));
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
  if (fabric_->uses_nccl()) summary_ += ", NCCL links between neighbouring GPUs";
  for (const auto& warning : fabric_->warnings()) warnings_.push_back(warning);
  release_green_context();
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
  fabric_.reset();  // links first: they hold buffers of the devices
  devices_.clear();
  destroy_green_partitions(partitions_);
}

Device& CudaBackend::device(int index) { return cuda_device(index); }

CudaDevice& CudaBackend::cuda_device(int index) {
  if (index < 0 || index >= device_count()) {
    throw ExecError(fmt::format("cuda backend: no device {} (have {})", index, device_count()));
  }
  return *devices_[static_cast<std::size_t>(index)];
}

void CudaBackend::label_actions(const zb::Schedule& schedule) {
  for (int d = 0; d < device_count() && d < schedule.device_count(); ++d) {
    std::vector<std::string> labels;
    for (const zb::Action& action : schedule.devices[static_cast<std::size_t>(d)]) {
      labels.push_back(zb::to_token(action));
    }
    cuda_device(d).set_action_labels(std::move(labels));
  }
}

void CudaBackend::run_on_devices(const std::function<void(int device)>& body) {
  const int count = device_count();
  release_green_context();
  fabric_->begin_run(count);
  std::mutex failure_mutex;
  std::string first_failure;
  bool failed = false;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(count));
  for (int d = 0; d < count; ++d) {
    workers.emplace_back([&, d] {
      try {
        cuda_device(d).make_current();  // the runtime's current device is per thread
        body(d);
      } catch (const std::exception& error) {
        {
          std::lock_guard lock(failure_mutex);
          if (!failed) {
            failed = true;
            first_failure = error.what();
          }
        }
        fabric_->abort(error.what());
      }
      fabric_->worker_ended();
    });
  }
  for (auto& worker : workers) worker.join();
  fabric_->end_run(failed);
  if (failed) throw ExecError(first_failure);
}

}  // namespace zb::exec::cuda
