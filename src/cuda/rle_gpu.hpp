// cuda/rle_gpu.hpp: run-length coding of `rle` chunks on the GPU
// (docs/FORMAT.md §6), byte for byte what the CPU backend (rle/rle.hpp and
// cpu/frame_compress.cpp) writes, and the matching validating decoder.
//
// CUB-style interface: every call asks for device temporary storage sized by a
// host-only *_temp_bytes() query, allocates nothing, and is enqueued on the
// caller's stream without any host round trip.
//
// Encoding strategies, named after their papers (all write the same bytes):
//
//  - parle (Balevic, "Fine-grain parallelization of entropy coding on GPGPUs",
//    as written up by Ooms): one thread per element. The backward mask (an
//    element starts a run when it differs from the element before it, or
//    starts a chunk), its scan and the compaction of the run starts are one
//    cub::DeviceSelect::If; the run lengths are differences of neighbouring
//    starts, and a scatter kernel writes values and length codes. Runs longer
//    than 65,536 elements (rare) are split by a second, per-chunk BlockScan.
//    Limited to elements < 2^32 (u32 run-start positions).
//  - chunked (Rutter, "Run-length encoding on graphics hardware"): one thread
//    block per chunk. For chunks of up to 65,536 elements, one pass
//    (rle_encode_chunked_onepass.cu): count the chunk's runs, place the chunk
//    by a decoupled look-back over its predecessors' sizes (Rutter's scan of
//    the per-chunk sizes, inside the kernel), then write the runs straight
//    into their place (his defragmenting copy, fused). Larger chunks, where
//    runs must be split at 65,536, take two passes of the same blocks around a
//    cub::DeviceScan.
//
// Default: chunked for chunks of up to 65,536 elements, measured fastest on
// the H100 (see default_rle_strategy in rle_gpu.cu); parle for larger chunks
// below 2^32 elements.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace vlec::cuda {

enum class RleStrategy { parle, chunked };

const char* to_string(RleStrategy s);

// The strategy measured fastest: chunked for chunks of up to 65,536 elements
// (and wherever parle cannot take the input: 2^32 elements or more), else parle.
RleStrategy default_rle_strategy(uint64_t elements, uint32_t chunk_elements);

// Bytes of the packed payload in the worst case (every element its own run):
// the capacity RleEncodeArgs::payload must have.
std::size_t rle_payload_capacity(uint64_t elements, unsigned width, uint32_t chunk_elements);

inline uint64_t rle_chunk_count(uint64_t elements, uint32_t chunk_elements) {
  return (elements + chunk_elements - 1) / chunk_elements;
}

struct RleEncodeArgs {
  const void* in = nullptr;        // device: elements * width bytes, aligned to width
  uint64_t elements = 0;
  unsigned width = 1;              // 1, 2, 4 or 8
  uint32_t chunk_elements = 65536; // >= 1

  // Per-chunk outputs (device, all required):
  uint32_t* runs = nullptr;            // [chunk_count]: R, the chunk's index `aux`
  uint32_t* stored_bytes = nullptr;    // [chunk_count]: align(R * width, 4) + 2R
  uint64_t* payload_offsets = nullptr; // [chunk_count + 1]: sum of align(stored_bytes, 4) of the
                                       // chunks before; the last entry is the packed total
  uint64_t* run_offsets = nullptr;     // [chunk_count + 1]: exclusive scan of runs; last = total runs

  // The packed payload (device, 16-byte aligned, rle_payload_capacity() bytes;
  // null to skip): chunk c's §6 payload at payload_offsets[c], zero bytes after
  // it up to the next 4-byte boundary. This is the frame payload of codec rle
  // with no chunk stored raw.
  uint8_t* payload = nullptr;

  // The streams form (device, null to skip; for rle+huffman): chunk c's run
  // values at values + run_offsets[c] * width (elements * width bytes at
  // most), its length codes (length - 1) at lengths + run_offsets[c].
  uint8_t* values = nullptr;
  uint16_t* lengths = nullptr;

  // Frame placement (codec rle frames, cuda/rle_frame.cu): a chunk whose coded
  // size is not strictly below its raw size is stored raw by the caller, so
  // its runs are not written to `payload` and payload_offsets count it at
  // align(raw size, 4): the offsets are then the frame's (docs/FORMAT.md §3).
  // stored_bytes and runs still hold the coded size and run count.
  bool skip_raw_chunks = false;
};

// d_temp must be aligned as cudaMalloc aligns (256 bytes).
std::size_t rle_encode_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements, RleStrategy s);

// Enqueue the run-length encoding of every chunk. Throws vlec::Error
// (invalid_argument) on bad arguments, (cuda_error) when a launch fails.
void rle_encode(const RleEncodeArgs& args, void* d_temp, std::size_t temp_bytes, cudaStream_t stream,
                RleStrategy s);

// Per-chunk status the decoder leaves in status[c].
enum RleDecodeStatus : uint32_t {
  kRleOk = 0,
  kRleBadRunCount = 1,   // R not in 1..N, or a raw chunk with R != 0
  kRleBadSize = 2,       // stored_bytes != align(R * width, 4) + 2R (and not the raw size)
  kRleOutOfBounds = 3,   // offset not 4-aligned or offset + stored_bytes beyond the payload
  kRleBadPadding = 4,    // a padding byte between values and lengths is not zero
  kRleBadLengths = 5,    // run lengths do not add up to exactly N
  // Set by the frame decoder's check after rle_decode (cuda/rle_frame.cu):
  kRleChunkPadding = 6,  // a payload padding byte after the chunk is not zero
  kRleChecksum = 7,      // the decoded chunk does not match its XXH3 checksum
  // Set by the rle+huffman part decoder (cuda/rle_huffman_decode.cu):
  kRleHuffmanSize = 8,   // stored_bytes not a multiple of 4 (>= 4), R not in 1..N, value_words too large
  kRleHuffmanWords = 9,  // a part's words do not match its symbols, or padding bits are not zero
  kRleHuffmanCode = 10,  // a bit pattern that is no code
};

struct RleDecodeArgs {
  const uint8_t* payload = nullptr;        // device, 16-byte aligned
  uint64_t payload_bytes = 0;              // readable bytes at payload
  const uint64_t* offsets = nullptr;       // device [chunk_count]: chunk c's payload offset
  const uint32_t* stored_bytes = nullptr;  // device [chunk_count]
  const uint32_t* runs = nullptr;          // device [chunk_count]: aux
  uint64_t elements = 0;
  unsigned width = 1;
  uint32_t chunk_elements = 65536;         // chunk c has min(C, elements - c*C) elements
  void* out = nullptr;                     // device: elements * width bytes, aligned to width
  uint32_t* status = nullptr;              // device [chunk_count]: RleDecodeStatus
  // false (rle frames): a chunk is raw when stored_bytes equals its raw size.
  // true (staged rle+huffman runs): a chunk is raw when its run count is 0,
  // since staged runs may take exactly the raw size; stored_bytes must then match.
  bool raw_iff_no_runs = false;
};

// A chunk whose stored_bytes equals its raw size is stored raw (copied; R must
// be 0). Every other chunk is validated like the CPU reader; a corrupt chunk
// never makes the kernel read or write out of bounds, its output is undefined
// and its status non-zero. Needs no temporary storage.
void rle_decode(const RleDecodeArgs& args, cudaStream_t stream);

}  // namespace vlec::cuda
