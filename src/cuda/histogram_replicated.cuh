// cuda/histogram_replicated.cuh: the replicated_shared method of the GPU
// histogram (histogram_gpu.hpp), after Gómez-Luna et al. as used by Tian et
// al. §IV-A: per-block histograms replicated in shared memory, merged into
// global memory; u8 with 32 full copies, u16/u32 with a replicated hot window
// over the whole alphabet once. Included by histogram_gpu.cu alone (one
// translation unit, no relocatable device code), hence the unnamed namespace.
//
// Why it is fast:
//  * Conflict-free shared atomics. A block keeps 32 copies of its histogram,
//    copy l in bank l (word = bin * 32 + l); lane l of every warp updates only
//    copy l. The 32 atomics of a warp instruction therefore always fall in 32
//    different banks and never on one address, whatever the data: hot bins
//    (30% zeros in skewed bytes, a few central SZ quantization codes) cost no
//    more than uniform data.
//  * The input streams through 16-byte read-only loads, U per thread in
//    flight, in a persistent grid-stride loop; the unaligned head and the
//    tail are counted element by element.
//  * u8: 32 copies x 256 bins x 32-bit counters = 32 KiB per block, several
//    blocks per SM; atomics never need their result.
//  * u16/u32: 32 full copies of 65,536 bins do not fit (one 32-bit copy is
//    256 KiB). Each block (one per SM, 1024 threads, 224 KiB) keeps
//      - the full alphabet once ("cold"), 16-bit counters packed two per word;
//        an atomic's old value reveals a wrapping counter, and the wrap is
//        carried exactly into the global histogram;
//      - a window of 1,536 "hot" bins replicated 32 times, 16-bit counters
//        packed two per word, flushed to global memory before they can wrap.
//    Each block places its window where the counts of its first tile are
//    densest (SZ codes crowd around the centre: quant65536 keeps 100% in
//    1,536 bins, 98% in 768), so nearly every update is conflict-free.
//  * Partial histograms merge with one 64-bit global atomic per non-zero bin.
#pragma once

#include <cstdint>

#include "cuda/histogram_common.cuh"
#include "cuda/histogram_wide.cuh"

namespace vlec::cuda {
namespace {

// u8, replicated_shared: 32 conflict-free copies of 256 32-bit counters.
__global__ void __launch_bounds__(kU8Threads, kU8MinBlocks)
    replicated_u8_kernel(const uint8_t* in, Split s, uint64_t* hist) {
  __shared__ uint32_t sh[256 * kCopies];
  zero_byte_copies(sh, kU8Threads);
  __syncthreads();
  // Byte offset of (bin, lane) = bin * 128 + lane * 4: one shift and one LOP3 per byte of input.
  char* base = reinterpret_cast<char*>(sh);
  const uint32_t lane4 = (threadIdx.x & 31) * 4;
  auto count = [=](uint32_t v, uint64_t) { atomicAdd(reinterpret_cast<uint32_t*>(base + ((v << 7) | lane4)), 1u); };
  auto count_word = [=](uint32_t w) { count_byte_word(base, lane4, w); };

  constexpr uint64_t kTile = uint64_t{kU8Threads} * kU8Unroll;
  const uint64_t full_tiles = s.nvec / kTile;
  const uint4* vec = reinterpret_cast<const uint4*>(in + s.head);
  for (uint64_t t = blockIdx.x; t < full_tiles; t += gridDim.x) {
    const uint4* p = vec + t * kTile + threadIdx.x;
    uint4 q[kU8Unroll];
#pragma unroll
    for (int k = 0; k < kU8Unroll; ++k) q[k] = __ldg(p + k * kU8Threads);
#pragma unroll
    for (int k = 0; k < kU8Unroll; ++k) {
      count_word(q[k].x);
      count_word(q[k].y);
      count_word(q[k].z);
      count_word(q[k].w);
    }
  }
  visit_rest(in, s, full_tiles * kTile, count);
  __syncthreads();
  add_byte_copies(sh, hist, kU8Threads);
}

// u16/u32, replicated_shared: a replicated hot window plus the full alphabet
// once, 16-bit counters (see the top of this file).
template <typename T>
__global__ void __launch_bounds__(kWideThreads, 1)
    replicated_wide_kernel(const T* in, Split s, uint64_t* hist, uint64_t* d_bad) {
  extern __shared__ uint4 smem_vec[];
  uint32_t* cold = reinterpret_cast<uint32_t*>(smem_vec);
  uint32_t* hot = cold + kColdWords;
  ull* scratch = reinterpret_cast<ull*>(hot + kHotRows * kCopies);
  for (uint32_t i = threadIdx.x; i < kColdWords / 4; i += kWideThreads) smem_vec[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();

  // Byte offsets from the start of shared memory: cold word of bin v at (v >> 1) * 4;
  // hot word of window bin d and lane l at 128 KiB + (d >> 1) * 128 + l * 4.
  char* const base = reinterpret_cast<char*>(smem_vec);
  const uint32_t hot_lane4 = (kColdWords * 4) | ((threadIdx.x & 31) * 4);
  uint32_t lo = 0, hot_bins = 0;  // no window until the first tile is counted
  uint64_t my_bad = kNoBadIndex;
  auto hot_add = [=](uint32_t d) { hot_add_one(base, hot_lane4, d); };
  auto count = [&](uint32_t v, uint64_t index) {
    const uint32_t d = v - lo;
    if (d < hot_bins) {
      hot_add(d);
    } else if (sizeof(T) == 4 && v >= kHistogramBins) {
      my_bad = min(my_bad, index);
    } else {
      cold_add_one(base, hist, v);
    }
  };
  // A whole warp's vectors in the window (the common case for concentrated
  // data) take the straight path: 7 instructions and one atomic per element.
  auto count_vec = [&](const uint4& q, uint64_t first) {
    constexpr int kPerVec = 16 / sizeof(T);
    uint32_t v[kPerVec];
    unpack<T>(q, v);
    bool all_hot = true;
#pragma unroll
    for (int j = 0; j < kPerVec; ++j) all_hot &= v[j] - lo < hot_bins;
    if (__all_sync(0xFFFFFFFFu, all_hot)) {
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) hot_add(v[j] - lo);
    } else {
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) count(v[j], first + j);
    }
  };

  constexpr unsigned kPerVec = 16 / sizeof(T);
  constexpr uint64_t kTile = uint64_t{kWideThreads} * kWideUnroll;
  // A hot counter gains at most 32 warps x kWideUnroll x kPerVec per tile, one
  // more tile's worth in visit_rest, and 2 per warp for the head and tail.
  constexpr uint32_t kPerTile = kCopies * kWideUnroll * kPerVec;
  constexpr uint32_t kFlushTiles = (0xFFFFu - 2 * 32) / kPerTile - 1;
  static_assert((kFlushTiles + 1) * kPerTile + 64 <= 0xFFFFu, "hot counters must not wrap");

  const uint64_t full_tiles = s.nvec / kTile;
  const uint4* vec = reinterpret_cast<const uint4*>(in + s.head);
  uint32_t since_flush = 0;
  for (uint64_t t = blockIdx.x; t < full_tiles; t += gridDim.x) {
    const uint64_t v0 = t * kTile + threadIdx.x;
    uint4 q[kWideUnroll];
#pragma unroll
    for (int k = 0; k < kWideUnroll; ++k) q[k] = __ldg(vec + v0 + k * kWideThreads);
#pragma unroll
    for (int k = 0; k < kWideUnroll; ++k) count_vec(q[k], s.head + (v0 + k * kWideThreads) * kPerVec);
    if (hot_bins == 0) {  // block-uniform: the first tile was the sample
      lo = choose_window(cold, hot, scratch);
      hot_bins = kHotBins;
    } else if (++since_flush == kFlushTiles) {
      flush_hot(hot, lo, hist, true);
      since_flush = 0;
    }
  }
  visit_rest(in, s, full_tiles * kTile, count);
  if (hot_bins) flush_hot(hot, lo, hist, false);
  else __syncthreads();
  add_cold(cold, hist);
  report_bad(d_bad, my_bad);
}

}  // namespace
}  // namespace vlec::cuda
