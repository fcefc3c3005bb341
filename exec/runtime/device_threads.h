// Running one worker thread per local device, the way every backend does.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "exec/runtime/backend.h"

namespace zb::exec {

// The devices of `backend` that run in this process, in order.
std::vector<int> local_devices(const Backend& backend);

// Runs body(d) on a thread per device in `devices`. The first failure aborts `fabric` (so no
// other worker waits forever) and its message is returned once every thread has ended;
// worker_ended() runs after each worker, failed or not. nullopt: all succeeded.
std::optional<std::string> run_device_threads(const std::vector<int>& devices, Fabric& fabric,
                                              const std::function<void(int device)>& body,
                                              const std::function<void()>& worker_ended);

}  // namespace zb::exec
