// cuda/huffman_encode.hpp: the GPU Huffman encoders. Every strategy writes
// exactly the bytes of the CPU encoder (docs/FORMAT.md §5) and is selectable
// by name:
//
//  - warp (the device API's default): one warp per chunk, one pass over its
//    symbols. Each lane codes its own symbols and the lanes encoder's refill
//    replay (LaneWriter) gives every word its slot as it completes, in a
//    scratch slot of the warp's; the chunk's size is then known, its place
//    comes from the decoupled look-back, and the warp copies the slot there.
//    The chunk's XXH3 is folded from the rows as they are loaded.
//  - lanes: one thread block per chunk. Pass A sums each lane's
//    code lengths over the block's eight row ranges (and folds the chunk's
//    XXH3 block sums); the lengths alone fix every word's slot, so the chunk
//    size is known, its place in the frame comes from a decoupled look-back,
//    and pass B writes each word once, straight to its slot.
//  - pavle (Balevic): per-lane prefix sums of code lengths give each code its
//    bit position; codes are OR-ed into the lane bitstreams with shared-memory
//    atomics; the words are then moved to their slots.
//  - reduce_shuffle (Tian et al. §IV-C): each thread merges its group's codes
//    (reduce-merge), groups of a lane are concatenated by shuffle-merge, then
//    the words are moved to their slots.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "cuda/chunk_scan.cuh"

namespace vlec::cuda {

enum class EncodeStrategy { lanes, pavle, reduce_shuffle, warp };

// The warp encoder's grid: at most kEncodeWarps warps, in whole blocks of 8
// (about the warps an H100 or H200 keeps resident at the kernel's register
// count: 132 SMs x 32).
constexpr uint64_t kEncodeWarps = 4096;
__host__ __device__ inline constexpr uint64_t encode_warp_count(uint64_t chunks) {
  return ((chunks < kEncodeWarps ? chunks : kEncodeWarps) + 7) / 8 * 8;
}
// Its scratch: slots of a chunk's raw size. A warp codes a chunk into one
// slot while the chunk it coded before waits in the other to be placed
// (deferred placement, encode_warp.cu), so two a warp where warps take more
// than one chunk, else one.
__host__ __device__ inline constexpr uint64_t encode_warp_slot_words(uint32_t chunk_elements, unsigned width) {
  return (uint64_t{chunk_elements} * width + 127) / 128 * 32;  // a chunk's raw bytes, in 128-byte lines
}
__host__ __device__ inline constexpr uint64_t encode_warp_slot_count(uint64_t chunks) {
  return encode_warp_count(chunks) * (chunks > encode_warp_count(chunks) ? 2 : 1);
}
// Whether a grid of `warps` warps (at most encode_warp_count) defers
// placement: where its warps take more than one chunk and the slots hold two
// a warp (a grid held below encode_warp_count by the GPU's size may not).
__host__ __device__ inline constexpr bool encode_warp_defers(uint64_t chunks, uint64_t warps) {
  return chunks > warps && 2 * warps <= encode_warp_slot_count(chunks);
}

// Status a chunk leaves in chunk_status[c].
enum EncodeStatus : uint32_t { kEncodeOk = 0, kEncodeNoCode = 1 };

// The lanes encoder: whether a chunk whose warps' ranges are at least 16
// rows long completes the words straddling two ranges by a fix-up after a
// barrier (true, the default: the earlier warp leaves the low bits, the
// later one the high bits) or by each warp's lookahead into the next range's
// rows. Not thread-safe; the benchmarks compare.
inline bool encode_boundary_fix_up = true;

// The lanes encoder: whether u16 and u32 codebooks whose alphabet bound is at
// most 1,024 are read from shared memory alone (true, the default;
// SharedEncodeTable in encode_rows.cuh, launch_encode_lanes) or through the
// lookup that may go to the global table. Not thread-safe; the benchmarks
// compare.
inline bool encode_shared_table = true;

struct HuffmanEncodeArgs {
  const void* in;                 // device: elements * width bytes
  uint64_t elements;
  unsigned width;                 // 1, 2 or 4
  uint32_t chunk_elements;
  uint64_t chunk_count;
  const uint32_t* encode_entry;   // device: (length << 24) | reversed code, per symbol; 0 = no code
  uint32_t table_size;            // entries in encode_entry
  const uint32_t* max_length;     // device: the codebook's longest code length
  // device: 1 + the largest symbol with a code (the codebook's info[2]); where
  // it is at most 1,024 the lanes kernel reads u16 and u32 codes from shared
  // memory alone. Null: not known (every lookup may go to encode_entry
  // unless table_size is at most 1,024).
  const uint32_t* alphabet_bound = nullptr;
  bool table_by_bound = false;    // set by the lanes launcher: the kernels read alphabet_bound to pick their table
  uint8_t* frame;                 // device: the frame being written
  const uint64_t* layout;         // device: [0] index offset, [1] payload offset, in bytes from `frame`
  ChunkScanState scan;            // zeroed by the caller
  unsigned long long* block_sums; // device temp: 8 words per 1 KiB of each chunk (blocks_per_chunk per chunk)
  uint64_t blocks_per_chunk;      // ceil(chunk_elements * width / 1024)
  uint32_t* chunk_status;         // device: [chunk_count]
  uint64_t* checksums;            // device: [chunk_count], XXH3-64 of each chunk's original bytes
  // device, or null: each chunk's XXH3-64, taken by the histogram pass
  // (histogram_u8_chunk_hashes). The lanes encoder then neither sums blocks
  // in pass A nor folds them; pavle and reduce_shuffle ignore it.
  const uint64_t* given_checksums = nullptr;
  bool boundary_fix_up = encode_boundary_fix_up;  // lanes: see encode_boundary_fix_up
  // warp: encode_warp_slot_count(chunk_count) slots of encode_warp_slot_words words (device temp).
  uint32_t* warp_slots = nullptr;
};

// The default encoder for a chunk size (device::Encoder::automatic): the warp
// encoder for chunks of at most kWarpEncoderMaxChunk elements, where it
// measured faster than the lanes encoder on every dataset, else lanes (H200,
// 1 GiB, GB/s of input at 16,384 / 65,536-element chunks, warp with deferred
// placement against lanes: skewed bytes 712 / 720 against 560 / 709,
// quant1024 1,243 / 1,069 against 998 / 1,205, quant65536 893 / 834 against
// 677 / 768; bench/results/2026-11-28-h200-session31-deferred-placement-
// gpu-bench.log). At 65,536 the warp encoder wins on quant65536, ties on
// skewed bytes and loses on quant1024, and its scratch would be two chunks'
// raw size a warp (1 GiB for u16); the rule keeps to the chunk size.
constexpr uint32_t kWarpEncoderMaxChunk = 16384;
inline EncodeStrategy default_encode_strategy(uint32_t chunk_elements) {
  return chunk_elements <= kWarpEncoderMaxChunk ? EncodeStrategy::warp : EncodeStrategy::lanes;
}

// Enqueue the encode of every chunk with the given strategy.
void launch_huffman_encode(const HuffmanEncodeArgs& args, EncodeStrategy strategy, cudaStream_t stream);

// The warp encoder over several frames in one grid and one launch, where
// launch_encode_warp makes three (or six) a frame, one per K and table. A
// block finds its frame, then codes it with the kernel code for its symbol
// width, table and K. The wavelet writer's groups are a dozen or more
// frames, whose launches, not their work, bounded the host; their K differ,
// so a launch per K would run them one K after another (docs/ARCHITECTURE.md,
// session 32). A frame in the batch: its arguments as launch_encode_warp
// takes them (its table choice made), the grid's blocks it takes, and its
// table: shared (SharedEncodeTable), or as its alphabet bound says on the
// device (args.table_by_bound), else EncodeTable.
struct WarpEncodeBatchFrame {
  HuffmanEncodeArgs args;
  uint64_t first_block;
  uint64_t blocks;
  uint32_t shared_table;
};
struct WarpEncodeBatch {
  std::vector<WarpEncodeBatchFrame> frames;
  uint64_t blocks = 0;
};
// Frames of u8 or u16 symbols, each of at least one chunk, with their warp
// slots (the blocks a frame takes are those launch_encode_warp would launch).
WarpEncodeBatch plan_encode_warp_batch(const std::vector<HuffmanEncodeArgs>& frames);
// d_frames: a device copy of batch.frames, until the launch has run.
void launch_encode_warp_batch(const WarpEncodeBatch& batch, const WarpEncodeBatchFrame* d_frames,
                              cudaStream_t stream);

}  // namespace vlec::cuda
