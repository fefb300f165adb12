// tests/test_parallel.cpp: common/parallel.hpp's job runner. Readers decode
// groups and chunks with it, so the error it rethrows decides what a user
// sees for a damaged stream: it must be the lowest failing job's (the one a
// single thread throws), whatever the thread count and the timing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/parallel.hpp"
#include "test_util.hpp"

namespace vlec {
namespace {

TEST(Parallel, EveryJobRunsOnce) {
  for (unsigned threads : {1u, 2u, 4u, 16u})
    for (std::size_t jobs : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
      std::vector<std::atomic<int>> runs(jobs);
      parallel_for(jobs, threads, [&](std::size_t i) { ++runs[i]; });
      for (std::size_t i = 0; i < jobs; ++i) EXPECT_EQ(runs[i].load(), 1) << "job " << i << " of " << jobs;
    }
}

TEST(Parallel, RethrowsTheLowestFailingJob) {
  const uint64_t seed = test::seed_for(1);
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t jobs = 2 + rng() % 64;
    std::vector<bool> fails(jobs);
    std::size_t lowest = jobs;
    for (int k = 0; k < 3; ++k) {
      const std::size_t i = rng() % jobs;
      fails[i] = true;
      lowest = std::min(lowest, i);
    }
    // The lower a failing job, the longer it takes: a later one throws first.
    const auto job = [&](std::size_t i) {
      if (!fails[i]) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200 * (jobs - i)));
      throw std::runtime_error("job " + std::to_string(i));
    };
    for (unsigned threads : {1u, 3u, 8u}) {
      try {
        parallel_for(jobs, threads, job);
        ADD_FAILURE() << "nothing thrown";
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "job " + std::to_string(lowest)) << threads << " threads, " << jobs << " jobs";
      }
    }
  }
}

// The pool serves one call at a time: calls from several host threads and
// calls made inside a job start their own threads, and every job still runs
// exactly once, errors included.
TEST(Parallel, NestedAndConcurrentCalls) {
  constexpr std::size_t kOuter = 8, kInner = 5;
  std::vector<std::atomic<int>> runs(kOuter * kInner);
  parallel_for(kOuter, 4, [&](std::size_t i) {
    parallel_for(kInner, 3, [&](std::size_t k) { ++runs[i * kInner + k]; });
  });
  for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "nested job " << i;

  constexpr unsigned kCallers = 4;
  constexpr int kCalls = 200;
  std::vector<std::atomic<long>> sums(kCallers);
  std::vector<std::atomic<int>> lowest_errors(kCallers);
  std::vector<std::thread> callers;
  for (unsigned c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < kCalls; ++r) {
        parallel_for(20, 3 + c, [&](std::size_t i) { sums[c] += static_cast<long>(i); });
        try {
          parallel_for(30, 2 + c, [&](std::size_t i) {
            if (i % 7 == 3) throw std::runtime_error(std::to_string(i));
          });
        } catch (const std::runtime_error& e) {
          lowest_errors[c] += std::string(e.what()) == "3";
        }
      }
    });
  for (std::thread& t : callers) t.join();
  for (unsigned c = 0; c < kCallers; ++c) {
    EXPECT_EQ(sums[c].load(), long{kCalls} * 190) << "caller " << c;
    EXPECT_EQ(lowest_errors[c].load(), kCalls) << "caller " << c;
  }
}

}  // namespace
}  // namespace vlec
