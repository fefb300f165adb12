// tests/gpu_codebook_builder.hpp: the GPU codebook builder run on host
// histograms (device buffers for capacities up to 65,536, reused from case
// to case; outputs poisoned before a build), for test_codebook_gpu.cpp and
// test_codebook_gpu_timing.cpp. CUDA builds only.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "codebook_test_util.hpp"
#include "cuda/codebook_gpu.hpp"
#include "cuda/cuda_check.hpp"

namespace vlec::codebook_test {

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define CK(call) check((call), #call)

// Device buffers for capacities up to 65,536, reused from case to case.
class GpuBuilder {
 public:
  GpuBuilder() { CK(cudaStreamCreate(&stream_)); }
  ~GpuBuilder() { cudaStreamDestroy(stream_); }
  void upload(const Histogram& h) {
    cap_ = static_cast<uint32_t>(h.size());
    CK(cudaMemcpy(hist_.get(), h.data(), 8 * h.size(), cudaMemcpyHostToDevice));
    if (cuda::codebook_temp_bytes(cap_) > temp_.size()) temp_.resize(cuda::codebook_temp_bytes(cap_));
  }
  void enqueue(unsigned limit) {
    const cuda::DeviceCodebookOut out{lengths_.get(), entry_.get(), serialized_.get(), info_.get()};
    cuda::build_codebook_device(hist_.get(), cap_, limit, temp_.get(), temp_.size(), out, stream_);
  }
  BuiltCodebook download() {
    CK(cudaStreamSynchronize(stream_));
    BuiltCodebook b;
    b.lengths.resize(cap_);
    b.entry.resize(cap_);
    b.serialized.resize(cuda::codebook_serialized_capacity(cap_));
    CK(cudaMemcpy(b.lengths.data(), lengths_.get(), cap_, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.entry.data(), entry_.get(), 4 * cap_, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.serialized.data(), serialized_.get(), b.serialized.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.info, info_.get(), 16, cudaMemcpyDeviceToHost));
    return b;
  }
  void poison() {  // every output byte must be written
    CK(cudaMemset(lengths_.get(), 0xA5, cap_));
    CK(cudaMemset(entry_.get(), 0xA5, 4 * cap_));
    CK(cudaMemset(serialized_.get(), 0xA5, cuda::codebook_serialized_capacity(cap_)));
    CK(cudaMemset(info_.get(), 0xA5, 16));
  }
  BuiltCodebook build(const Histogram& h, unsigned limit) {
    upload(h);
    poison();
    enqueue(limit);
    CK(cudaGetLastError());
    return download();
  }
  cudaStream_t stream() const { return stream_; }

 private:
  static constexpr uint32_t kCap = 65536;
  cuda::DeviceBuffer<uint64_t> hist_{kCap};
  cuda::DeviceBuffer<uint8_t> lengths_{kCap}, serialized_{cuda::codebook_serialized_capacity(kCap)};
  cuda::DeviceBuffer<uint32_t> entry_{kCap}, info_{4};
  cuda::DeviceBuffer<uint8_t> temp_;
  uint32_t cap_ = 0;
  cudaStream_t stream_ = nullptr;
};

// One build (no length limit) captured from the builder's stream into a CUDA
// graph and instantiated; launch() replays it on that stream.
class CapturedBuild {
 public:
  explicit CapturedBuild(GpuBuilder& gpu) : stream_(gpu.stream()) {
    CK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
    gpu.enqueue(0);
    CK(cudaStreamEndCapture(stream_, &graph_));
    CK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  CapturedBuild(const CapturedBuild&) = delete;
  CapturedBuild& operator=(const CapturedBuild&) = delete;
  ~CapturedBuild() {
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
  }
  void launch() { CK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaStream_t stream_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace vlec::codebook_test
