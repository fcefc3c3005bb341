// The backend interface: devices, the fabric between them, and running one worker per device.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exec/runtime/device.h"
#include "exec/runtime/fabric.h"

namespace zb::exec {

// Everything hardware-specific lives behind this interface (CPU threads and OpenBLAS here; CUDA
// streams, cuBLAS and NCCL in the CUDA backend). The engine, the model, the optimizer and the
// post-validation protocol are written once against it.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;  // the trace's engine name: "cpu", "cuda"
  virtual int device_count() const = 0;  // every pipeline device of the run
  // Whether `index` runs in this process. All do, except in a multi-process run (one device per
  // process): there device() and run_on_devices() cover the local devices only.
  virtual bool is_local(int index) const { return index >= 0 && index < device_count(); }
  virtual Device& device(int index) = 0;
  virtual Fabric& fabric() = 0;

  // Called by the engine before a run with the device of every stage (stage_device[s]): a fabric
  // that needs per-channel resources (one NCCL communicator per stage boundary and direction)
  // sets them up here, outside the device threads.
  virtual void prepare_channels(const std::vector<int>& stage_device) { (void)stage_device; }

  // Runs body(d) for every local device d concurrently and returns when all have ended. The first
  // failure aborts the fabric, so no device waits forever, and is rethrown after every worker has
  // ended (as an ExecError carrying the failing worker's message).
  virtual void run_on_devices(const std::function<void(int device)>& body) = 0;
};

// Choosing a backend by name: make_backend (exec/cli/backends.h).

}  // namespace zb::exec
