// A deadline for what no timeout of ours covers: MPI's own start-up (MPI_Init and the
// communicator), which waits for every rank of the job for ever. A launcher such as mpirun ends
// the job when a rank exits before MPI_Init, but others (srun, a scheduler's own start) need not;
// past the deadline this ends the process with exit code 1, saying why on stderr. Destroyed in
// time (start-up finished), it does nothing.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace zb::exec {

class StartupWatchdog {
 public:
  StartupWatchdog(double seconds, std::string message) : message_(std::move(message)) {
    const auto limit = std::chrono::duration<double>(std::clamp(seconds, 0.0, 1e9));
    thread_ = std::thread([this, limit] {
      std::unique_lock lock(mutex_);
      if (finished_.wait_for(lock, limit, [&] { return done_; })) return;
      std::fputs(message_.c_str(), stderr);
      std::fflush(stderr);
      std::_Exit(1);  // MPI cannot be left cleanly from inside MPI_Init
    });
  }
  ~StartupWatchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    finished_.notify_all();
    thread_.join();
  }
  StartupWatchdog(const StartupWatchdog&) = delete;
  StartupWatchdog& operator=(const StartupWatchdog&) = delete;

 private:
  std::string message_;
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace zb::exec
