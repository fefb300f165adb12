// cpu/frame_codec.hpp: the CPU backend's frame encoder and decoder. Chunks are
// coded independently on all threads; the bytes written never depend on the
// thread count because each chunk's result depends only on its own data and
// on the frame-wide codebooks, which are built from exact integer histograms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/frame.hpp"
#include "vlec/types.hpp"

namespace vlec::cpu {

struct FrameParams {
  Codec codec = Codec::huffman;
  DType dtype = DType::u8;
  uint32_t chunk_elements = 65536;
  unsigned max_code_length = 0;  // 0 = automatic
  unsigned threads = 0;
  // Codec huffman: the exact histogram of all elements (index = value), when
  // the caller has counted them already (the wavelet encoder does); the
  // encoder then skips its own counting pass. Must be exact: it decides the
  // codebook.
  const std::vector<uint64_t>* element_histogram = nullptr;
};

// Size of the frame holding `elements` elements stored raw: the largest frame
// the encoder writes for them, since it falls back to raw when coding does not pay.
uint64_t raw_frame_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements);

// Compress into a new frame. Falls back to codec raw when the coded frame would
// be larger than the raw one.
std::vector<uint8_t> compress_frame(const uint8_t* input, uint64_t elements, const FrameParams& p);

// The same frame written straight into `out` (no intermediate copy); returns
// its size. Throws output_too_small if it needs more than `capacity` bytes.
std::size_t compress_frame_into(const uint8_t* input, uint64_t elements, const FrameParams& p, uint8_t* out,
                                std::size_t capacity);

// Decode a parsed frame into `out` (elements * width bytes), verifying every
// chunk's checksum.
void decompress_frame(const format::ParsedFrame& frame, uint8_t* out, unsigned threads);

// Codec statistics behind CodecChoice::automatic: estimated coded sizes.
Codec choose_codec(const uint8_t* input, uint64_t elements, DType dtype, unsigned threads);

}  // namespace vlec::cpu
