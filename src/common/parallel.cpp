// common/parallel.cpp: see parallel.hpp.
#include "common/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace vlec {

unsigned resolve_threads(unsigned requested, std::size_t jobs) {
  unsigned t = requested ? requested : std::max(1u, std::thread::hardware_concurrency());
  if (jobs < t) t = static_cast<unsigned>(std::max<std::size_t>(jobs, 1));
  return t;
}

void parallel_for(std::size_t jobs, unsigned threads,
                  const std::function<void(std::size_t)>& job) {
  threads = resolve_threads(threads, jobs);
  if (threads <= 1) {
    for (std::size_t i = 0; i < jobs; ++i) job(i);
    return;
  }
  // Jobs are handed out in index order, so when job i fails every job below
  // i has been handed out: letting those finish and keeping the lowest
  // failing index's error gives the error one thread would have thrown,
  // whatever the timing (a reader's error message does not depend on the
  // thread count).
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr lowest_error;
  std::size_t lowest_index = jobs;
  std::mutex error_mutex;
  auto worker = [&] {
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= jobs) return;
      try {
        job(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (i < lowest_index) lowest_index = i, lowest_error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (lowest_error) std::rethrow_exception(lowest_error);
}

}  // namespace vlec
