// cuda/wavelet_encode_host.cu: the GPU wavelet writer for samples in host
// memory (vlec::wavelet_compress with the CUDA backend): pooled device and
// pinned buffers, one upload, device::wavelet_compress (wavelet_encode.cu),
// one download.
#include <algorithm>
#include <vector>

#include "common/parallel.hpp"
#include "cuda/backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/wavelet_encode_layout.hpp"
#include "vlec/device_wavelet.hpp"
#include "wavelet/encode_plan.hpp"

namespace vlec::cuda {

using wavelet_layout::kMaxAxis;

bool can_encode_wavelet(const WaveletImage& im) {
  return im.width < kMaxAxis && im.height < kMaxAxis && im.depth < kMaxAxis;
}

std::vector<uint8_t> compress_wavelet(const void* samples, const WaveletImage& im, const WaveletOptions& o) {
  wavelet::writer_header(im, o);  // the argument checks, before any allocation
  VLEC_REQUIRE(samples != nullptr, "null sample buffer");
  const uint64_t bytes = im.samples() * dtype_bytes(im.dtype);
  // Buffers from the pool (host_staging.hpp): a sequence of images pays for
  // device allocation and pinning once; copies move pinned memory.
  const std::size_t capacity = device::wavelet_compress_capacity(im, o.container_prefix.size());
  const std::size_t temp_bytes = device::wavelet_compress_temp_bytes(im, o);
  const unsigned threads = o.threads;
  SlotBuffer<uint8_t> d_samples(std::max<uint64_t>(bytes, 16)), d_frame(capacity), d_temp(temp_bytes);
  PinnedBuffer<uint8_t> staged(std::max<uint64_t>(bytes, 16));
  parallel_copy(staged.get(), static_cast<const uint8_t*>(samples), bytes, threads);
  CUDA_CHECK(cudaMemcpyAsync(d_samples.get(), staged.get(), bytes, cudaMemcpyHostToDevice, nullptr));
  const std::size_t n =
      device::wavelet_compress(d_samples.get(), im, d_frame.get(), capacity, d_temp.get(), temp_bytes, nullptr, o);
  PinnedBuffer<uint8_t> staged_frame(n);
  CUDA_CHECK(cudaMemcpyAsync(staged_frame.get(), d_frame.get(), n, cudaMemcpyDeviceToHost, nullptr));
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  return std::vector<uint8_t>(staged_frame.get(), staged_frame.get() + n);
}

}  // namespace vlec::cuda
