// Long calls that Ctrl-C can interrupt: the work runs on a thread of its own, without the GIL,
// while the calling thread waits and, every 100 ms, lets Python look at its signals. On Ctrl-C it
// asks the work to stop (sim/support/cancellation.h: loops stop before their next point), waits
// for it, and raises KeyboardInterrupt. Work that checks no cancellation (an ILP solve) still runs
// to its end before the interrupt is raised.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "sim/support/cancellation.h"

namespace zb::python {

template <typename Work>
void run_interruptibly(Work&& work) {
  namespace py = pybind11;
  clear_cancel();
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  bool interrupted = false;
  std::exception_ptr failure;
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      try {
        work();
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard lock(mutex);
      done = true;
      finished.notify_all();
    });
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) {
      if (interrupted) continue;
      lock.unlock();
      {
        py::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) {  // the KeyboardInterrupt is now Python's pending error
          interrupted = true;
          request_cancel();
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  clear_cancel();
  if (interrupted) throw py::error_already_set();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace zb::python
