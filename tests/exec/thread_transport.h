// A Transport whose ranks are threads of one test process: per-rank queues in memory, with
// MPI's guarantees (messages of one sender to one receiver in order, sends never wait).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "exec/runtime/transport.h"

namespace zb::exec::test {

class ThreadWire {
 public:
  explicit ThreadWire(int world) : queues_(static_cast<std::size_t>(world)) {}
  int world() const { return static_cast<int>(queues_.size()); }
  void post(int to, TransportMessage message) {
    Queue& queue = queues_.at(static_cast<std::size_t>(to));
    std::lock_guard lock(queue.mutex);
    queue.messages.push_back(std::move(message));
    queue.arrived.notify_one();
  }
  TransportMessage take(int rank) {
    Queue& queue = queues_.at(static_cast<std::size_t>(rank));
    std::unique_lock lock(queue.mutex);
    queue.arrived.wait(lock, [&] { return !queue.messages.empty(); });
    TransportMessage message = std::move(queue.messages.front());
    queue.messages.pop_front();
    return message;
  }

 private:
  struct Queue {
    std::mutex mutex;
    std::condition_variable arrived;
    std::deque<TransportMessage> messages;
  };
  std::vector<Queue> queues_;
};

class ThreadTransport final : public Transport {
 public:
  ThreadTransport(std::shared_ptr<ThreadWire> wire, int rank) : wire_(std::move(wire)), rank_(rank) {}
  int rank() const override { return rank_; }
  int world() const override { return wire_->world(); }
  std::string describe() const override { return "threads of one process"; }
  void send(int to_rank, int tag, std::span<const std::byte> body) override {
    if (stopped_ && to_rank != rank_) return;  // a stopped rank sends nothing (see stop())
    wire_->post(to_rank, TransportMessage{rank_, tag, std::vector<std::byte>(body.begin(), body.end())});
  }
  void post(int to_rank, int tag, std::span<const std::byte> body) override { send(to_rank, tag, body); }
  TransportMessage receive() override { return wire_->take(rank_); }
  void finalize() override { finalized_ = true; }
  [[noreturn]] void abort_all(int code) override {
    (void)code;
    std::abort();  // the tests never get here: a real abort ends every rank (MPI_Abort)
  }

  // Like kill -STOP for the others: from now on nothing this rank sends reaches them.
  void stop() { stopped_ = true; }
  bool finalized() const { return finalized_; }

 private:
  std::shared_ptr<ThreadWire> wire_;
  int rank_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> finalized_{false};
};

// One transport per rank, all on one wire.
inline std::vector<std::unique_ptr<ThreadTransport>> thread_transports(int world) {
  auto wire = std::make_shared<ThreadWire>(world);
  std::vector<std::unique_ptr<ThreadTransport>> out;
  for (int r = 0; r < world; ++r) out.push_back(std::make_unique<ThreadTransport>(wire, r));
  return out;
}

}  // namespace zb::exec::test
