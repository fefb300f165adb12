// cuda/histogram_chunk_hash_u16.cu: the histogram of a u16 Huffman frame's
// input and the XXH3-64 of each of its chunks, in one pass (device::compress
// with the lanes encoder), as histogram_chunk_hash.cu does for bytes.
//
// Why: full compress reads its input twice, once for the histogram and once
// for the encoder's pass A, which also summed each chunk's XXH3 blocks and
// folded them. A row of u16 symbols is 256 bytes, so the hash is a larger
// share of the encoder's instructions than for bytes; the histogram pass is
// bound by DRAM reads, and takes the hash beside its counting.
//
// How, and why it is fast: the block histogram is the replicated_shared u16
// kernel's (histogram_wide.cuh: the alphabet once, "cold", and a window of
// hot bins replicated per lane; one 1,024-thread block an SM). Each warp
// takes whole chunks and walks each in order, kInFlight 1 KiB blocks' loads
// at once as 8-byte words lane + 32m (block_sum's layout), counts the four
// symbols of each word and folds each block into the chunk's accumulators at
// once (warp_hash's loop): no block sums are stored, no warp waits for
// another, and the block meets at a barrier only to place the hot window
// (after a sample, each warp's first KiB counted and then cleared) and to
// flush the hot counters before they can wrap.
#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/histogram_wide.cuh"
#include "cuda/launch_cache.hpp"
#include "cuda/xxh3_warp.cuh"

namespace vlec::cuda {
namespace {

constexpr unsigned kChunkWarps = kWideThreads / 32;
// A KiB step of every warp adds at most 16 to each lane copy's hot counter
// per warp (a lane's 16 symbols of the KiB); the last chunk's elements past
// its whole KiB add at most as much once. Flush before a step could make a
// 16-bit counter wrap.
constexpr uint32_t kStepGain = kChunkWarps * 16;
constexpr uint32_t kFlushSteps = 0xFFFFu / kStepGain - 1;

__device__ __forceinline__ void count_one(uint32_t s, char* base, uint32_t hot_lane4, uint32_t lo, uint64_t* hist) {
  const uint32_t d = s - lo;
  if (d < kHotBins)
    hot_add_one(base, hot_lane4, d);
  else
    cold_add_one(base, hist, s);
}

// The 16 symbols of a lane's four words of a KiB block.
__device__ __forceinline__ void count_words(const uint64_t (&v)[4], char* base, uint32_t hot_lane4, uint32_t lo,
                                            uint64_t* hist) {
  bool all_hot = true;
#pragma unroll
  for (unsigned m = 0; m < 4; ++m)
#pragma unroll
    for (unsigned i = 0; i < 4; ++i) all_hot &= static_cast<uint32_t>((v[m] >> (16 * i)) & 0xFFFFu) - lo < kHotBins;
  if (__all_sync(0xFFFFFFFFu, all_hot)) {  // the common case for concentrated data: one atomic a symbol
#pragma unroll
    for (unsigned m = 0; m < 4; ++m)
#pragma unroll
      for (unsigned i = 0; i < 4; ++i)
        hot_add_one(base, hot_lane4, static_cast<uint32_t>((v[m] >> (16 * i)) & 0xFFFFu) - lo);
  } else {  // rare where the window is well placed: loops, not 16 copies of the cold path's code
#pragma unroll
    for (unsigned m = 0; m < 4; ++m) {
      const uint64_t w = v[m];  // (a register: v indexed by a loop variable would live in local memory)
#pragma unroll 1
      for (unsigned i = 0; i < 4; ++i) count_one(static_cast<uint32_t>((w >> (16 * i)) & 0xFFFFu), base, hot_lane4, lo, hist);
    }
  }
}

// kInFlight: 1 KiB blocks a warp loads at once: 2 (64 registers, the
// kernel's bound at 1,024 threads). 4 spilled ~290 bytes a thread and
// measured no better (H200, 1 GiB, full compress GB/s at 16,384 / 65,536
// elements a chunk: quant1024 768 / 825 against 778 / 842, quant65536
// 554 / 598 against 556 / 591; bench/results/2026-11-28-h200-session28-
// u16-chunk-hash-*).
constexpr unsigned kInFlight = 2;

// Warp w of block b takes chunk (r * gridDim.x + b) * kChunkWarps + w in
// round r. `in` is 8-byte aligned and chunk_bytes a multiple of 1,024; the
// last chunk may be shorter (and of any even length).
__global__ void __launch_bounds__(kWideThreads, 1)
    histogram_chunk_hash_u16_kernel(const uint16_t* in, uint64_t elements, uint32_t chunk_bytes, uint64_t chunks,
                                    uint64_t* hist, uint64_t* checksums) {
  extern __shared__ uint4 smem_vec[];
  __shared__ uint64_t s_secret[xxh3::kSecretSize / 8];
  copy_secret_words(s_secret);  // (ordered by the barrier below)
  uint32_t* cold = reinterpret_cast<uint32_t*>(smem_vec);
  uint32_t* hot = cold + kColdWords;
  ull* scratch = reinterpret_cast<ull*>(hot + kHotRows * kCopies);
  char* const base = reinterpret_cast<char*>(smem_vec);
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t hot_lane4 = (kColdWords * 4) | (lane * 4);
  const uint8_t* const bytes_in = reinterpret_cast<const uint8_t*>(in);
  const uint64_t bytes = 2 * elements, warps = uint64_t{gridDim.x} * kChunkWarps;
  const uint64_t rounds = (chunks + warps - 1) / warps;
  auto chunk_of = [&](uint64_t r) { return (r * gridDim.x + blockIdx.x) * kChunkWarps + warp; };
  auto chunk_len = [&](uint64_t c) { return min(uint64_t{chunk_bytes}, bytes - c * chunk_bytes); };
  auto zero_cold = [&] {
    for (uint32_t i = threadIdx.x; i < kColdWords / 4; i += kWideThreads) smem_vec[i] = make_uint4(0, 0, 0, 0);
  };

  // The window: each warp's first whole KiB counted into the cold histogram
  // (at most 16,384 symbols a block: no counter wraps), the window placed
  // where they are densest, the counts cleared (the loop counts them again).
  zero_cold();
  __syncthreads();
  {
    const uint64_t c = chunk_of(0);
    if (c < chunks && chunk_len(c) >= 1024) {
      const uint64_t* w64 = reinterpret_cast<const uint64_t*>(bytes_in + c * chunk_bytes) + lane;
#pragma unroll
      for (unsigned m = 0; m < 4; ++m) {
        const uint64_t v = __ldg(w64 + 32 * m);
#pragma unroll
        for (unsigned i = 0; i < 4; ++i) cold_add_one(base, hist, static_cast<uint32_t>((v >> (16 * i)) & 0xFFFFu));
      }
    }
  }
  const uint32_t lo = choose_window(cold, hot, scratch);  // (zeroes the hot window; barriers on both sides)
  zero_cold();
  __syncthreads();

  const uint32_t kib = chunk_bytes / 1024;
  const uint64_t acc0 = init_acc_lane(lane);  // lanes 0..7: XXH3's initial accumulators
  uint32_t steps = 0;  // KiB steps since the hot counters were flushed (block-uniform)
  for (uint64_t r = 0; r < rounds; ++r) {
    const uint64_t c = chunk_of(r);
    const uint64_t len = c < chunks ? chunk_len(c) : 0;
    const uint64_t whole = len / 1024, hashed = len > 240 ? (len - 1) / 1024 : 0;
    const uint8_t* const p = bytes_in + c * chunk_bytes;
    const uint64_t* w64 = reinterpret_cast<const uint64_t*>(p) + lane;
    uint64_t acc = acc0;
    for (uint32_t j = 0; j < kib; j += kInFlight) {  // the same trip count in every warp: the flushes' barriers
      uint64_t v[kInFlight][4];
#pragma unroll
      for (unsigned f = 0; f < kInFlight; ++f)
#pragma unroll
        for (unsigned m = 0; m < 4; ++m) v[f][m] = j + f < whole ? __ldg(w64 + 128 * (j + f) + 32 * m) : 0;
#pragma unroll
      for (unsigned f = 0; f < kInFlight; ++f) {
        if (j + f >= whole) break;  // warp-uniform
        count_words(v[f], base, hot_lane4, lo, hist);
        if (j + f < hashed) {
          fold_block(acc, [&](unsigned m) { return v[f][m]; }, BlockKeys(s_secret, lane), lane);
        }
      }
      steps += kInFlight;
      if (steps + kInFlight > kFlushSteps) {  // block-uniform
        flush_hot(hot, lo, hist, true);
        steps = 0;
      }
    }
    if (len != 0) {
      const uint16_t* rest = reinterpret_cast<const uint16_t*>(p);
      for (uint64_t i = whole * 512 + lane; i < len / 2; i += 32)  // the last chunk's symbols past its whole KiB
        count_one(rest[i], base, hot_lane4, lo, hist);
      const uint64_t h = finish_chunk_hash(acc, p, len, lane);
      if (lane == 0) checksums[c] = h;
    }
  }
  flush_hot(hot, lo, hist, false);
  add_cold(cold, hist);
}

}  // namespace

bool histogram_u16_chunk_hashes_fit(const void* d_in, uint32_t chunk_bytes) {
  if (reinterpret_cast<uintptr_t>(d_in) % 8 != 0 || chunk_bytes % 1024 != 0 || chunk_bytes == 0) return false;
  int device = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return static_cast<std::size_t>(optin) >= kWideSmem;
}

void histogram_u16_chunk_hashes(const void* d_in, uint64_t elements, uint32_t chunk_bytes, uint64_t* d_hist,
                                uint64_t* d_bad_index, uint64_t* d_checksums, cudaStream_t stream) {
  VLEC_REQUIRE(histogram_u16_chunk_hashes_fit(d_in, chunk_bytes) && d_hist && d_bad_index && d_checksums,
               "histogram_u16_chunk_hashes: 8-byte aligned input, chunks of a multiple of 1 KiB, every output, and ",
               kWideSmem, " bytes of shared memory a block");
  clear_counts(d_hist, d_bad_index, stream);
  if (elements == 0) return;
  const uint64_t chunks = (2 * elements + chunk_bytes - 1) / chunk_bytes;
  const auto kernel = histogram_chunk_hash_u16_kernel;
  set_attribute_once(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kWideSmem));
  const uint64_t resident = resident_blocks(reinterpret_cast<const void*>(kernel), kWideThreads, kWideSmem);
  const uint64_t want = (chunks + kChunkWarps - 1) / kChunkWarps;
  const unsigned grid = static_cast<unsigned>(std::min(want, resident));
  kernel<<<grid, kWideThreads, kWideSmem, stream>>>(static_cast<const uint16_t*>(d_in), elements, chunk_bytes, chunks,
                                                    d_hist, d_checksums);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
