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

// One run of `run` (which enqueues on `stream`) timed by the events a and b.
template <typename F>
float time_ms(cudaEvent_t a, cudaEvent_t b, cudaStream_t stream, F&& run) {
  CUDA_CHECK(cudaEventRecord(a, stream));
  run();
  CUDA_CHECK(cudaEventRecord(b, stream));
  CUDA_CHECK(cudaEventSynchronize(b));
  float t = 0;
  CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
  return t;
}

// Medians in milliseconds of `repeat` runs of each of `runs` (each enqueues
// on `stream`), the runs alternated (r0, r1, ..., r0, r1, ...) after two
// warm-ups of each.
template <typename... F>
std::vector<float> medians_ms(int repeat, cudaStream_t stream, F&&... runs) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 2; ++i) (runs(), ...);
  std::vector<std::vector<float>> ms(sizeof...(runs));
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    std::size_t k = 0;
    ((ms[k++].push_back(time_ms(a, b, stream, runs))), ...);
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  std::vector<float> out;
  for (auto& v : ms) {
    std::sort(v.begin(), v.end());
    out.push_back(v[v.size() / 2]);
  }
  return out;
}

// Median in milliseconds of `repeat` runs of `run` (which enqueues on
// `stream`), after two warm-ups.
template <typename F>
float median_ms(int repeat, cudaStream_t stream, F&& run) {
  return medians_ms(repeat, stream, run)[0];
}

// Medians of `repeat` runs each of `a` and `b`, alternated (a, b, a, b,
// ...): host noise that drifts between blocks of runs hits both alike, so
// small differences between two settings show.
template <typename A, typename B>
std::pair<float, float> paired_median_ms(int repeat, cudaStream_t stream, A&& a, B&& b) {
  const std::vector<float> m = medians_ms(repeat, stream, a, b);
  return {m[0], m[1]};
}

// The same on the default stream.
template <typename F>
float median_ms(int repeat, F&& run) {
  return median_ms(repeat, cudaStream_t{}, run);
}

}  // namespace vlec::bench
