// A thread pool for evaluator points, a pool of forked workers for SimGrid points; rows are
// reordered so that `done` sees them in point order.
#include "sim/app/sweep/detail/runner.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>

#include "sim/support/child_process.h"
#include "sim/support/error.h"
#include "sim/support/parallel_for.h"

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
  std::mutex mutex;
  parallel_for(points.size(), jobs, [&](std::size_t i) {
    Row row = run_point(grid, grid.point(points[i]));
    std::lock_guard lock(mutex);
    order.put(i, std::move(row));
  });
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

// How a worker process ended, for messages: "killed by signal 9 (Killed)", "exit code 3".
std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("exit code {}", WEXITSTATUS(status));
}

// Worker k first runs slots k, k + jobs, ... and streams one record per point. A worker killed
// from outside (the OOM killer, a signal) does not end the sweep: its remaining points go to a
// new worker; a point whose worker dies twice becomes an "error" row naming the signal, so no
// point goes silently missing. A worker that fails by itself (exit 1: an error it reported)
// still fails the sweep.
void run_processes(const Grid& grid, const std::vector<long>& points, int jobs,
                   const std::function<void(const Row&)>& done) {
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(points.size())));
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::string buffer;
    std::vector<std::size_t> slots;  // its points, in the order it runs them
    std::size_t received = 0;        // records read back so far
  };
  auto start = [&](std::vector<std::size_t> slots) {
    std::fflush(stdout);
    std::fflush(stderr);
    Worker worker;
    worker.slots = std::move(slots);
    const ChildProcess child = spawn_child(
        [&grid, &points, slots = worker.slots](int fd) {
          try {
            for (const std::size_t i : slots) {
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
            std::fprintf(stderr, "zbsim sweep: worker: %s\n", e.what());
            return 1;
          }
          return 0;
        },
        false);
    worker.pid = child.pid;
    worker.fd = child.fd;
    return worker;
  };
  std::vector<Worker> workers;
  for (int k = 0; k < jobs; ++k) {
    std::vector<std::size_t> slots;
    for (std::size_t i = static_cast<std::size_t>(k); i < points.size(); i += static_cast<std::size_t>(jobs)) {
      slots.push_back(i);
    }
    workers.push_back(start(std::move(slots)));
  }
  InOrder order{std::vector<std::optional<Row>>(points.size()), 0, done};
  std::vector<int> deaths(points.size(), 0);  // worker deaths while running each point
  std::size_t received = 0;
  bool failed = false;
  std::vector<pollfd> polls;
  for (;;) {
    polls.clear();
    for (const auto& w : workers) {
      if (w.fd >= 0) polls.push_back({w.fd, POLLIN, 0});
    }
    if (polls.empty()) break;
    if (::poll(polls.data(), polls.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("sweep: poll failed: {}", std::strerror(errno)));
    }
    std::vector<std::vector<std::size_t>> restarts;
    for (auto& w : workers) {
      if (w.fd < 0) continue;
      bool ready = false;
      for (const auto& p : polls) ready = ready || (p.fd == w.fd && p.revents != 0);
      if (!ready) continue;
      char chunk[65536];
      const ssize_t n = ::read(w.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        w.buffer.append(chunk, static_cast<std::size_t>(n));
        while (auto record = w.buffer.empty() ? std::nullopt : take_record(w.buffer)) {
          record->second.point = points[record->first];
          order.put(record->first, std::move(record->second));
          ++received;
          ++w.received;
        }
        continue;
      }
      // The worker is done, or died.
      ::close(w.fd);
      w.fd = -1;
      const int status = reap_child(w.pid);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && w.received == w.slots.size()) continue;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 1) {
        failed = true;  // it said why on stderr
        continue;
      }
      std::vector<std::size_t> rest(w.slots.begin() + static_cast<std::ptrdiff_t>(w.received), w.slots.end());
      if (rest.empty()) continue;
      const std::size_t suspect = rest.front();
      if (++deaths[suspect] >= 2) {
        const std::string reason = fmt::format("the sweep worker running this point was {} twice", how_it_ended(status));
        std::fprintf(stderr, "zbsim sweep: point %ld: %s; it is written as an error row\n", points[suspect],
                     reason.c_str());
        order.put(suspect, failed_point_row(grid, grid.point(points[suspect]), reason));
        ++received;
        rest.erase(rest.begin());
      } else {
        std::fprintf(stderr, "zbsim sweep: the worker running point %ld was %s; its %zu remaining points run again\n",
                     points[suspect], how_it_ended(status).c_str(), rest.size());
      }
      if (!rest.empty()) restarts.push_back(std::move(rest));
    }
    if (!failed) {
      for (auto& slots : restarts) workers.push_back(start(std::move(slots)));
    }
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
