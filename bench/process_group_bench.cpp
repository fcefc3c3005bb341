// The wire of multi-process runs, measured between real MPI ranks: round trips of frames through
// the process group (what a tensor or control message of a run takes: MPI point-to-point, the
// receiver's polling thread, the handler), throughput for large frames, and the CPU an idle
// receiver costs. Run: mpirun -np 2 ./bench/zb_bench_process_group (ranks 0 and 1 take part;
// with more ranks, rank 0 also measures rank 0 <-> the last rank).
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "exec/multiprocess/mpi_transport.h"
#include "exec/multiprocess/process_group.h"

namespace {

using Clock = std::chrono::steady_clock;
using zb::exec::ProcessGroup;

class Mailbox {
 public:
  void push(std::vector<std::byte> body) {
    std::lock_guard lock(mutex_);
    frames_.push_back(std::move(body));
    arrived_.notify_one();
  }
  std::vector<std::byte> pop() {
    std::unique_lock lock(mutex_);
    arrived_.wait(lock, [&] { return !frames_.empty(); });
    auto body = std::move(frames_.front());
    frames_.pop_front();
    return body;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::vector<std::byte>> frames_;
};

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main() {
  zb::exec::GroupOptions options;
  options.silence_timeout_s = 0;  // a benchmark may pause
  ProcessGroup group(zb::exec::start_mpi("zb_bench_process_group"), options);
  const int rank = group.rank();
  const int peer = group.world() - 1;
  if (group.world() < 2) {
    std::fprintf(stderr, "zb_bench_process_group: run it with mpirun -np 2 (or more)\n");
    return 2;
  }
  Mailbox replies;
  group.set_handler(
      [&](int from, std::uint8_t kind, std::vector<std::byte> body) {
        if (rank == 0) {
          replies.push(std::move(body));
        } else {
          group.send(from, kind, body);  // echo
        }
      },
      nullptr);
  if (rank == 0) {
    fmt::print("{}\nrank 0 <-> rank {}: frames through ProcessGroup over MPI\n", group.describe(), peer);
    fmt::print("{:>10} {:>8} {:>14} {:>14} {:>14}\n", "bytes", "trips", "median rt us", "min rt us", "GB/s (both ways)");
    for (const std::size_t size : {std::size_t{64}, std::size_t{64} << 10, std::size_t{4} << 20}) {
      const int trips = size >= (std::size_t{1} << 20) ? 50 : 2000;
      const std::vector<std::byte> frame(size);
      std::vector<double> times;
      for (int i = 0; i < trips + 10; ++i) {
        const auto t1 = Clock::now();
        group.send(peer, 1, frame);
        replies.pop();
        if (i >= 10) times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t1).count());
      }
      std::sort(times.begin(), times.end());
      const double median = times[times.size() / 2];
      fmt::print("{:>10} {:>8} {:>14.1f} {:>14.1f} {:>14.2f}\n", size, trips, median, times.front(),
                 2.0 * static_cast<double>(size) / (median * 1e3));
    }
    // An idle receiver: its polling thread (yield for 200 us, then 50 us sleeps) over one second.
    const double before = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    fmt::print("idle: this rank used {:.1f}% of one core over 1 s (receiver polling, heartbeats off)\n",
               100.0 * (cpu_seconds() - before));
  }
  group.barrier(1);
  group.set_handler(nullptr, nullptr);
  group.finish();
  return 0;
}
