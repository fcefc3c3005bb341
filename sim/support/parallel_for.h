// fn(0) .. fn(count - 1) on `jobs` threads (the caller's among them), each index once, in no set
// order. The first exception stops the hand-out of further indices and is rethrown once all
// threads have joined; a cancellation request (cancellation.h) throws Cancelled before the next
// index. fn synchronises whatever it shares.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/support/cancellation.h"

namespace zb {

template <class Fn>
void parallel_for(std::size_t count, int jobs, Fn&& fn) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr failure;
  auto worker = [&] {
    while (true) {
      const std::size_t i = next++;
      if (i >= count) return;
      try {
        throw_if_cancelled();
        fn(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        next = count;
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

}  // namespace zb
