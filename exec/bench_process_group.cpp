// The wire of multi-process runs: round trips and throughput of frames between ranks (played by
// threads of this program, over real TCP on localhost): rank 1 -> rank 0 directly, and rank 1 ->
// rank 2 through rank 0, the path of every message between two non-zero ranks.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/process_group.h"

namespace {

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

// Three ranks; ranks 0 and 2 send every frame back to its sender, rank 1 collects the replies.
struct ThreeRanks {
  std::vector<std::unique_ptr<ProcessGroup>> groups;
  Mailbox replies;

  ThreeRanks() {
    const auto file = std::filesystem::temp_directory_path() /
                      ("zb_bench_rendezvous_" + std::to_string(::getpid()) + ".json");
    std::filesystem::remove(file);
    std::vector<std::future<std::unique_ptr<ProcessGroup>>> joining;
    for (int rank = 0; rank < 3; ++rank) {
      joining.push_back(std::async(std::launch::async, [rank, file] {
        return ProcessGroup::join(zb::exec::Rendezvous{rank, 3, file.string()});
      }));
    }
    for (auto& f : joining) groups.push_back(f.get());
    for (int rank : {0, 2}) {
      ProcessGroup* group = groups[static_cast<std::size_t>(rank)].get();
      group->set_handler([group](int from, std::uint8_t kind, std::vector<std::byte> body) { group->send(from, kind, body); },
                         nullptr);
    }
    groups[1]->set_handler([this](int, std::uint8_t, std::vector<std::byte> body) { replies.push(std::move(body)); },
                           nullptr);
  }
  ~ThreeRanks() {
    std::vector<std::future<void>> ending;
    for (auto& group : groups) ending.push_back(std::async(std::launch::async, [&group] { group->finish(); }));
    for (auto& f : ending) f.get();
  }
};

// state.range(0): the peer of rank 1 (0: direct, 2: through rank 0); range(1): frame bytes.
void BM_RoundTrip(benchmark::State& state) {
  ThreeRanks ranks;
  const int peer = static_cast<int>(state.range(0));
  const std::vector<std::byte> frame(static_cast<std::size_t>(state.range(1)));
  for (auto _ : state) {
    ranks.groups[1]->send(peer, 1, frame);
    benchmark::DoNotOptimize(ranks.replies.pop());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 2 * state.range(1));
  state.SetLabel(peer == 0 ? "rank 1 <-> 0" : "rank 1 <-> 2 via 0");
}

}  // namespace

BENCHMARK(BM_RoundTrip)
    ->ArgsProduct({{0, 2}, {64, 64 << 10, 4 << 20}})
    ->ArgNames({"peer", "bytes"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
