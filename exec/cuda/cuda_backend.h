// The CUDA backend: one worker thread per device (a GPU or a green-context slice of one), the
// CUDA fabric between them, CUDA-event timing and NVTX ranges named like the schedule's text form.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/backend.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/cuda_fabric.h"
#include "exec/cuda/device_set.h"
#include "exec/cuda/green_contexts.h"
#include "exec/cuda/precision.h"
#include "sim/schedule/problem.h"
#include "sim/schedule/schedule.h"

namespace zb::exec::cuda {

// How virtual devices share their GPU: green contexts with an equal SM share each (falling back
// to streams with a warning when the driver or GPU cannot), or plain streams sharing all SMs.
enum class SmPartition { green, streams };
SmPartition parse_sm_partition(std::string_view text);  // throws InputError naming --sm-partition

struct CudaOptions {
  Precision precision = Precision::fp32;
  SmPartition sm_partition = SmPartition::green;
};

class CudaBackend final : public Backend {
 public:
  // Throws InputError when a GPU of the set does not exist, CudaError when CUDA fails.
  CudaBackend(const DeviceSet& devices, const CudaOptions& options);
  ~CudaBackend() override;

  std::string name() const override { return "cuda"; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  Device& device(int index) override;
  Fabric& fabric() override { return *fabric_; }
  void run_on_devices(const std::function<void(int device)>& body) override;

  CudaDevice& cuda_device(int index);
  // NVTX ranges for the actions of `schedule` (F3, B3, W3, F3.1, BW3), one list per device.
  void label_actions(const zb::Schedule& schedule);
  // One line: GPUs, partitioning and precision. Warnings: what fell back and why.
  std::string summary() const { return summary_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void release_green_context() const;
  void make_devices(const std::vector<DevicePlacement>& placements, Precision precision,
                    CudaDevice::Clock::time_point epoch);

  std::vector<GreenPartition> partitions_;
  std::vector<std::unique_ptr<CudaDevice>> devices_;
  std::unique_ptr<CudaFabric> fabric_;
  std::string summary_;
  std::vector<std::string> warnings_;
};

}  // namespace zb::exec::cuda
