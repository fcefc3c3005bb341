// A thread pool for evaluator points, a pool of forked workers for SimGrid points; rows are
// reordered so that `done` sees them in point order.
#include "sim/sweep/runner.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "sim/schedule/child_process.h"
#include "sim/schedule/error.h"

namespace zb::sweep {

namespace {

// Emits the finished prefix of `slots` in order.
struct InOrder {
  std::vector<std::optional<Row>> slots;
  std::size_t next = 0;
  const std::function<void(const Row&)>& done;

  void put(std::size_t i, Row row) {
    slots[i] = std::move(row);
    while (next < slots.size() && slots[next]) {
      done(*slots[next]);
      slots[next].reset();
      ++next;
    }
  }
};

void run_threads(const Grid& grid, const std::vector<long>& points, int jobs,
                 const std::function<void(const Row&)>& done) {
  InOrder order{std::vector<std::optional<Row>>(points.size()), 0, done};
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr failure;
  auto worker = [&] {
    while (true) {
      const std::size_t i = next++;
      if (i >= points.size()) return;
      try {
        Row row = run_point(grid, grid.point(points[i]));
        std::lock_guard lock(mutex);
        if (failure) return;
        order.put(i, std::move(row));
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        next = points.size();
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (auto& thread : threads) thread.join();
  if (failure) std::rethrow_exception(failure);
}

void put_string(std::string& out, const std::string& text) {
  const auto size = static_cast<std::uint32_t>(text.size());
  out.append(reinterpret_cast<const char*>(&size), sizeof size);
  out += text;
}

// Takes one whole record off the front of `buffer` if there is one.
std::optional<std::pair<std::size_t, Row>> take_record(std::string& buffer) {
  std::size_t pos = 0;
  auto need = [&](std::size_t n) { return buffer.size() >= pos + n; };
  if (!need(sizeof(std::uint64_t))) return std::nullopt;
  std::uint64_t slot = 0;
  std::memcpy(&slot, buffer.data(), sizeof slot);
  pos += sizeof slot;
  std::string parts[3];
  for (auto& part : parts) {
    if (!need(sizeof(std::uint32_t))) return std::nullopt;
    std::uint32_t size = 0;
    std::memcpy(&size, buffer.data() + pos, sizeof size);
    pos += sizeof size;
    if (!need(size)) return std::nullopt;
    part = buffer.substr(pos, size);
    pos += size;
  }
  buffer.erase(0, pos);
  Row row;
  row.status = std::move(parts[0]);
  row.csv_line = std::move(parts[1]);
  row.json_line = std::move(parts[2]);
  return std::pair{static_cast<std::size_t>(slot), std::move(row)};
}

void run_processes(const Grid& grid, const std::vector<long>& points, int jobs,
                   const std::function<void(const Row&)>& done) {
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(points.size())));
  std::fflush(stdout);
  std::fflush(stderr);
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::string buffer;
  };
  std::vector<Worker> workers(jobs);
  for (int k = 0; k < jobs; ++k) {
    // Worker k runs points k, k + jobs, ... and streams one record per point.
    const ChildProcess child = spawn_child(
        [&, k](int fd) {
          try {
            for (std::size_t i = static_cast<std::size_t>(k); i < points.size(); i += static_cast<std::size_t>(jobs)) {
              const Row row = run_point(grid, grid.point(points[i]));
              std::string record;
              const std::uint64_t slot = i;
              record.append(reinterpret_cast<const char*>(&slot), sizeof slot);
              put_string(record, row.status);
              put_string(record, row.csv_line);
              put_string(record, row.json_line);
              if (!write_all(fd, record)) break;
            }
          } catch (const std::exception& e) {
            std::fprintf(stderr, "zbsim sweep: worker %d: %s\n", k, e.what());
            return 1;
          }
          return 0;
        },
        false);
    workers[k].pid = child.pid;
    workers[k].fd = child.fd;
  }
  InOrder order{std::vector<std::optional<Row>>(points.size()), 0, done};
  std::size_t received = 0;
  int open = jobs;
  std::vector<pollfd> polls;
  while (open > 0) {
    polls.clear();
    for (const auto& w : workers) {
      if (w.fd >= 0) polls.push_back({w.fd, POLLIN, 0});
    }
    if (::poll(polls.data(), polls.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("sweep: poll failed: {}", std::strerror(errno)));
    }
    for (auto& w : workers) {
      if (w.fd < 0) continue;
      bool ready = false;
      for (const auto& p : polls) ready = ready || (p.fd == w.fd && p.revents != 0);
      if (!ready) continue;
      char chunk[65536];
      const ssize_t n = ::read(w.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(w.fd);
        w.fd = -1;
        --open;
        continue;
      }
      w.buffer.append(chunk, static_cast<std::size_t>(n));
      while (auto record = w.buffer.empty() ? std::nullopt : take_record(w.buffer)) {
        record->second.point = points[record->first];
        order.put(record->first, std::move(record->second));
        ++received;
      }
    }
  }
  bool failed = false;
  for (const auto& w : workers) {
    const int status = reap_child(w.pid);
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  if (failed || received != points.size()) {
    throw Error(fmt::format("sweep: a worker process failed after {} of {} points (the rows written so far are kept: "
                            "rerun with --resume)",
                            received, points.size()));
  }
}

}  // namespace

void run_points(const Grid& grid, const std::vector<long>& points, int jobs, bool processes,
                      const std::function<void(const Row&)>& done) {
  if (points.empty()) return;
  if (processes) {
    run_processes(grid, points, jobs, done);
  } else {
    run_threads(grid, points, std::max(1, jobs), done);
  }
}

}  // namespace zb::sweep
