// Running one worker thread per local device, the way every backend does.
#include "exec/runtime/device_threads.h"

#include <exception>
#include <mutex>
#include <thread>

namespace zb::exec {

std::vector<int> local_devices(const Backend& backend) {
  std::vector<int> local;
  for (int d = 0; d < backend.device_count(); ++d) {
    if (backend.is_local(d)) local.push_back(d);
  }
  return local;
}

std::optional<std::string> run_device_threads(const std::vector<int>& devices, Fabric& fabric,
                                              const std::function<void(int device)>& body,
                                              const std::function<void()>& worker_ended) {
  std::mutex failure_mutex;
  std::optional<std::string> first_failure;
  std::vector<std::thread> workers;
  workers.reserve(devices.size());
  for (int d : devices) {
    workers.emplace_back([&, d] {
      try {
        body(d);
      } catch (const std::exception& error) {
        {
          std::lock_guard lock(failure_mutex);
          if (!first_failure) first_failure = error.what();
        }
        fabric.abort(error.what());
      }
      worker_ended();
    });
  }
  for (auto& worker : workers) worker.join();
  return first_failure;
}

}  // namespace zb::exec
