// tests/gpu_frame_util.hpp: the GPU frame encoder run on host data, for the
// tests that compare it byte for byte with the CPU backend
// (test_gpu_encode.cpp, test_gpu_encoders.cpp): upload the elements, encode
// with a host-built codebook into a poisoned frame (every byte must be
// written), check the encoder's status, download the frame; and the whole
// device pipeline (device_compress). CUDA builds only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/device_codebook.hpp"
#include "cuda/frame_device.hpp"
#include "huffman/codebook.hpp"
#include "vlec/device.hpp"
#include "vlec/vlec.hpp"

namespace vlec::test {

struct GpuFrameOptions {
  cuda::EncodeStrategy strategy = cuda::EncodeStrategy::lanes;
  bool raw = false;                  // every chunk stored raw
  uint64_t* status = nullptr;        // the encoder's status, if the caller checks it (else expected 0)
  uint64_t* reported_size = nullptr;  // the frame size the encoder reported (before clamping to the capacity)
  bool whole_table = false;          // the codebook's table over the type's whole alphabet (UploadedCodebook::view)
};

inline std::vector<uint8_t> gpu_encode_frame(const std::vector<uint8_t>& data, DType t, uint32_t chunk,
                                             const huffman::Codebook& book, const GpuFrameOptions& o = {}) {
  const unsigned w = static_cast<unsigned>(dtype_bytes(t));
  const uint64_t n = data.size() / w;
  const cuda::UploadedCodebook dbook(book, t);
  cuda::DeviceBuffer<uint8_t> in(std::max<std::size_t>(data.size(), 16));
  const std::size_t cap = cuda::frame_encode_capacity(n, w, chunk);
  cuda::DeviceBuffer<uint8_t> frame(cap);
  cuda::DeviceBuffer<uint64_t> frame_bytes(1);
  CUDA_CHECK(cudaMemcpy(in.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(frame.get(), 0xA5, cap));  // poison: every byte of the frame must be written
  cuda::FrameEncodeArgs a;
  a.in = in.get();
  a.elements = n;
  a.dtype = t;
  a.chunk_elements = chunk;
  a.raw = o.raw;
  a.book = dbook.view(o.whole_table);
  a.frame = frame.get();
  a.frame_capacity = cap;
  a.frame_bytes = frame_bytes.get();
  a.strategy = o.strategy;
  cuda::DeviceBuffer<uint8_t> temp(cuda::frame_encode_temp_bytes(n, w, chunk));
  cuda::encode_frame_device(a, temp.get(), temp.size(), 0);
  CUDA_CHECK(cudaDeviceSynchronize());
  const uint64_t st = cuda::frame_encode_status(a, temp.get());
  if (o.status) *o.status = st;
  else EXPECT_EQ(st, 0u);
  uint64_t size = 0;
  CUDA_CHECK(cudaMemcpy(&size, frame_bytes.get(), 8, cudaMemcpyDeviceToHost));
  if (o.reported_size) *o.reported_size = size;
  std::vector<uint8_t> out(std::min<uint64_t>(size, cap));
  CUDA_CHECK(cudaMemcpy(out.data(), frame.get(), out.size(), cudaMemcpyDeviceToHost));
  return out;
}

// The whole device pipeline (device::compress: GPU histogram, codebook and
// encoder) on host data, into a poisoned frame: the frame and the error word.
struct DeviceResult {
  std::vector<uint8_t> frame;
  uint64_t error;
};

inline DeviceResult device_compress(const std::vector<uint8_t>& data, const device::CompressOptions& o) {
  const uint64_t n = data.size() / dtype_bytes(o.dtype);
  cuda::DeviceBuffer<uint8_t> in(std::max<std::size_t>(data.size(), 16));
  const std::size_t cap = device::compress_capacity(n, o);
  cuda::DeviceBuffer<uint8_t> frame(cap), temp(std::max<std::size_t>(1, device::compress_temp_bytes(n, o)));
  cuda::DeviceBuffer<uint64_t> out(2);
  CUDA_CHECK(cudaMemcpy(in.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(frame.get(), 0xA5, cap));
  device::compress(in.get(), n, frame.get(), cap, out.get(), out.get() + 1, temp.get(), temp.size(), nullptr, o);
  uint64_t r[2];
  CUDA_CHECK(cudaMemcpy(r, out.get(), 16, cudaMemcpyDeviceToHost));
  DeviceResult d{std::vector<uint8_t>(std::min<uint64_t>(r[0], cap)), r[1]};
  CUDA_CHECK(cudaMemcpy(d.frame.data(), frame.get(), d.frame.size(), cudaMemcpyDeviceToHost));
  return d;
}

}  // namespace vlec::test
