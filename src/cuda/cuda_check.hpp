// cuda/cuda_check.hpp: every CUDA runtime call of vlec goes through
// CUDA_CHECK, which turns a failure into vlec::Error(cuda_error) naming the
// call, so no error code is ever dropped.
#pragma once

#include <cuda_runtime.h>

#include "common/safety.hpp"

#define CUDA_CHECK(call)                                                                     \
  do {                                                                                       \
    const cudaError_t vlec_cuda_status_ = (call);                                            \
    SAFETY_CHECK(vlec_cuda_status_ == cudaSuccess, ::vlec::ErrorCode::cuda_error, #call, ": ", \
                 cudaGetErrorString(vlec_cuda_status_));                                     \
  } while (0)

namespace vlec::cuda {

// A device allocation owned by the host code that made it.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) { resize(count); }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void resize(std::size_t count) {
    if (ptr_) cudaFree(ptr_), ptr_ = nullptr;
    count_ = count;
    if (count) CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T)));
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace vlec::cuda
