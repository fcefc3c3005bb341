// A progress bar with an ETA on stderr, drawn only when stderr is a terminal.
#pragma once

#include <chrono>
#include <mutex>

namespace zb::sweep {

class Progress {
 public:
  // total: points to run now; enabled: draw at all (false when stderr is not a terminal).
  Progress(long total, bool enabled);
  // One more point done; redraws at most ten times a second.
  void tick();
  // Final state and a newline.
  void finish();

 private:
  void draw(bool force);

  long total_;
  long done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  std::mutex mutex_;
};

}  // namespace zb::sweep
