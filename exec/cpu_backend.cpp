// The CPU backend: one thread per device, OpenBLAS on one core each, in-process channels.
#include "exec/cpu_backend.h"

#include <fmt/format.h>

#include <exception>
#include <mutex>
#include <thread>

#include "exec/exec_error.h"
#include "sim/schedule/error.h"

namespace zb::exec {

CpuBackend::CpuBackend(int devices) {
  if (devices < 1) throw InputError(fmt::format("cpu backend: need at least 1 device, got {}", devices));
  use_single_threaded_blas();
  const auto epoch = CpuDevice::Clock::now();
  for (int d = 0; d < devices; ++d) devices_.push_back(std::make_unique<CpuDevice>(d, epoch));
}

Device& CpuBackend::device(int index) {
  if (index < 0 || index >= device_count()) {
    throw ExecError(fmt::format("cpu backend: no device {} (have {})", index, device_count()));
  }
  return *devices_[static_cast<std::size_t>(index)];
}

void CpuBackend::run_on_devices(const std::function<void(int device)>& body) {
  const int count = device_count();
  fabric_.begin_run(count);
  std::mutex failure_mutex;
  std::string first_failure;
  bool failed = false;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(count));
  for (int d = 0; d < count; ++d) {
    workers.emplace_back([&, d] {
      try {
        body(d);
      } catch (const std::exception& error) {
        {
          std::lock_guard lock(failure_mutex);
          if (!failed) {
            failed = true;
            first_failure = error.what();
          }
        }
        fabric_.abort(error.what());
      }
      fabric_.worker_ended();
    });
  }
  for (auto& worker : workers) worker.join();
  if (failed) throw ExecError(first_failure);
}

#ifndef ZB_EXEC_HAVE_CUDA
std::unique_ptr<Backend> make_backend(std::string_view name, int devices) {
  if (name == "cpu") return std::make_unique<CpuBackend>(devices);
  if (name == "cuda") {
    throw InputError("--backend cuda: this build has no CUDA backend (configure with nvcc and "
                     "ZB_WITH_CUDA=ON)");
  }
  throw InputError(fmt::format("--backend '{}': unknown backend (known: cpu, cuda)", name));
}
#endif

}  // namespace zb::exec
