// The backend interface: devices, the fabric between them, and running one worker per device.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "exec/device.h"
#include "exec/fabric.h"

namespace zb::exec {

// Everything hardware-specific lives behind this interface (CPU threads and OpenBLAS here; CUDA
// streams, cuBLAS and NCCL in the CUDA backend). The engine, the model, the optimizer and the
// post-validation protocol are written once against it.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;  // the trace's engine name: "cpu", "cuda"
  virtual int device_count() const = 0;
  virtual Device& device(int index) = 0;
  virtual Fabric& fabric() = 0;

  // Runs body(d) for every device d concurrently and returns when all have ended. The first
  // failure aborts the fabric, so no device waits forever, and is rethrown after every worker has
  // ended (as an ExecError carrying the failing worker's message).
  virtual void run_on_devices(const std::function<void(int device)>& body) = 0;
};

// "cpu" (always) or "cuda" (when built with CUDA); throws InputError naming the backend otherwise.
std::unique_ptr<Backend> make_backend(std::string_view name, int devices);

}  // namespace zb::exec
