// cuda/histogram_wide.cuh: the block histogram of a 65,536-symbol alphabet
// that the replicated_shared method's u16/u32 kernel (histogram_replicated.cuh)
// and the u16 histogram with chunk hashes (histogram_chunk_hash_u16.cu)
// share: the whole alphabet once ("cold", 16-bit counters packed two a
// word, wraps carried into the global histogram) and a window of kHotBins
// "hot" bins replicated in 32 copies, copy l in bank l (16-bit counters,
// flushed before they can wrap), placed where a sample's counts are
// densest. Shared-memory layout (bytes): cold word of bin v at (v >> 1) * 4;
// hot word of window bin d and lane l at 128 KiB + (d >> 1) * 128 + l * 4;
// then 33 words of scratch (choose_window). Included by .cu files alone,
// hence the unnamed namespace.
#pragma once

#include <cstdint>

#include "cuda/histogram_common.cuh"

namespace vlec::cuda {
namespace {

// Adds a cold counter's wrap to the global histogram. The 16-bit half of bin v
// in `old` (the word before the increment) was 0xFFFF: bin v gains 65,536.
// The carry out of an even bin's low half lands in the high half (bin v + 1) as
// a spurious +1, which the global histogram takes back; if that made the high
// half wrap too (old == 0xFFFFFFFF), bin v + 1 also gains 65,536.
__device__ __noinline__ void cold_wrapped(uint64_t* hist, uint32_t v, uint32_t old) {
  atomicAdd(reinterpret_cast<ull*>(hist + v), 65536ull);
  if (!(v & 1)) atomicAdd(reinterpret_cast<ull*>(hist + v + 1), old == 0xFFFFFFFFu ? 65535ull : ~0ull);
}

// Flushes the hot window (rows of 32 lane copies, two bins per word) into the
// global histogram, zeroing it if `reset`. Called by all threads of the block.
__device__ void flush_hot(uint32_t* hot, uint32_t lo, uint64_t* hist, bool reset) {
  __syncthreads();
  for (uint32_t r = threadIdx.x; r < kHotRows; r += kWideThreads) {
    uint32_t even = 0, odd = 0;
#pragma unroll 8
    for (uint32_t j = 0; j < kCopies; ++j) {
      uint32_t* w = hot + r * kCopies + ((j + r) & 31);  // rotated: no bank conflicts
      even += *w & 0xFFFFu;
      odd += *w >> 16;
      if (reset) *w = 0;
    }
    if (even) atomicAdd(reinterpret_cast<ull*>(hist + lo + 2 * r), ull{even});
    if (odd) atomicAdd(reinterpret_cast<ull*>(hist + lo + 2 * r + 1), ull{odd});
  }
  __syncthreads();
}

// Picks the hot window from the counts of the block's first tile (all in the
// cold histogram): the 1,536 bins, starting at a multiple of 64, that hold the
// most of them. The hot region serves as scratch; it is zeroed afterwards.
__device__ uint32_t choose_window(const uint32_t* cold, uint32_t* hot, ull* scratch) {
  __syncthreads();
  const uint32_t t = threadIdx.x;  // segment t: bins [64 t, 64 t + 64) = cold words [32 t, 32 t + 32)
  uint32_t seg = 0;
#pragma unroll 8
  for (uint32_t j = 0; j < kSegmentBins / 2; ++j) {
    const uint32_t w = cold[t * (kSegmentBins / 2) + ((j + t) & 31)];
    seg += (w & 0xFFFFu) + (w >> 16);
  }
  hot[t] = seg;
  __syncthreads();
  constexpr uint32_t kSegs = kHotBins / kSegmentBins;
  ull key = 0;  // (count in the window << 32) | ~start: the densest window, the lowest on ties
  if (t + kSegs <= kWideThreads) {
    uint32_t win = 0;
    for (uint32_t j = 0; j < kSegs; ++j) win += hot[t + j];
    key = (ull{win} << 32) | (~t);
  }
  for (int o = 16; o; o >>= 1) key = max(key, __shfl_xor_sync(0xFFFFFFFFu, key, o));
  if ((t & 31) == 0) scratch[t >> 5] = key;
  __syncthreads();
  if (t < 32) {
    key = scratch[t];
    for (int o = 16; o; o >>= 1) key = max(key, __shfl_xor_sync(0xFFFFFFFFu, key, o));
    if (t == 0) scratch[32] = key;
  }
  __syncthreads();
  const uint32_t lo = (~static_cast<uint32_t>(scratch[32])) * kSegmentBins;
  for (uint32_t i = t; i < kHotRows * kCopies / 4; i += kWideThreads) reinterpret_cast<uint4*>(hot)[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();
  return lo;
}

// +1 for window bin d (< kHotBins) in lane copy `hot_lane4` (= 128 KiB | lane * 4).
__device__ __forceinline__ void hot_add_one(char* base, uint32_t hot_lane4, uint32_t d) {
  atomicAdd(reinterpret_cast<uint32_t*>(base + (((d << 6) & ~127u) | hot_lane4)), (d & 1) * 0xFFFFu + 1);
}

// +1 for bin v in the cold histogram; a wrapping half is carried into `hist`.
__device__ __forceinline__ void cold_add_one(char* base, uint64_t* hist, uint32_t v) {
  const uint32_t odd = v & 1;
  const uint32_t old = atomicAdd(reinterpret_cast<uint32_t*>(base + ((v << 1) & ~3u)), odd * 0xFFFFu + 1);
  if ((old << (16 - 16 * odd)) >= 0xFFFF0000u) cold_wrapped(hist, v, old);  // its half was 0xFFFF
}

// After the block's last count: the cold counters added to `hist`, one 64-bit
// atomic a non-zero bin (the caller has synced).
__device__ __forceinline__ void add_cold(const uint32_t* cold, uint64_t* hist) {
  for (uint32_t k = threadIdx.x; k < kColdWords; k += kWideThreads) {
    const uint32_t w = cold[k];
    if (w & 0xFFFFu) atomicAdd(reinterpret_cast<ull*>(hist + 2 * k), ull{w & 0xFFFFu});
    if (w >> 16) atomicAdd(reinterpret_cast<ull*>(hist + 2 * k + 1), ull{w >> 16});
  }
}

}  // namespace
}  // namespace vlec::cuda
