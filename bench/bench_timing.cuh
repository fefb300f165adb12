// bench/bench_timing.cuh: what the GPU benchmark programs share: splitting a
// comma-separated argument, and the median time of a piece of GPU work
// measured with CUDA events around it, after two warm-up runs.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_check.hpp"

namespace vlec::bench {

inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

// Median in milliseconds of `repeat` runs of `run` (which enqueues on
// `stream`), after two warm-ups.
template <typename F>
float median_ms(int repeat, cudaStream_t stream, F&& run) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 2; ++i) run();
  std::vector<float> ms;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    CUDA_CHECK(cudaEventRecord(a, stream));
    run();
    CUDA_CHECK(cudaEventRecord(b, stream));
    CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Medians in milliseconds of `repeat` runs each of `a` and `b`, alternated
// (a, b, a, b, ...) after two warm-ups of each: host noise that drifts
// between blocks of runs hits both alike, so small differences between
// two settings show.
template <typename A, typename B>
std::pair<float, float> paired_median_ms(int repeat, cudaStream_t stream, A&& a, B&& b) {
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  for (int i = 0; i < 2; ++i) a(), b();
  std::vector<float> ms[2];
  auto timed = [&](auto&& run) {
    CUDA_CHECK(cudaEventRecord(e0, stream));
    run();
    CUDA_CHECK(cudaEventRecord(e1, stream));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    return t;
  };
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    ms[0].push_back(timed(a));
    ms[1].push_back(timed(b));
  }
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  for (auto& v : ms) std::sort(v.begin(), v.end());
  return {ms[0][ms[0].size() / 2], ms[1][ms[1].size() / 2]};
}

// The same on the default stream.
template <typename F>
float median_ms(int repeat, F&& run) {
  return median_ms(repeat, cudaStream_t{}, run);
}

}  // namespace vlec::bench
