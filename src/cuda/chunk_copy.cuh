// cuda/chunk_copy.cuh: one warp stores a chunk raw in a frame payload
// (docs/FORMAT.md §3): its bytes, then zeros up to the next multiple of 4.
// Shared by the raw frame (frame_device.cu) and the raw chunks of rle frames
// (rle_frame.cu). Word copies: the source is a chunk start (a multiple of 128
// elements from a 16-byte aligned input), the destination a 4-byte aligned
// payload offset.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace vlec::cuda {

__device__ __forceinline__ void warp_copy_chunk_padded(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst,
                                                       uint64_t n, unsigned lane) {
  const uint32_t* s4 = reinterpret_cast<const uint32_t*>(src);
  uint32_t* d4 = reinterpret_cast<uint32_t*>(dst);
  for (uint64_t i = lane; i < n / 4; i += 32) d4[i] = __ldg(s4 + i);
  for (uint64_t i = n / 4 * 4 + lane; i < (n + 3) / 4 * 4; i += 32) dst[i] = i < n ? src[i] : 0;
}

}  // namespace vlec::cuda
