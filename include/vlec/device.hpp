// vlec/device.hpp: compressing data that is already on the GPU, CUB-style.
//
// The caller owns every buffer: it asks how much temporary storage a call
// needs, allocates it once, and passes it in; nothing is allocated inside
// and every step is enqueued on the caller's stream without a host round
// trip. The compressed frame's size is written to device memory, so a
// pipeline can copy the frame out (or hand it to the next kernel) without
// waiting for the host. The frame is byte for byte what the CPU backend
// writes for the same input and options (docs/FORMAT.md).
//
// Only available when vlec is built with CUDA (VLEC_WITH_CUDA).
#pragma once

#include <cstddef>
#include <cstdint>

#include "vlec/types.hpp"

struct CUstream_st;

namespace vlec::device {

using Stream = CUstream_st*;  // a cudaStream_t

// The GPU Huffman encoders; all write the same bytes.
enum class Encoder {
  lanes,           // one block per chunk, slots from code-length sums
  pavle,           // Balevic's parallel VLE: prefix sums of lengths, atomic OR
  reduce_shuffle,  // Tian et al.: reduce-merge then shuffle-merge
  warp,            // one warp per chunk, one pass; its scratch, in compress_temp_bytes, is up to
                   // 8,192 chunks' raw size (two a warp for 4,096 warps; one a chunk for fewer chunks)
  automatic,       // default: warp for chunks of at most 16,384 elements, else lanes (the faster of the two there)
};

// The GPU run-length encoders (codec rle); all write the same bytes.
enum class RleStrategy {
  automatic,  // default: parle, or chunked for 2^32 elements or more
  parle,      // Balevic's PARLE: backward mask, select, scatter (one thread per element)
  chunked,    // Rutter: one block per chunk, a scan of the chunk sizes, runs written in place
};

struct CompressOptions {
  Codec codec = Codec::huffman;   // huffman, rle, rle_huffman or raw
  DType dtype = DType::u8;        // u8, u16 or u32 (rle, rle_huffman and raw also take u64)
  uint32_t chunk_elements = 65536;
  unsigned max_code_length = 0;   // 0 = chosen from the data, as on the CPU
  Encoder encoder = Encoder::automatic;
  RleStrategy rle_strategy = RleStrategy::automatic;  // rle, rle_huffman; parle takes fewer than 2^32 elements
};

// Device bytes the frame buffer must have while the frame is written (a bit
// more than the largest frame, vlec::compress_bound: see frame_device.hpp).
std::size_t compress_capacity(uint64_t elements, const CompressOptions& options = {});
std::size_t compress_temp_bytes(uint64_t elements, const CompressOptions& options = {});

// Compress `elements` elements at d_in (device memory, 16-byte aligned) into
// one frame at d_frame (8-byte aligned, compress_capacity() bytes). Writes the
// frame's size to *d_frame_bytes and, to *d_error, ~0 if all went well or the
// index of the first element whose value is outside the Huffman alphabet (a
// u32 value >= 65,536: the frame is then not valid; rle, rle+huffman and raw
// frames never have one), or ~1 if a fixed max_code_length cannot code the
// data's symbols (the frame is then written raw). Enqueued on `stream`.
void compress(const void* d_in, uint64_t elements, void* d_frame, std::size_t frame_capacity,
              uint64_t* d_frame_bytes, uint64_t* d_error, void* d_temp, std::size_t temp_bytes, Stream stream,
              const CompressOptions& options = {});

// Decompression of a stream that is in device memory. The frame headers are
// read to the host (a few small synchronous copies) and checked there; every
// chunk is decoded and verified (sizes, padding, codes, XXH3 checksum) on the
// GPU. Every codec decodes on the GPU except huffman frames of u64 elements
// (which no writer produces); those throw ErrorCode::unavailable.
uint64_t decompressed_size(const void* d_stream, std::size_t stream_bytes);
std::size_t decompress_temp_bytes(const void* d_stream, std::size_t stream_bytes);
// Decode every frame into d_out (16-byte aligned, `capacity` bytes); returns
// the bytes written once the stream has completed. Corruption throws, as on the CPU.
std::size_t decompress(const void* d_stream, std::size_t stream_bytes, void* d_out, std::size_t capacity,
                       void* d_temp, std::size_t temp_bytes, Stream stream);

}  // namespace vlec::device
