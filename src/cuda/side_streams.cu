// cuda/side_streams.cu: see side_streams.hpp.
#include "cuda/side_streams.hpp"

#include <map>
#include <utility>
#include <mutex>

#include "cuda/cuda_check.hpp"

namespace vlec::cuda {

bool side_streams_high_priority = true;

const std::vector<cudaStream_t>& side_streams() { return side_streams_at(side_streams_high_priority); }

const std::vector<cudaStream_t>& side_streams_at(bool high) {
  static std::mutex mutex;
  // Per device and priority; references stay valid as pools are added.
  static std::map<std::pair<int, bool>, std::vector<cudaStream_t>> pools;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<cudaStream_t>& pool = pools[{device, high}];
  if (pool.empty()) {
    int least = 0, greatest = 0;  // numerically, greatest <= least
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    std::vector<cudaStream_t> made(kSideStreams);
    for (cudaStream_t& s : made)
      CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high ? greatest : least));
    pool = made;
  }
  return pool;
}

CallEvents::~CallEvents() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

cudaEvent_t CallEvents::make() {
  cudaEvent_t e;
  CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  events_.push_back(e);
  return e;
}

cudaEvent_t CallEvents::record(cudaStream_t stream) {
  const cudaEvent_t e = make();
  CUDA_CHECK(cudaEventRecord(e, stream));
  return e;
}

void fork_side_streams(CallEvents& events, cudaStream_t stream, std::size_t used) {
  const std::vector<cudaStream_t>& side = side_streams();
  const cudaEvent_t fork = events.record(stream);
  for (std::size_t i = 0; i < used && i < side.size(); ++i) CUDA_CHECK(cudaStreamWaitEvent(side[i], fork, 0));
}

void join_side_streams(CallEvents& events, cudaStream_t stream, std::size_t used) {
  const std::vector<cudaStream_t>& side = side_streams();
  for (std::size_t i = 0; i < used && i < side.size(); ++i)
    CUDA_CHECK(cudaStreamWaitEvent(stream, events.record(side[i]), 0));
}

}  // namespace vlec::cuda
