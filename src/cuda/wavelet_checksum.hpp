// cuda/wavelet_checksum.hpp: the samples checksum of a wavelet frame
// (docs/FORMAT.md §10.2) computed on the GPU, in both definitions:
//  * sequential (flag bit 2 clear): XXH3-64 of all the sample bytes. XXH3's
//    accumulators only add within a 1 KiB block, so one warp per block sums
//    its block in parallel (8 words per block, to temp), and one block then
//    folds the block sums in order (a multiply and a few shifts per block:
//    about 30 cycles a block, ~2 ms for 128 MiB; it is there for old streams);
//  * segmented (flag bit 2 set): XXH3-64 of each 65,536-byte segment, one
//    warp per segment, then XXH3-64 of the array of those hashes (u64,
//    little-endian), all parallel but the last short hash. Each warp issues
//    eight 1 KiB blocks' loads before it sums any (kBlocksInFlight).
// Both are enqueued on the caller's stream with caller-provided temp storage
// and leave the hash in a device word.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace vlec::cuda {

constexpr uint64_t kChecksumSegmentBytes = 65536;

// 1 KiB blocks of a segment whose loads a warp issues at once (segmented
// definition): kBlocksInFlight by default, 1 for the block-by-block kernel
// (the benchmark compares). Not thread-safe.
constexpr unsigned kBlocksInFlight = 8;
extern unsigned checksum_blocks_in_flight;

// Temp bytes samples_checksum_device needs for `bytes` bytes.
std::size_t samples_checksum_temp_bytes(uint64_t bytes, bool segmented);

// XXH3-64 of `bytes` bytes at d_bytes (8-byte aligned device memory), in the
// definition `segmented` selects, into *d_hash.
void samples_checksum_device(const uint8_t* d_bytes, uint64_t bytes, bool segmented, uint64_t* d_hash, void* d_temp,
                             std::size_t temp_bytes, cudaStream_t stream);

}  // namespace vlec::cuda
