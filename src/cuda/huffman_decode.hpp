// cuda/huffman_decode.hpp: the GPU decoder of Huffman frames, one warp per
// chunk (docs/FORMAT.md §5, docs/ARCHITECTURE.md "GPU decoding").
//
// Why it is fast: the 32 lanes of a warp are the chunk's 32 lane decoders.
// Before each step the lanes that need a word take consecutive words of the
// chunk (one ballot, one popcount: coalesced reads); every lane then decodes
// K symbols with lookups in shared-memory tables (two codes a lookup where
// K >= 2), and after a row each lane stores its 4 symbols with one vector
// store, so a warp writes 128 neighbouring elements at once.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "format/frame.hpp"
#include "huffman/codebook.hpp"

namespace vlec::cuda {

// Where chunk c lives in the payload, and whether it is stored raw.
struct ChunkDesc {
  uint64_t offset;        // payload-relative byte offset (a multiple of 4)
  uint32_t stored_bytes;
  uint32_t raw;           // 1 if stored uncompressed
  uint64_t checksum;      // XXH3-64 of the chunk's original bytes, verified on the decoded data
};

// Decode tables on the device (huffman/gpu_tables.hpp): a single table of
// 2^single_bits entries, symbol | length << 16, whose entries for indexes that
// start longer codes (flag kGpuLong) say where their second-level entries are
// in `sub`; a pair table of 2^pair_bits entries (two codes a lookup; 4 bytes
// an entry for 1-byte symbols, 8 otherwise) or null; and the canonical
// First/Entry arrays for long codes without a second level.
constexpr unsigned kCanonSlots = huffman::kMaxCodeLength + 1;
struct DeviceDecodeTable {
  const uint32_t* single = nullptr;
  const uint32_t* sub = nullptr;
  const void* pair = nullptr;
  const uint32_t* sorted = nullptr;   // symbols in canonical order
  const uint32_t* canon = nullptr;    // first[kCanonSlots], count[kCanonSlots], offset[kCanonSlots]
  unsigned single_bits = 0, pair_bits = 0, max_length = 0;
  uint32_t sub_entries = 0;           // entries of `sub` (0: no second level)
  bool use_pairs = false;             // decode K >= 2 steps with the pair table
  bool sub_shared = false;            // set by the launch: `sub` copied into shared memory
};

// Status codes a chunk decode leaves in `status[c]`.
enum ChunkStatus : uint32_t {
  kChunkOk = 0,
  kChunkWordCount = 1,  // the words do not match the symbols
  kChunkPadding = 2,    // padding bits (or padding bytes after a raw chunk) are not zero
  kChunkBadCode = 3,    // a bit pattern that is no code
  kChunkChecksum = 4,   // the decoded data does not match the chunk checksum
};

struct HuffmanDecodeArgs {
  const uint8_t* payload;    // device: the frame payload
  uint64_t payload_bytes;    // its size (padding included)
  const ChunkDesc* chunks;   // device
  uint64_t chunk_count;
  uint32_t chunk_elements;
  uint64_t elements;
  unsigned width;            // bytes per element: 1, 2 or 4
  void* out;                 // device: elements * width bytes
  uint32_t* status;          // device: one per chunk
  DeviceDecodeTable table;
  bool verify = true;             // check each chunk's checksum on the decoded data
  // true: launch only as many blocks as stay resident, each looping over
  // chunks (its shared tables filled once). Measured slower on an H100 than
  // one block per 8 chunks (skewed u8 570 against 601 GB/s: the block
  // scheduler balances the last chunks better), so off; kept for gpu_bench.
  bool resident_blocks = false;
  // 0: the decoder; 1-4: measured alternatives for gpu_bench, built for its
  // three datasets' kernels only (huffman_decode.cu).
  unsigned variant = 0;
};

// The chunk descriptors of a parsed frame, for upload (frame_decode.cu).
std::vector<ChunkDesc> chunk_descs(const format::ParsedFrame& frame);

// Enqueue the decode of every chunk on `stream`.
void launch_huffman_decode(const HuffmanDecodeArgs& args, cudaStream_t stream);

// Many frames decoded with one launch per kernel shape (symbol width, K,
// pairs, long codes): the wavelet decoder's groups are many small frames,
// and one launch each left most of them waiting on their launch and on the
// last chunk of each (one warp decodes a chunk; H100, u16 8192^2: 40-130 us
// a group's kernel, 0.5 ms for the 16 groups on 8 streams). The frames'
// arguments, as launch_huffman_decode takes them (default decoder), go up to
// `d_scratch` (huffman_decode_batch_bytes) through `writes` on `stream`; the
// launches may then go on any streams that follow that upload.
struct HuffmanDecodeShape {
  unsigned width = 1, K = 1;
  bool pairs = false, long_codes = false;
  bool wide_single = false;  // K = 2 without pairs: the 13-bit single table (huffman::gpu_single_bits)
  unsigned key() const {
    return width << 8 | K << 3 | unsigned{wide_single} << 2 | unsigned{pairs} << 1 | unsigned{long_codes};
  }
};
struct HuffmanDecodeBatch {
  struct Launch {
    HuffmanDecodeShape shape;
    const HuffmanDecodeArgs* args = nullptr;  // device: `frames` of them
    const uint32_t* block_start = nullptr;    // device: frames + 1 (first block of each; the total)
    uint32_t frames = 0, blocks = 0;
    std::size_t shared_bytes = 0;
  };
  std::vector<Launch> launches;
};
class HostWrites;
std::size_t huffman_decode_batch_bytes(std::size_t frames);
HuffmanDecodeBatch stage_huffman_decode_batch(const std::vector<HuffmanDecodeArgs>& frames, void* d_scratch,
                                              std::size_t scratch_bytes, cudaStream_t stream, HostWrites& writes);
void launch_huffman_decode_batch(const HuffmanDecodeBatch::Launch& launch, cudaStream_t stream);

// Diagnostics: whether the decoder copies a second level that fits (see
// TableShape::kMaxSharedSub, huffman_decode_lanes.cuh) into shared memory
// (the default) or reads it from global memory. For gpu_bench's comparison.
void set_decode_sub_shared(bool shared);

}  // namespace vlec::cuda
