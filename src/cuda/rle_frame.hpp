// cuda/rle_frame.hpp: the parts of `rle` and `rle+huffman` frames
// (docs/FORMAT.md §3, §6) that are specific to run-length chunks, on the GPU.
// The frame's layout, header and header checksum are frame_device.cu's,
// shared with the Huffman frame; the decode of the header area is
// frame_decode.cu's. rle+huffman's own steps are in rle_huffman_frame.cu
// (encode) and rle_huffman_decode.cu (its Huffman parts).
//
// Encoding: the GPU RLE encoder (rle_gpu.hpp) in frame placement mode counts
// every chunk's runs, scans the chunks' final sizes (a chunk is coded only when
// strictly smaller than its raw size, the CPU's rule) and writes the coded
// chunks straight into the frame payload; one warp per chunk then copies the
// raw chunks, hashes every chunk's original bytes and writes its index entry.
// No host round trip: the payload's size stays in device memory.
//
// Decoding: rle_decode (validating) expands every chunk (for rle+huffman,
// the runs its Huffman parts decoded into a staging buffer), then one warp per
// chunk checks the payload padding after it and the XXH3 checksum of what was
// decoded. Raw frames of u64 elements take this path too.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/rle_gpu.hpp"
#include "format/frame.hpp"

namespace vlec::cuda {

// Device temporaries of the frame encoder's rle part.
std::size_t rle_frame_encode_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements, RleStrategy s);

struct RleFrameEncodeArgs {
  const void* in = nullptr;  // device, 16-byte aligned
  uint64_t elements = 0;
  unsigned width = 1;
  uint32_t chunk_elements = 65536;
  RleStrategy strategy = RleStrategy::parle;
  uint8_t* frame = nullptr;        // device: the frame; its index at index_offset, payload at payload_offset
  uint64_t index_offset = 0;       // rle: known on the host (no codebook section)
  uint64_t payload_offset = 0;     // a multiple of 8
  const uint64_t* layout = nullptr;  // device: [0] index offset, [1] payload offset (written by the layout step)
};

// The RLE encoder's arguments for a frame's input (in, elements, width,
// chunk_elements) with its per-chunk outputs in the given device arrays;
// the caller adds what its codec needs (payload for rle, the streams form for
// rle+huffman). One place so the two codecs cannot drift apart.
inline RleEncodeArgs rle_chunk_encode_args(const RleFrameEncodeArgs& a, uint32_t* runs, uint32_t* stored_bytes,
                                           uint64_t* payload_offsets, uint64_t* run_offsets) {
  RleEncodeArgs e;
  e.in = a.in;
  e.elements = a.elements;
  e.width = a.width;
  e.chunk_elements = a.chunk_elements;
  e.runs = runs;
  e.stored_bytes = stored_bytes;
  e.payload_offsets = payload_offsets;
  e.run_offsets = run_offsets;
  return e;
}

// Enqueue the chunks and index of an rle frame. Returns a device pointer to
// the packed payload's size before its final padding (Σ align(stored_bytes, 4)),
// which lives in `temp` and is valid once the stream reaches it.
const uint64_t* encode_rle_chunks(const RleFrameEncodeArgs& args, void* temp, std::size_t temp_bytes,
                                  cudaStream_t stream);

// The entries pass shared by rle and rle+huffman: one warp per chunk copies
// the chunks whose coded size (stored[c]) is not below their raw size, hashes
// every chunk and writes its index entry (aux = runs[c] for coded chunks).
// Offsets are payload-relative; the index and payload come from a.layout.
void write_chunk_entries(const RleFrameEncodeArgs& a, const uint32_t* runs, const uint32_t* stored,
                         const uint64_t* offsets, cudaStream_t stream);

// rle+huffman (rle_huffman_frame.cu), in two steps around the frame's layout:
// prepare runs the RLE encoder (streams form), the two histograms and the two
// codebooks; encode_rle_huffman_chunks then codes, places and indexes the
// chunks and returns the device pointer to Σ align(stored_bytes, 4). Both take
// the same temp (rle_huffman_encode_temp_bytes).
struct RleHuffmanBooks {
  const uint32_t* entries[2];   // values, lengths: (length << 24) | reversed code
  uint32_t table_size[2];
  const uint8_t* serialized[2];
  const uint32_t* info[2];      // [0] serialized bytes (0: no codebook), [1] max length
};
std::size_t rle_huffman_encode_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements, RleStrategy s);
RleHuffmanBooks rle_huffman_prepare(const RleFrameEncodeArgs& args, unsigned length_limit, void* temp,
                                    std::size_t temp_bytes, cudaStream_t stream);
const uint64_t* encode_rle_huffman_chunks(const RleFrameEncodeArgs& args, void* temp, std::size_t temp_bytes,
                                          cudaStream_t stream);

// rle+huffman decoding, first step (rle_huffman_decode.cu): one warp per
// chunk and part decodes the Huffman words (§5, with the reader's checks)
// into a staging buffer laid out as rle payloads (values, zero padding,
// lengths at staged_offsets[c]); raw chunks are copied there. rle_decode then
// expands the staged runs. Status per chunk: kRleOk or a kRleHuffman* code.
constexpr unsigned kRleHuffmanCanonSlots = 25;  // code lengths 0..24
struct RleHuffmanTables {
  uint32_t* canon[2] = {nullptr, nullptr};   // first[25], count[25], offset[25] per codebook
  uint32_t* sorted[2] = {nullptr, nullptr};  // symbols in canonical order
  unsigned max_length[2] = {0, 0};
};
struct RleHuffmanPartsArgs {
  const uint8_t* payload;
  uint64_t payload_bytes;
  const uint64_t* offsets;
  const uint32_t* stored;
  const uint32_t* runs;
  uint8_t* staged;
  const uint64_t* staged_offsets;
  uint64_t chunks, elements;
  uint32_t chunk_elements;
  unsigned width;
  RleHuffmanTables tables;
  uint32_t* status;
};
void upload_rle_huffman_tables(const format::ParsedFrame& frame, RleHuffmanTables& tables, cudaStream_t stream);
void decode_rle_huffman_parts(const RleHuffmanPartsArgs& args, cudaStream_t stream);

// Device temporaries of the decoder (rle and rle+huffman frames), and its two steps.
std::size_t rle_frame_decode_temp_bytes(const format::ParsedFrame& frame);
void decode_rle_frame(const format::ParsedFrame& frame, const uint8_t* d_payload, void* d_out, void* d_temp,
                      std::size_t temp_bytes, cudaStream_t stream);
// After the stream completed (check_frame_decode in frame_decode.hpp does
// both for every codec): where the per-chunk status words are, and the check
// of a host copy, which throws the CPU decoder's error for the first bad chunk.
const uint32_t* rle_frame_decode_status(const format::ParsedFrame& frame, const void* d_temp);
void check_rle_frame_status(const format::ParsedFrame& frame, const uint32_t* status);

}  // namespace vlec::cuda
