// bench/given_book_encoder.cuh: vlec's frame encoder with a given codebook
// (the whole frame on the GPU), as gpu_bench and lane_layout_probe time it:
// its buffers and arguments, a run with those or other arguments, and the
// frame the last run wrote.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/device_codebook.hpp"
#include "cuda/frame_device.hpp"

namespace vlec::bench {

class GivenBookEncoder {
 public:
  GivenBookEncoder(const void* d_in, uint64_t elements, DType t, uint32_t chunk, const cuda::DeviceCodebookView& book)
      : frame_(cuda::frame_encode_capacity(elements, static_cast<unsigned>(dtype_bytes(t)), chunk)),
        temp_(cuda::frame_encode_temp_bytes(elements, static_cast<unsigned>(dtype_bytes(t)), chunk)),
        size_(1) {
    args_.in = d_in;
    args_.elements = elements;
    args_.dtype = t;
    args_.chunk_elements = chunk;
    args_.book = book;
    args_.frame = frame_.get();
    args_.frame_capacity = frame_.size();
    args_.frame_bytes = size_.get();
    args_.strategy = cuda::default_encode_strategy(chunk);  // the device API's default encoder
  }
  const cuda::FrameEncodeArgs& args() const { return args_; }
  // Enqueue one encode on `stream` (its own arguments, or a variant of them).
  void run(cudaStream_t stream = 0) const { run(args_, stream); }
  void run(const cuda::FrameEncodeArgs& a, cudaStream_t stream = 0) const {
    cuda::encode_frame_device(a, temp_.get(), temp_.size(), stream);
  }
  void clear_frame() { CUDA_CHECK(cudaMemset(frame_.get(), 0, frame_.size())); }
  // The frame the last run wrote (its size as the encoder reported it).
  std::vector<uint8_t> frame() const {
    uint64_t size = 0;
    CUDA_CHECK(cudaMemcpy(&size, size_.get(), 8, cudaMemcpyDeviceToHost));
    std::vector<uint8_t> out(std::min<uint64_t>(size, frame_.size()));
    CUDA_CHECK(cudaMemcpy(out.data(), frame_.get(), out.size(), cudaMemcpyDeviceToHost));
    return out;
  }

 private:
  cuda::DeviceBuffer<uint8_t> frame_, temp_;
  cuda::DeviceBuffer<uint64_t> size_;
  cuda::FrameEncodeArgs args_;
};

}  // namespace vlec::bench
