// cuda/wavelet_checksum.cu: see wavelet_checksum.hpp.
#include "cuda/wavelet_checksum.hpp"

#include <algorithm>

#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/warp_index.cuh"
#include "cuda/xxh3_warp.cuh"

namespace vlec::cuda {

unsigned checksum_blocks_in_flight = kBlocksInFlight;

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarps = kThreads / 32;
constexpr unsigned kFoldTile = 256;  // blocks of sums staged in shared memory per fold step

uint64_t whole_blocks(uint64_t bytes) { return bytes > 240 ? (bytes - 1) / xxh3::kBlock : 0; }
// max(1, ceil(B / 64 KiB)): one (empty) segment for no bytes, as FORMAT §10.2 says.
uint64_t segments(uint64_t bytes) { return std::max<uint64_t>(1, (bytes + kChecksumSegmentBytes - 1) / kChecksumSegmentBytes); }

// One warp per whole 1 KiB block: sums[8 b + i] = what block b adds to acc[i]
// (the keyed products of words of index i and the values of index i ^ 1).
__global__ void block_sums_kernel(const uint8_t* p, uint64_t blocks, unsigned long long* sums) {
  const unsigned lane = threadIdx.x % 32;
  const uint64_t* w64 = reinterpret_cast<const uint64_t*>(p);
  for (uint64_t b = blockIdx.x * uint64_t{kWarps} + uniform_warp_index(); b < blocks; b += uint64_t{gridDim.x} * kWarps) {
    const uint64_t sum = warp_block_sum<true>(w64, b, lane);
    if (lane < 8) sums[8 * b + lane] = sum;
  }
}

// A long hash's fold by one block of threads: fill(first, n, tile) stages
// what blocks [first, first + n) add to the accumulators (8 words a block)
// in shared memory, kFoldTile blocks at a time, so the serial chain (lanes
// 0..7: acc = scramble(acc + sums)) never waits on global memory; then warp
// 0 hashes the tail. Every thread calls it.
template <typename Fill>
__device__ void fold_tiles(const uint8_t* p, uint64_t len, uint64_t blocks, Fill&& fill, uint64_t* hash) {
  __shared__ unsigned long long tile[8 * kFoldTile];
  const unsigned lane = threadIdx.x % 32;
  if (len <= 240) {
    if (threadIdx.x == 0) *hash = xxh3::hash64_short(p, len);
    return;
  }
  uint64_t acc = threadIdx.x < 8 ? init_acc_lane(threadIdx.x) : 0;
  for (uint64_t first = 0; first < blocks; first += kFoldTile) {
    const unsigned n = static_cast<unsigned>(std::min<uint64_t>(kFoldTile, blocks - first));
    __syncthreads();  // the previous tile is folded
    fill(first, n, tile);
    __syncthreads();
    if (threadIdx.x < 8)
      for (unsigned b = 0; b < n; ++b) acc = xxh3::scramble(acc + tile[8 * b + threadIdx.x], threadIdx.x);
  }
  if (threadIdx.x < 32) {
    const uint64_t h = finish_long_warp(acc, p, len, lane);
    if (lane == 0) *hash = h;
  }
}

// One block: folds the block sums block_sums_kernel wrote.
__global__ void fold_kernel(const uint8_t* p, uint64_t len, const unsigned long long* sums, uint64_t blocks,
                            uint64_t* hash) {
  fold_tiles(p, len, blocks, [&](uint64_t first, unsigned n, unsigned long long* tile) {
    for (unsigned i = threadIdx.x; i < 8 * n; i += blockDim.x) tile[i] = sums[8 * first + i];
  }, hash);
}

// warp_hash with kBatch blocks' loads issued before any of them is summed.
// A warp hashes its bytes block after block, each fold waiting for the
// block's loads: one block (1 KiB) a warp in flight. The last batch's blocks
// past the end read the last block again and are summed but not folded:
// with a branch around each block (a condition on its loads, or a break),
// nvcc sank every block's loads to its sums, block by block.
// (Measured and not kept: the segments' blocks read in a rotated order,
// segment s from block s mod 63, their sums kept in shared memory and
// folded in order at the end, in case the warps reading the same offsets of
// segments 64 KiB apart crowded the same memory channels: the segmented
// checksum of a u16 8192^2 image took 0.069 ms either way.)
template <unsigned kBatch>
__device__ uint64_t warp_hash_batched(const uint8_t* p, uint64_t len, unsigned lane) {
  if constexpr (kBatch == 1) {
    return warp_hash(p, len, lane);
  } else {
    if (len <= 240) return lane == 0 ? xxh3::hash64_short(p, len) : 0;
    const uint64_t blocks = (len - 1) / xxh3::kBlock;
    const uint64_t* w64 = reinterpret_cast<const uint64_t*>(p) + lane;
    const BlockKeys keys(lane);
    uint64_t acc = lane < 8 ? init_acc_lane(lane) : 0;
    for (uint64_t b = 0; b < blocks; b += kBatch) {
      uint64_t v[kBatch][4];
#pragma unroll
      for (unsigned k = 0; k < kBatch; ++k)
#pragma unroll
        for (unsigned m = 0; m < 4; ++m) v[k][m] = __ldg(w64 + min(b + k, blocks - 1) * 128 + 32 * m);
#pragma unroll
      for (unsigned k = 0; k < kBatch; ++k) {
        const uint64_t sum = block_sum([&](unsigned m) { return v[k][m]; }, keys);
        if (lane < 8 && b + k < blocks) acc = xxh3::scramble(acc + sum, lane);
      }
    }
    return finish_long_warp(acc, p, len, lane);
  }
}

// One warp per 64 KiB segment; the segment hashes go to `hashes`.
// (Two blocks a SM: 126 registers, where ptxas left to itself took 80 and
// issued each block's loads only as the one before was summed.)
template <unsigned kBatch>
__global__ void __launch_bounds__(kThreads, 2)
    segment_hash_kernel(const uint8_t* p, uint64_t len, uint64_t count, uint64_t* hashes) {
  const unsigned lane = threadIdx.x % 32;
  for (uint64_t s = blockIdx.x * uint64_t{kWarps} + uniform_warp_index(); s < count; s += uint64_t{gridDim.x} * kWarps) {
    const uint64_t at = s * kChecksumSegmentBytes;
    const uint64_t h =
        warp_hash_batched<kBatch>(p + at, std::min<uint64_t>(uint64_t{kChecksumSegmentBytes}, len - at), lane);
    if (lane == 0) hashes[s] = h;
  }
}

// The hash of the segment hashes (8 bytes a segment: 16 KiB for a 128 MiB
// image, 512 KiB for 4 GiB), by one warp block after block: one L2 round
// trip a 1 KiB block after the segments' kernel (9.2 us for 16 KiB by
// Nsight Compute on the H100; the checksum_blocks_in_flight = 1 path).
__global__ void __launch_bounds__(32, 1) final_hash_warp_kernel(const uint64_t* hashes, uint64_t count, uint64_t* hash) {
  const uint64_t h = warp_hash(reinterpret_cast<const uint8_t*>(hashes), 8 * count, threadIdx.x);
  if (threadIdx.x == 0) *hash = h;
}

// The same by one block: its warps sum kFoldTile blocks at a time into
// shared memory side by side, then lanes 0..7 fold them in order (as
// fold_kernel does with sums computed by another kernel) and warp 0 hashes
// the tail. 8.3 us for 16 KiB by Nsight Compute (mostly the kernel's fixed
// cost); the round trips it saves grow with the input (511 blocks at 4 GiB).
__global__ void __launch_bounds__(kThreads) final_hash_block_kernel(const uint64_t* hashes, uint64_t count,
                                                                    uint64_t* hash) {
  const uint64_t len = 8 * count;
  const unsigned lane = threadIdx.x % 32, warp = uniform_warp_index();
  fold_tiles(reinterpret_cast<const uint8_t*>(hashes), len, len > 240 ? (len - 1) / xxh3::kBlock : 0,
             [&](uint64_t first, unsigned n, unsigned long long* tile) {
               for (unsigned b = warp; b < n; b += kWarps) {
                 const uint64_t sum = warp_block_sum<true>(hashes, first + b, lane);
                 if (lane < 8) tile[8 * b + lane] = sum;
               }
             },
             hash);
}

unsigned grid_for(uint64_t warps_of_work) {
  return static_cast<unsigned>(std::clamp<uint64_t>((warps_of_work + kWarps - 1) / kWarps, 1, 65535));
}

}  // namespace

std::size_t samples_checksum_temp_bytes(uint64_t bytes, bool segmented) {
  return segmented ? 8 * std::max<uint64_t>(segments(bytes), 1) : 64 * std::max<uint64_t>(whole_blocks(bytes), 1);
}

void samples_checksum_device(const uint8_t* d_bytes, uint64_t bytes, bool segmented, uint64_t* d_hash, void* d_temp,
                             std::size_t temp_bytes, cudaStream_t stream) {
  VLEC_REQUIRE(temp_bytes >= samples_checksum_temp_bytes(bytes, segmented), "temporary storage of ", temp_bytes,
               " bytes is below the ", samples_checksum_temp_bytes(bytes, segmented), " the checksum needs");
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(d_bytes) % 8 == 0 && reinterpret_cast<uintptr_t>(d_temp) % 8 == 0,
               "the checksum's input and temp storage must be 8-byte aligned");
  if (segmented) {
    const uint64_t count = segments(bytes);
    uint64_t* hashes = static_cast<uint64_t*>(d_temp);
    if (checksum_blocks_in_flight == 1) {
      segment_hash_kernel<1><<<grid_for(count), kThreads, 0, stream>>>(d_bytes, bytes, count, hashes);
      CUDA_CHECK(cudaGetLastError());
      final_hash_warp_kernel<<<1, 32, 0, stream>>>(hashes, count, d_hash);
    } else {
      segment_hash_kernel<kBlocksInFlight><<<grid_for(count), kThreads, 0, stream>>>(d_bytes, bytes, count, hashes);
      CUDA_CHECK(cudaGetLastError());
      final_hash_block_kernel<<<1, kThreads, 0, stream>>>(hashes, count, d_hash);
    }
    CUDA_CHECK(cudaGetLastError());
    return;
  }
  const uint64_t blocks = whole_blocks(bytes);
  auto* sums = static_cast<unsigned long long*>(d_temp);
  if (blocks > 0) block_sums_kernel<<<grid_for(blocks), kThreads, 0, stream>>>(d_bytes, blocks, sums);
  CUDA_CHECK(cudaGetLastError());
  fold_kernel<<<1, kThreads, 0, stream>>>(d_bytes, bytes, sums, blocks, d_hash);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
