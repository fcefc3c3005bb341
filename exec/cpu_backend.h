// The CPU backend: one thread per device, OpenBLAS on one core each, in-process channels.
#pragma once

#include <memory>
#include <vector>

#include "exec/backend.h"
#include "exec/cpu_device.h"
#include "exec/cpu_fabric.h"

namespace zb::exec {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int devices);

  std::string name() const override { return "cpu"; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  Device& device(int index) override;
  Fabric& fabric() override { return fabric_; }
  void run_on_devices(const std::function<void(int device)>& body) override;

 private:
  std::vector<std::unique_ptr<CpuDevice>> devices_;
  CpuFabric fabric_;
};

}  // namespace zb::exec
