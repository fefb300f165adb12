// cuda/device_codebook.hpp: a host-built codebook uploaded to the GPU in the
// form the device frame encoder takes (for encoding with a given codebook,
// and for tests that pin the encoder against the CPU's bytes).
#pragma once

#include <algorithm>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/frame_device.hpp"
#include "huffman/chunk_codec.hpp"

namespace vlec::cuda {

class UploadedCodebook {
 public:
  UploadedCodebook(const huffman::Codebook& book, DType t) {
    const huffman::EncodeTable table = huffman::make_encode_table(book, t);
    const std::vector<uint8_t> bytes = huffman::serialize_codebook(book);
    const uint32_t present = static_cast<uint32_t>(
        std::count_if(book.lengths.begin(), book.lengths.end(), [](uint8_t l) { return l != 0; }));
    const uint32_t info[4] = {static_cast<uint32_t>(bytes.size()), book.max_length, book.alphabet_size, present};
    alphabet_bound_ = book.alphabet_size;
    entry_.resize(table.entry.size());
    serialized_.resize(bytes.size());
    info_.resize(4);
    CUDA_CHECK(cudaMemcpy(entry_.get(), table.entry.data(), 4 * table.entry.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(serialized_.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(info_.get(), info, sizeof info, cudaMemcpyHostToDevice));
  }
  // The table ends at the alphabet bound (every entry past it is 0), so that
  // the lanes encoder reads a u16 or u32 codebook of at most 1,024 symbols
  // from shared memory alone without asking the device; whole_table: every
  // entry of the type's alphabet (the encoder then asks the device).
  DeviceCodebookView view(bool whole_table = false) const {
    const uint32_t entries = static_cast<uint32_t>(entry_.size());
    return {entry_.get(), whole_table ? entries : std::min(entries, alphabet_bound_), serialized_.get(), info_.get()};
  }

 private:
  DeviceBuffer<uint32_t> entry_;
  DeviceBuffer<uint8_t> serialized_;
  DeviceBuffer<uint32_t> info_;
  uint32_t alphabet_bound_ = 0;
};

}  // namespace vlec::cuda
