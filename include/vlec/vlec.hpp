// vlec/vlec.hpp: the host-buffer API of vlec.
//
// A vlec stream is a sequence of frames (docs/FORMAT.md). compress() writes one
// frame per call; decompress() reads every frame of a stream and concatenates
// their elements. Every function reports failure by throwing vlec::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vlec/error.hpp"
#include "vlec/types.hpp"

namespace vlec {

struct CompressOptions {
  CodecChoice codec = CodecChoice::automatic;
  DType dtype = DType::u8;       // element type; input size must be a multiple of its width
  uint32_t chunk_elements = 0;   // elements per chunk, a multiple of 128; 0 = default (65,536)
  unsigned threads = 0;          // CPU threads; 0 = all hardware threads
  Backend backend = Backend::automatic;
  unsigned max_code_length = 0;  // Huffman length limit 1..24; 0 = chosen from the data
};

struct DecompressOptions {
  unsigned threads = 0;
  Backend backend = Backend::automatic;
};

constexpr uint32_t kDefaultChunkElements = 65536;

// Largest stream compress() can write for `input_bytes` bytes of input:
// the input plus a small bound on headers (docs/FORMAT.md §8).
std::size_t compress_bound(std::size_t input_bytes, const CompressOptions& options = {});

// Compress `input_bytes` bytes into `out` (capacity `out_capacity`); returns the
// stream size. Throws output_too_small if out_capacity < the size needed.
// The CPU backend keeps the memory its Huffman-coded chunks waited in (at
// most 256 MiB in all, process-wide) for later calls, so that they find
// their pages mapped; calls from several threads at once are safe.
std::size_t compress(const void* input, std::size_t input_bytes, void* out,
                     std::size_t out_capacity, const CompressOptions& options = {});
std::vector<uint8_t> compress(const void* input, std::size_t input_bytes,
                              const CompressOptions& options = {});

// Facts of a stream's frames, read from their headers (checksums verified,
// payloads not decoded).
struct FrameInfo {
  Codec codec;
  DType dtype;
  uint64_t elements;
  uint32_t chunk_elements;
  uint64_t chunks;
  uint64_t raw_chunks;         // chunks stored uncompressed
  uint64_t frame_bytes;        // compressed size of the frame, headers included
  uint64_t header_bytes;       // header, codebooks, chunk index and header checksum
  unsigned max_code_length;    // longest Huffman code (values codebook for rle+huffman); 0 if none
  uint32_t alphabet_size;      // Huffman alphabet size (values codebook); 0 if none
  unsigned format_major, format_minor;
};
struct StreamInfo {
  std::vector<FrameInfo> frames;
  uint64_t elements = 0;            // all frames
  uint64_t decompressed_bytes = 0;  // all frames
  uint64_t stream_bytes = 0;
};
StreamInfo inspect(const void* stream, std::size_t stream_bytes);

// Frames can be read one at a time (the CLI streams files this way): the
// fixed part of a frame header, kFrameHeaderBytes long, gives the frame's size.
constexpr std::size_t kFrameHeaderBytes = 48;
// Size in bytes of the frame that starts at `data`; throws if the first
// kFrameHeaderBytes (at most `available`) are not a valid frame header.
uint64_t frame_size(const void* data, std::size_t available);

// Bytes decompress() will write for this stream. Reads and verifies every
// frame's header (header checksum included); does not decode payloads. A
// wavelet frame's embedded group frames belong to its payload: their headers
// are checked by inspect() and decompress(), not here, so this may give a
// size for a stream that both of those then reject as corrupt.
uint64_t decompressed_size(const void* stream, std::size_t stream_bytes);

// Decompress a whole stream into `out`; returns bytes written. Verifies every
// checksum; corruption throws checksum_mismatch or corrupt_stream, and nothing
// is reported as success unless the data is exactly what was compressed.
std::size_t decompress(const void* stream, std::size_t stream_bytes, void* out,
                       std::size_t out_capacity, const DecompressOptions& options = {});
std::vector<uint8_t> decompress(const void* stream, std::size_t stream_bytes,
                                const DecompressOptions& options = {});

// The codec `auto` picks for this data (from its histogram and run statistics).
Codec choose_codec(const void* input, std::size_t input_bytes, DType dtype);

// Whether the CUDA backend is built in and a GPU is present.
bool cuda_available();

}  // namespace vlec
