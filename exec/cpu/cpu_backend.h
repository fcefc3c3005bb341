// The CPU backend: one thread per device, OpenBLAS on one core each, in-process channels.
#pragma once

#include <memory>
#include <vector>

#include "exec/runtime/backend.h"
#include "exec/cpu/cpu_device.h"
#include "exec/runtime/host_fabric.h"
#include "exec/multiprocess/process_fabric.h"
#include "exec/multiprocess/process_group.h"

namespace zb::exec {

class CpuBackend final : public Backend {
 public:
  // All devices in this process.
  explicit CpuBackend(int devices);
  // One device per process: this process runs device group.rank() of group.world(), on the
  // group's shared clock, and the tensors travel over the group's connections.
  explicit CpuBackend(ProcessGroup& group);

  std::string name() const override { return "cpu"; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  bool is_local(int index) const override;
  Device& device(int index) override;
  Fabric& fabric() override;
  void run_on_devices(const std::function<void(int device)>& body) override;

 private:
  std::vector<std::unique_ptr<CpuDevice>> devices_;  // null where the device is another process's
  HostFabric in_process_;
  std::unique_ptr<ProcessFabric> across_processes_;
};

}  // namespace zb::exec
