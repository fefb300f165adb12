// cuda/decode_tables.hpp: a codebook's decode tables uploaded to the GPU.
#pragma once

#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/huffman_decode.hpp"
#include "huffman/chunk_codec.hpp"

namespace vlec::cuda {

// The shared-memory table is 2^kGpuTableBits entries (8 KiB): codes up to 11
// bits, the vast majority by construction, decode with one lookup.
constexpr unsigned kGpuTableBits = 11;

class DeviceTables {
 public:
  explicit DeviceTables(const huffman::Codebook& book, cudaStream_t stream = 0) {
    const huffman::DecodeTable t = huffman::make_decode_table(book, kGpuTableBits);
    entry_.resize(t.entry.size());
    sorted_.resize(t.sorted.size());
    canon_.resize(3 * kCanonSlots);
    std::vector<uint32_t> canon(3 * kCanonSlots);
    for (unsigned l = 0; l < kCanonSlots; ++l) {
      canon[l] = t.first[l];
      canon[kCanonSlots + l] = t.count[l];
      canon[2 * kCanonSlots + l] = t.offset[l];
    }
    CUDA_CHECK(cudaMemcpyAsync(canon_.get(), canon.data(), 4 * canon.size(), cudaMemcpyHostToDevice, stream));
    if (!t.entry.empty())
      CUDA_CHECK(cudaMemcpyAsync(entry_.get(), t.entry.data(), 4 * t.entry.size(), cudaMemcpyHostToDevice, stream));
    if (!t.sorted.empty())
      CUDA_CHECK(cudaMemcpyAsync(sorted_.get(), t.sorted.data(), 4 * t.sorted.size(), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    view_.entry = entry_.get();
    view_.sorted = sorted_.get();
    view_.canon = canon_.get();
    view_.bits = t.bits;
    view_.max_length = t.max_length;
  }
  const DeviceDecodeTable& view() const { return view_; }

 private:
  DeviceBuffer<uint32_t> entry_, sorted_, canon_;
  DeviceDecodeTable view_{};
};

}  // namespace vlec::cuda
