// cuda/chunk_scan.cuh: the single-pass prefix sum that places each chunk's
// payload right after its predecessors' (decoupled look-back, Merrill and
// Garland; the scheme behind CUB's DeviceScan).
//
// Each chunk publishes its own size as soon as it knows it, then walks back
// over its predecessors, adding their sizes until it meets one whose
// inclusive prefix is published. Chunks are handed out by an atomic ticket,
// so every predecessor is already running and the walk cannot deadlock. One
// pass over the input, no second kernel, and the compressed frame is dense.
#pragma once

#include <cstdint>

namespace vlec::cuda {

// One 64-bit word per chunk: (value << 2) | flag.
struct ChunkScanState {
  unsigned long long* status;  // [chunk_count], zeroed before the launch
  unsigned int* ticket;        // zeroed before the launch
};

#if defined(__CUDACC__)

constexpr unsigned long long kScanEmpty = 0, kScanAggregate = 1, kScanInclusive = 2;

__device__ __forceinline__ unsigned long long scan_load(const unsigned long long* p) {
  return *reinterpret_cast<const volatile unsigned long long*>(p);
}

__device__ __forceinline__ void scan_publish(unsigned long long* p, uint64_t value, unsigned long long flag) {
  atomicExch(p, (static_cast<unsigned long long>(value) << 2) | flag);
}

// The scan in two steps (scan_exclusive_prefix below does both at once), for
// an encoder that publishes a chunk's size as soon as it is known and walks
// back later, when its predecessors have long published theirs and the walk
// does not spin. scan_publish_size: one lane.
__device__ inline void scan_publish_size(ChunkScanState s, uint64_t chunk, uint64_t size) {
  scan_publish(&s.status[chunk], size, chunk == 0 ? kScanInclusive : kScanAggregate);
}
// All 32 lanes of one warp, after scan_publish_size(chunk, size): returns the
// sum of the sizes of all earlier chunks and publishes the inclusive prefix.
__device__ inline uint64_t scan_walk_back(ChunkScanState s, uint64_t chunk, uint64_t size, unsigned lane) {
  uint64_t prefix = 0;
  for (int64_t end = static_cast<int64_t>(chunk); end > 0; end -= 32) {
    const int64_t p = end - 1 - lane;  // lane 0 looks at the nearest predecessor
    unsigned long long v = kScanInclusive;  // before chunk 0: an inclusive prefix of 0
    if (p >= 0) {
      do {
        v = scan_load(&s.status[p]);
      } while ((v & 3) == kScanEmpty);
    }
    const uint32_t inclusive = __ballot_sync(0xFFFFFFFFu, (v & 3) == kScanInclusive);
    const int stop = inclusive ? __ffs(inclusive) - 1 : 31;  // the nearest inclusive prefix ends the walk
    uint64_t part = lane <= static_cast<unsigned>(stop) ? (v >> 2) : 0;
    for (unsigned m = 16; m > 0; m >>= 1) part += __shfl_xor_sync(0xFFFFFFFFu, part, m);
    prefix += part;
    if (inclusive) break;
  }
  if (lane == 0 && chunk > 0) scan_publish(&s.status[chunk], prefix + size, kScanInclusive);
  return prefix;
}
// Called by all 32 lanes of one warp of the chunk: publishes `size` and
// returns (in every lane) the sum of the sizes of all earlier chunks. The warp
// inspects 32 predecessors at a time, so a chunk whose neighbours have only
// published their sizes finds its offset in one or two rounds.
__device__ inline uint64_t scan_exclusive_prefix(ChunkScanState s, uint64_t chunk, uint64_t size, unsigned lane) {
  if (lane == 0) scan_publish_size(s, chunk, size);
  return scan_walk_back(s, chunk, size, lane);
}
#endif  // __CUDACC__

}  // namespace vlec::cuda
