// cuda/launch_cache.cu: see launch_cache.hpp.
#include "cuda/launch_cache.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda/cuda_check.hpp"

namespace vlec::cuda {

unsigned resident_blocks(const void* kernel, int threads, std::size_t smem) {
  using Key = std::tuple<const void*, int, std::size_t, int>;
  static std::mutex m;
  static std::map<Key, unsigned> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const Key key{kernel, threads, smem, device};
  {
    std::lock_guard<std::mutex> lock(m);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  const unsigned blocks = static_cast<unsigned>(std::max(sms, 1) * std::max(per_sm, 1));
  std::lock_guard<std::mutex> lock(m);
  cache.emplace(key, blocks);
  return blocks;
}

void set_attribute_once(const void* kernel, cudaFuncAttribute attribute, int value) {
  using Key = std::tuple<const void*, int, int>;
  static std::mutex m;
  static std::map<Key, int> set;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const Key key{kernel, static_cast<int>(attribute), device};
  std::lock_guard<std::mutex> lock(m);  // held while setting: two threads never race on one key
  const auto it = set.find(key);
  if (it != set.end() && it->second == value) return;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, attribute, value));
  set[key] = value;
}

}  // namespace vlec::cuda
