// The CUDA backend: one worker thread per device (a GPU or a green-context slice of one), the
// CUDA fabric between them, CUDA-event timing and NVTX ranges named like the schedule's text form.
// In a multi-process run (one GPU per process) this process's device only.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/runtime/backend.h"
#include "exec/cuda/detail/cuda_device.h"
#include "exec/cuda/detail/cuda_fabric.h"
#include "exec/cuda/detail/device_set.h"
#include "exec/cuda/detail/green_contexts.h"
#include "exec/cuda/detail/precision.h"
#include "exec/multiprocess/process_fabric.h"
#include "exec/multiprocess/process_group.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb::exec::cuda {

// How virtual devices share their GPU: green contexts with an equal SM share each (falling back
// to streams with a warning when the driver or GPU cannot), or plain streams sharing all SMs.
enum class SmPartition { green, streams };
SmPartition parse_sm_partition(std::string_view text);  // throws InputError naming --sm-partition

// How many GPUs this process sees; throws InputError when none is usable. Call it before any
// CUDA context exists (it sets the environment the contexts read).
int usable_gpu_count();

struct CudaOptions {
  Precision precision = Precision::fp32;
  SmPartition sm_partition = SmPartition::green;
  // Called with each fallback warning as it happens (some come only when a run's channels are
  // prepared); every warning is also kept in warnings().
  std::function<void(const std::string&)> on_warning;
};

class CudaBackend final : public Backend {
 public:
  // Throws InputError when a GPU of the set does not exist, CudaError when CUDA fails.
  CudaBackend(const DeviceSet& devices, const CudaOptions& options);
  // One device per process: this process runs pipeline device group.rank() of group.world() on
  // GPU `gpu`, with its event times on the group's shared clock; the host messages cross the
  // group and the tensors travel by NCCL. `group` must outlive the backend.
  CudaBackend(ProcessGroup& group, int gpu, const CudaOptions& options);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  bool is_local(int index) const override;
  // Throws ExecError naming the process of a device that is not this one's.
  Device& device(int index) override;
  Fabric& fabric() override { return *fabric_; }
  // One NCCL communicator per stage boundary and direction between GPUs (see CudaFabric).
  void prepare_channels(const std::vector<int>& stage_device) override;
  void run_on_devices(const std::function<void(int device)>& body) override;

  CudaDevice& cuda_device(int index);
  // NVTX ranges for the actions of `schedule` (F3, B3, W3, F3.1, BW3), one list per device.
  void label_actions(const zb::Schedule& schedule);
  // One line: GPUs, partitioning and precision. Warnings: what fell back and why.
  std::string summary() const { return summary_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void warn(std::string warning);
  void release_green_context() const;
  void make_devices(const std::vector<DevicePlacement>& placements, Precision precision,
                    CudaDevice::Clock::time_point epoch);

  std::vector<GreenPartition> partitions_;
  std::vector<std::unique_ptr<CudaDevice>> devices_;  // null where the device is another process's
  ProcessGroup* group_ = nullptr;                      // multi-process runs
  std::unique_ptr<ProcessFabric> process_fabric_;      // the host side under fabric_ (multi-process)
  std::unique_ptr<CudaFabric> fabric_;
  std::string summary_;
  std::vector<std::string> warnings_;
  std::function<void(const std::string&)> on_warning_;
};

}  // namespace zb::exec::cuda
