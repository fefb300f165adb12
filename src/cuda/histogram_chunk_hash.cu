// cuda/histogram_chunk_hash.cu: the byte histogram of a Huffman frame's
// input and the XXH3-64 of each of its chunks, in one pass (device::compress
// with the lanes encoder).
//
// Why: full compress reads its input twice, once for the histogram and once
// for the encoder's pass A, which also summed each chunk's XXH3 blocks and
// folded them (~7 % of the encoder's instructions a row of skewed bytes,
// bench/results/2026-11-28-h100-session26-*). The histogram pass is bound by
// DRAM reads, not by its instructions, so the hash costs it less than it
// costs the encoder, which, told the checksums are given
// (HuffmanEncodeArgs::given_checksums), skips both. Measured on the H100, 1
// GiB of skewed bytes: this pass 0.40 ms against the plain histogram's 0.36
// at 64 KiB chunks (0.49-0.50 at 16 KiB), full compress 1.80-1.82 ms
// against 1.91 with the encoder hashing (2.18-2.30 against 2.31 at 16 KiB).
//
// Why it is fast: the counting is the replicated_shared byte kernel's (32
// copies of the histogram, copy l in bank l, so a warp's 32 shared atomics
// never conflict; histogram_replicated.cuh). Each of eight load warps takes
// whole 1 KiB XXH3 blocks of a chunk, two at a time in flight, as 8-byte
// words lane + 32m, the layout block_sum (xxh3_warp.cuh) sums with keys held
// in registers; the block sums wait in shared memory, and a ninth warp folds
// each chunk while the load warps count the next (two buffers of sums,
// handed over by named barriers: no block-wide barrier a chunk).
#include "cuda/cuda_check.hpp"
#include "cuda/histogram_common.cuh"
#include "cuda/histogram_gpu.hpp"
#include "cuda/launch_cache.hpp"
#include "cuda/xxh3_warp.cuh"

namespace vlec::cuda {
namespace {

constexpr unsigned kLoadWarps = 8;                 // count and sum blocks
constexpr unsigned kThreads = (kLoadWarps + 1) * 32;  // + one warp that folds
constexpr unsigned kSumWords = 8 * (kMaxHashedChunkBytes / 1024);  // one chunk's block sums

// Named barriers between the load warps and the fold warp, one pair per
// buffer of block sums: FULL (the loads' sums are in) and EMPTY (folded).
// The load warps arrive and go on; only the side that needs the other waits.
// Barrier ids are immediates (a register id makes ptxas reserve all 16).
template <unsigned kId>
__device__ __forceinline__ void barrier_arrive() {
  asm volatile("bar.arrive %0, %1;" ::"n"(kId), "n"(kThreads) : "memory");
}
template <unsigned kId>
__device__ __forceinline__ void barrier_sync() {
  asm volatile("bar.sync %0, %1;" ::"n"(kId), "n"(kThreads) : "memory");
}
__device__ __forceinline__ void full_arrive(unsigned buf) { buf ? barrier_arrive<2>() : barrier_arrive<1>(); }
__device__ __forceinline__ void full_sync(unsigned buf) { buf ? barrier_sync<2>() : barrier_sync<1>(); }
__device__ __forceinline__ void empty_arrive(unsigned buf) { buf ? barrier_arrive<4>() : barrier_arrive<3>(); }
__device__ __forceinline__ void empty_sync(unsigned buf) { buf ? barrier_sync<4>() : barrier_sync<3>(); }

// One chunk at a time per block (grid-stride over chunks). `in` is 8-byte
// aligned and chunk_bytes a multiple of 1,024 up to kMaxHashedChunkBytes
// (histogram_chunk_hashes_fit); the last chunk may be shorter.
//
// The fold (each chunk's block sums scrambled in order, then its tail) is a
// chain of ~4 k cycles a 64 KiB chunk. Done by a load warp between block
// barriers it held the block's loads back: the pass took 0.44 ms a GiB at
// 64 KiB chunks and 0.58 ms at 16 KiB against the plain histogram's 0.36
// (bench/results/2026-11-28-h100-session26-*). Here a ninth warp folds chunk
// c while the load warps count chunk c + grid; they wait only if it falls
// two chunks behind.
// kInFlight: the KiB blocks a load warp loads at once. 2 (4 blocks an SM,
// 56 registers) against 4 (3 blocks an SM, 72): at 16 KiB chunks 0.49-0.50
// against 0.56 ms a GiB, at 64 KiB 0.40 against 0.39
// (bench/results/2026-11-28-h100-session26-hash-in-flight-gpu-bench.log).
template <unsigned kInFlight, unsigned kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    histogram_chunk_hash_u8_kernel(const uint8_t* in, uint64_t bytes, uint32_t chunk_bytes, uint64_t chunks,
                                   uint64_t* hist, uint64_t* checksums) {
  __shared__ uint32_t sh[256 * kCopies];
  __shared__ unsigned long long s_sums[2][kSumWords];
  zero_byte_copies(sh, blockDim.x);
  __syncthreads();
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  auto chunk_len = [&](uint64_t c) { return min(uint64_t{chunk_bytes}, bytes - c * chunk_bytes); };
  auto hashed_blocks = [](uint64_t len) { return len > 240 ? (len - 1) / 1024 : 0; };  // the rest: finish_long_warp
  if (warp == kLoadWarps) {  // the fold warp
    unsigned buf = 0;
    for (uint64_t c = blockIdx.x; c < chunks; c += gridDim.x, buf ^= 1) {
      full_sync(buf);
      const uint64_t len = chunk_len(c);
      const uint64_t h = fold_chunk_hash(s_sums[buf], hashed_blocks(len), in + c * chunk_bytes, len, lane);
      if (lane == 0) checksums[c] = h;
      if (c + 2 * uint64_t{gridDim.x} < chunks) empty_arrive(buf);  // the load warps reuse the buffer
    }
  } else {
    char* const base = reinterpret_cast<char*>(sh);
    const uint32_t lane4 = lane * 4;
    const BlockKeys keys(lane);
    unsigned buf = 0, round = 0;
    for (uint64_t c = blockIdx.x; c < chunks; c += gridDim.x, buf ^= 1, ++round) {
      if (round >= 2) empty_sync(buf);  // chunk c - 2 grid is folded
      const uint8_t* p = in + c * chunk_bytes;
      const uint64_t len = chunk_len(c);
      const uint64_t hashed = hashed_blocks(len);
      const uint64_t whole = len / 1024;  // whole KiB, counted by words
      const uint64_t* w64 = reinterpret_cast<const uint64_t*>(p) + lane;
      unsigned long long* sums = s_sums[buf];
      auto take = [&](const uint64_t (&v)[4], uint64_t j) {
#pragma unroll
        for (unsigned m = 0; m < 4; ++m) {
          count_byte_word(base, lane4, static_cast<uint32_t>(v[m]));
          count_byte_word(base, lane4, static_cast<uint32_t>(v[m] >> 32));
        }
        if (j < hashed) {  // warp-uniform
          const uint64_t s = block_sum([&](unsigned m) { return v[m]; }, keys);
          if (lane < 8) sums[8 * j + lane] = s;
        }
      };
      for (uint64_t j = warp; j < whole; j += kInFlight * kLoadWarps) {  // kInFlight blocks' loads at once
        uint64_t v[kInFlight][4];
#pragma unroll
        for (unsigned f = 0; f < kInFlight; ++f) {
          const uint64_t k = j + f * kLoadWarps;
#pragma unroll
          for (unsigned m = 0; m < 4; ++m) v[f][m] = k < whole ? __ldg(w64 + 128 * k + 32 * m) : 0;
        }
#pragma unroll
        for (unsigned f = 0; f < kInFlight; ++f)
          if (j + f * kLoadWarps < whole) take(v[f], j + f * kLoadWarps);
      }
      for (uint64_t i = whole * 1024 + threadIdx.x; i < len; i += kLoadWarps * 32)
        atomicAdd(reinterpret_cast<uint32_t*>(base + ((uint32_t{p[i]} << 7) | lane4)), 1u);
      full_arrive(buf);  // (bar.arrive orders the sums' shared stores before it)
    }
  }
  __syncthreads();
  add_byte_copies(sh, hist, blockDim.x);
}

// The same pass with every warp on whole chunks (histogram_chunk_hash_u16's
// design for bytes): each of a block's eight warps walks its chunks in
// order, counts each KiB and folds it into the chunk's XXH3 accumulators at
// once; no block sums stored, no fold warp, no barrier but at the start and
// the end. Faster at 16 KiB chunks (the fold warp's pass waits a round trip
// a chunk), slower at 64 KiB (u8_chunk_hash_by_warps_max_bytes).
constexpr unsigned kWarpThreads = 256, kWarpChunkWarps = kWarpThreads / 32;
__global__ void __launch_bounds__(kWarpThreads, 4)
    histogram_chunk_hash_u8_warps_kernel(const uint8_t* in, uint64_t bytes, uint32_t chunk_bytes, uint64_t chunks,
                                         uint64_t* hist, uint64_t* checksums) {
  __shared__ uint32_t sh[256 * kCopies];
  __shared__ uint64_t s_secret[xxh3::kSecretSize / 8];
  zero_byte_copies(sh, kWarpThreads);
  copy_secret_words(s_secret);
  __syncthreads();
  char* const base = reinterpret_cast<char*>(sh);
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t lane4 = lane * 4;
  const uint64_t acc0 = init_acc_lane(lane);  // lanes 0..7: XXH3's initial accumulators
  const uint64_t stride = uint64_t{gridDim.x} * kWarpChunkWarps;
  for (uint64_t c = uint64_t{blockIdx.x} * kWarpChunkWarps + warp; c < chunks; c += stride) {
    const uint8_t* const p = in + c * chunk_bytes;
    const uint64_t len = min(uint64_t{chunk_bytes}, bytes - c * chunk_bytes);
    const uint64_t whole = len / 1024, hashed = len > 240 ? (len - 1) / 1024 : 0;
    const uint64_t* w64 = reinterpret_cast<const uint64_t*>(p) + lane;
    uint64_t acc = acc0;
    for (uint64_t j = 0; j < whole; j += 2) {  // two KiB blocks' loads at once
      uint64_t v[2][4];
#pragma unroll
      for (unsigned f = 0; f < 2; ++f)
#pragma unroll
        for (unsigned m = 0; m < 4; ++m) v[f][m] = j + f < whole ? __ldg(w64 + 128 * (j + f) + 32 * m) : 0;
#pragma unroll
      for (unsigned f = 0; f < 2; ++f) {
        if (j + f >= whole) break;  // warp-uniform
#pragma unroll
        for (unsigned m = 0; m < 4; ++m) {
          count_byte_word(base, lane4, static_cast<uint32_t>(v[f][m]));
          count_byte_word(base, lane4, static_cast<uint32_t>(v[f][m] >> 32));
        }
        if (j + f < hashed) {
          fold_block(acc, [&](unsigned m) { return v[f][m]; }, BlockKeys(s_secret, lane), lane);
        }
      }
    }
    for (uint64_t i = whole * 1024 + lane; i < len; i += 32)  // the last chunk's bytes past its whole KiB
      atomicAdd(reinterpret_cast<uint32_t*>(base + ((uint32_t{p[i]} << 7) | lane4)), 1u);
    const uint64_t h = finish_chunk_hash(acc, p, len, lane);
    if (lane == 0) checksums[c] = h;
  }
  __syncthreads();
  add_byte_copies(sh, hist, kWarpThreads);
}

}  // namespace

bool histogram_chunk_hashes_fit(const void* d_in, uint32_t chunk_bytes) {
  return reinterpret_cast<uintptr_t>(d_in) % 8 == 0 && chunk_bytes % 1024 == 0 && chunk_bytes > 0 &&
         chunk_bytes <= kMaxHashedChunkBytes;
}

void histogram_u8_chunk_hashes(const void* d_in, uint64_t bytes, uint32_t chunk_bytes, uint64_t* d_hist,
                               uint64_t* d_bad_index, uint64_t* d_checksums, cudaStream_t stream) {
  VLEC_REQUIRE(histogram_chunk_hashes_fit(d_in, chunk_bytes) && d_hist && d_bad_index && d_checksums,
               "histogram_u8_chunk_hashes: 8-byte aligned input, chunks of a multiple of 1 KiB up to ",
               kMaxHashedChunkBytes, " bytes, and every output");
  clear_counts(d_hist, d_bad_index, stream);
  if (bytes == 0) return;
  const uint64_t chunks = (bytes + chunk_bytes - 1) / chunk_bytes;
  auto launch = [&](auto kernel) {
    const uint64_t resident = resident_blocks(reinterpret_cast<const void*>(kernel), kThreads);
    const unsigned grid = static_cast<unsigned>(std::min<uint64_t>(chunks, resident));
    kernel<<<grid, kThreads, 0, stream>>>(static_cast<const uint8_t*>(d_in), bytes, chunk_bytes, chunks, d_hist,
                                          d_checksums);
  };
  if (chunk_bytes <= u8_chunk_hash_by_warps_max_bytes) {
    const uint64_t resident = resident_blocks(reinterpret_cast<const void*>(histogram_chunk_hash_u8_warps_kernel),
                                              kWarpThreads);
    const uint64_t want = (chunks + kWarpChunkWarps - 1) / kWarpChunkWarps;
    const unsigned grid = static_cast<unsigned>(std::min(want, resident));
    histogram_chunk_hash_u8_warps_kernel<<<grid, kWarpThreads, 0, stream>>>(static_cast<const uint8_t*>(d_in), bytes,
                                                                              chunk_bytes, chunks, d_hist, d_checksums);
  } else {
    launch(histogram_chunk_hash_u8_kernel<2, 4>);
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
