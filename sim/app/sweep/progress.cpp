// Progress bar: "[#####.....] 120/400  30%  0:12 elapsed, ETA 0:28".
#include "sim/app/sweep/progress.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace zb::sweep {

namespace {

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(long total, bool enabled)
    : total_(total), enabled_(enabled && total > 0), start_(std::chrono::steady_clock::now()), last_draw_(start_) {
  if (enabled_) draw(true);
}

void Progress::tick() {
  std::lock_guard lock(mutex_);
  ++done_;
  draw(false);
}

void Progress::finish() {
  std::lock_guard lock(mutex_);
  if (!enabled_) return;
  draw(true);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100) && done_ < total_) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done_ / total_);
  std::string bar(filled, '#');
  bar.append(kWidth - filled, '.');
  std::string eta = "ETA --:--";
  if (done_ > 0) eta = "ETA " + clock_text(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_));
  fmt::print(stderr, "\r[{}] {}/{} {:3}%  {} elapsed, {}  ", bar, done_, total_, 100 * done_ / total_,
             clock_text(elapsed), eta);
  std::fflush(stderr);
}

}  // namespace zb::sweep
