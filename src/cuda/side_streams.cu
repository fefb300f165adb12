// cuda/side_streams.cu: see side_streams.hpp.
#include "cuda/side_streams.hpp"

#include <map>
#include <mutex>

#include "cuda/cuda_check.hpp"

namespace vlec::cuda {

const std::vector<cudaStream_t>& side_streams() {
  static std::mutex mutex;
  static std::map<int, std::vector<cudaStream_t>> pools;  // references stay valid as devices are added
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<cudaStream_t>& pool = pools[device];
  if (pool.empty()) {
    std::vector<cudaStream_t> made(kSideStreams);
    for (cudaStream_t& s : made) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
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
