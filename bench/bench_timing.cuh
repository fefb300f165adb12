// bench/bench_timing.cuh: what the GPU benchmark programs share: splitting a
// comma-separated argument, and the median time of a piece of GPU work
// measured with CUDA events around it, after two warm-up runs.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <sstream>
#include <string>
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

// The same on the default stream.
template <typename F>
float median_ms(int repeat, F&& run) {
  return median_ms(repeat, cudaStream_t{}, run);
}

}  // namespace vlec::bench
