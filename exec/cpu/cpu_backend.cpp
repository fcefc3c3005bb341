// The CPU backend: one thread per device, OpenBLAS on one core each, in-process channels.
#include "exec/cpu/cpu_backend.h"

#include <fmt/format.h>


#include "exec/runtime/device_threads.h"
#include "exec/runtime/exec_error.h"
#include "sim/support/error.h"

namespace zb::exec {

CpuBackend::CpuBackend(int devices) {
  if (devices < 1) throw InputError(fmt::format("cpu backend: need at least 1 device, got {}", devices));
  use_single_threaded_blas();
  const auto epoch = CpuDevice::Clock::now();
  for (int d = 0; d < devices; ++d) devices_.push_back(std::make_unique<CpuDevice>(d, epoch));
}

CpuBackend::CpuBackend(ProcessGroup& group)
    : across_processes_(std::make_unique<ProcessFabric>(group, /*carry_payloads=*/true)) {
  use_single_threaded_blas();
  devices_.resize(static_cast<std::size_t>(group.world()));
  devices_[static_cast<std::size_t>(group.rank())] = std::make_unique<CpuDevice>(group.rank(), group.epoch());
}

bool CpuBackend::is_local(int index) const {
  return index >= 0 && index < device_count() && devices_[static_cast<std::size_t>(index)] != nullptr;
}

Device& CpuBackend::device(int index) {
  if (index < 0 || index >= device_count()) {
    throw ExecError(fmt::format("cpu backend: no device {} (have {})", index, device_count()));
  }
  if (!is_local(index)) {
    throw ExecError(fmt::format("cpu backend: device {} runs in the process of rank {}, not here", index, index));
  }
  return *devices_[static_cast<std::size_t>(index)];
}

Fabric& CpuBackend::fabric() {
  if (across_processes_) return *across_processes_;
  return in_process_;
}

void CpuBackend::run_on_devices(const std::function<void(int device)>& body) {
  const std::vector<int> local = local_devices(*this);
  const int count = static_cast<int>(local.size());
  across_processes_ ? across_processes_->begin_run(count) : in_process_.begin_run(count);
  const auto failure = run_device_threads(local, fabric(), body, [&] {
    across_processes_ ? across_processes_->worker_ended() : in_process_.worker_ended();
  });
  if (failure) throw ExecError(*failure);
}

}  // namespace zb::exec
