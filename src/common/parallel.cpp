// common/parallel.cpp: see parallel.hpp.
//
// Why a pool: starting threads per call cost 20-100 us each on the GPU
// machine's host, and far more when it was busy; the GPU wavelet decoder's
// threaded plan (two calls a frame) gained anywhere from 0.15 to 2.6 ms
// from run to run because of it. The pool's workers sleep between calls.
//
// One call at a time uses the pool: a call that finds it busy (another
// host thread's, or one made from inside a job) starts its own threads as
// before, so calls never wait for each other and nested calls cannot
// deadlock.
#include "common/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
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

namespace {

// One call's jobs, shared by the threads that work on it. Jobs are handed
// out in index order, so when job i fails every job below i has been handed
// out: letting those finish and keeping the lowest failing index's error
// gives the error one thread would have thrown, whatever the timing (a
// reader's error message does not depend on the thread count).
struct Batch {
  const std::function<void(std::size_t)>* job = nullptr;
  std::size_t jobs = 0;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr lowest_error;
  std::size_t lowest_index = 0;

  Batch(const std::function<void(std::size_t)>& j, std::size_t n) : job(&j), jobs(n), lowest_index(n) {}

  void work() {
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= jobs) return;
      try {
        (*job)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (i < lowest_index) lowest_index = i, lowest_error = std::current_exception();
        failed = true;
      }
    }
  }
  void rethrow() const {
    if (lowest_error) std::rethrow_exception(lowest_error);
  }
};

// Workers that sleep until a call hands them a batch. Up to `seats` of them
// join it (the caller's thread is one more); the caller waits until every
// worker that joined has left the batch before it returns.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // Runs `b` on the caller's thread and up to `helpers` workers; false
  // (nothing run) when another call holds the pool.
  bool run(Batch& b, unsigned helpers) {
    std::unique_lock<std::mutex> call(call_, std::try_to_lock);
    if (!call.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(m_);
      while (workers_.size() < helpers) workers_.emplace_back([this] { serve(); });
      batch_ = &b;
      seats_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    b.work();
    // Every job is handed out now: seats not yet taken are withdrawn (a late
    // worker would find nothing to do), and the call waits only for the
    // workers still running a job.
    std::unique_lock<std::mutex> lock(m_);
    seats_ = 0;
    left_.wait(lock, [&] { return seated_ == 0; });
    batch_ = nullptr;
    return true;
  }

 private:
  void serve() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || (generation_ != seen && seats_ > 0); });
      if (stop_) return;
      seen = generation_;
      --seats_;
      ++seated_;
      Batch* b = batch_;
      lock.unlock();
      b->work();
      lock.lock();
      --seated_;
      if (seated_ == 0) left_.notify_all();
    }
  }

  std::mutex call_;  // held by the call using the pool
  std::mutex m_;
  std::condition_variable wake_, left_;
  std::vector<std::thread> workers_;
  Batch* batch_ = nullptr;
  unsigned seats_ = 0, seated_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

void parallel_for(std::size_t jobs, unsigned threads,
                  const std::function<void(std::size_t)>& job) {
  threads = resolve_threads(threads, jobs);
  if (threads <= 1) {
    for (std::size_t i = 0; i < jobs; ++i) job(i);
    return;
  }
  Batch batch(job, jobs);
  if (!pool().run(batch, threads - 1)) {
    std::vector<std::thread> own;
    own.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) own.emplace_back([&] { batch.work(); });
    batch.work();
    for (auto& th : own) th.join();
  }
  batch.rethrow();
}

}  // namespace vlec
