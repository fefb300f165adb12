// cuda/rle_decode.cu: the GPU decoder of `rle` chunks (docs/FORMAT.md §6),
// validating like the CPU reader (cpu/frame_decompress.cpp).
//
// One thread block per chunk (grid-stride). After the chunk's header checks
// (R in 1..N, stored_bytes == align(R * w, 4) + 2R, zero padding, payload in
// bounds), the runs are taken 1,024 at a time: each thread loads four length
// codes, a BlockScan of the lengths gives every run its end in the chunk (the
// inverse of PARLE's compaction), and the tile's output range is expanded by
// all threads together: thread t fills 16-byte groups t, t + 256, ... of the
// range, finding the group's first run by binary search over the run ends in
// shared memory and walking forward from it, and writes each group with one
// vector store. Every warp therefore writes 512 contiguous bytes a store
// whatever the run lengths, and long runs cost no more per element than
// short ones. (One element a thread per store, as first written, reached 274
// GB/s on 1 GiB of byte runs on the H100: byte stores and a binary search per
// element.)
//
// Corrupt input never makes the kernel leave its buffers: every read is
// inside [offset, offset + stored_bytes) once that range is checked against
// the payload, and elements are written only while the running sum of the
// lengths stays within the chunk; a tile that would overflow it stops the chunk
// with kRleBadLengths before anything of it is written.
#include <cub/block/block_scan.cuh>

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/rle_common.cuh"
#include "cuda/rle_gpu.hpp"

namespace vlec::cuda {

namespace {

using namespace rle_detail;

constexpr int kBlock = 256;
constexpr int kItems = 4;
constexpr int kTileRuns = kBlock * kItems;

// The first run r in [lo, n) whose inclusive end is past tile position q.
__device__ __forceinline__ uint32_t first_run_past(const uint32_t* ends, uint32_t lo, uint32_t n, uint32_t q) {
  uint32_t hi = n - 1;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (ends[mid] > q) hi = mid; else lo = mid + 1;
  }
  return lo;
}

template <typename T>
__global__ __launch_bounds__(kBlock) void rle_decode_kernel(RleDecodeArgs a, uint64_t chunks) {
  using Scan = cub::BlockScan<uint32_t, kBlock>;
  __shared__ typename Scan::TempStorage scan_temp;
  __shared__ uint32_t ends[kTileRuns];  // inclusive end of each run of the tile, from the tile's first element
  __shared__ T vals[kTileRuns];
  constexpr unsigned w = sizeof(T);
  const uint32_t C = a.chunk_elements;

  for (uint64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const uint64_t n = std::min<uint64_t>(C, a.elements - chunk * C);
    T* out = static_cast<T*>(a.out) + chunk * C;
    constexpr uint32_t G = 16 / sizeof(T);  // elements of a 16-byte group
    // Element p of the chunk starts a 16-byte aligned group when (mis + p) % G == 0.
    const uint32_t mis = static_cast<uint32_t>((reinterpret_cast<uintptr_t>(out) / sizeof(T)) % G);
    const uint64_t off = a.offsets[chunk];
    const uint32_t stored = a.stored_bytes[chunk], R = a.runs[chunk];
    const bool raw = a.raw_iff_no_runs ? R == 0 : stored == n * w;
    // The checks read only per-chunk values: every thread reaches the same status.
    uint32_t status = kRleOk;
    if (off % 4 != 0 || off > a.payload_bytes || stored > a.payload_bytes - off)
      status = kRleOutOfBounds;
    else if (raw ? R != 0 : (R == 0 || R > n))
      status = kRleBadRunCount;
    else if (raw ? stored != n * w : stored != payload_bytes(R, w))
      status = kRleBadSize;
    const uint8_t* src = a.payload + off;
    if (status == kRleOk && !raw) {
      for (uint64_t i = uint64_t{R} * w; i < lengths_offset(R, w); ++i)
        if (src[i] != 0) status = kRleBadPadding;
    }
    if (status == kRleOk && raw) {
      for (uint64_t k = threadIdx.x; k < n; k += kBlock) out[k] = load_value<T>(src + k * w);
    } else if (status == kRleOk) {
      const uint16_t* lens = reinterpret_cast<const uint16_t*>(src + lengths_offset(R, w));
      uint64_t pos = 0;  // elements of the chunk written so far
      for (uint64_t t = 0; t < R; t += kTileRuns) {
        const uint32_t tile_runs = static_cast<uint32_t>(std::min<uint64_t>(kTileRuns, R - t));
        const int k0 = threadIdx.x * kItems;
        uint32_t len[kItems], sum = 0;
        __syncthreads();  // every thread is done with the previous tile's ends, values and scan storage
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          const uint32_t k = k0 + j;
          len[j] = k < tile_runs ? uint32_t{lens[t + k]} + 1 : 0;
          if (k < tile_runs) vals[k] = load_value<T>(src + (t + k) * w);
          sum += len[j];
        }
        uint32_t before, tile_total;
        Scan(scan_temp).ExclusiveSum(sum, before, tile_total);
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          before += len[j];
          ends[k0 + j] = before;
        }
        __syncthreads();
        if (tile_total > n - pos) {  // uniform: the runs overflow the chunk
          status = kRleBadLengths;
          break;
        }
        // Expansion: each thread fills 16-byte groups of consecutive
        // elements (one vector store each; a warp writes 512 contiguous
        // bytes), walking forward through the runs from one binary search
        // per group. The few elements before the first and after the last
        // whole group of the tile are written one by one.
        const uint32_t head = (G - (mis + pos) % G) % G;  // elements before the first aligned group
        const uint32_t lead = head < tile_total ? head : tile_total;
        const uint32_t groups = (tile_total - lead) / G;
        const uint32_t tail0 = lead + groups * G;
        uint32_t lo = 0;  // this thread's run index only grows
        for (uint32_t g = threadIdx.x; g < groups; g += kBlock) {
          const uint32_t q0 = lead + g * G;
          lo = first_run_past(ends, lo, tile_runs, q0);
          union {
            uint4 u;
            T e[G];
          } v;
          uint32_t r = lo;
#pragma unroll
          for (uint32_t j = 0; j < G; ++j) {
            while (ends[r] <= q0 + j) ++r;  // ends[tile_runs - 1] == tile_total bounds the walk
            v.e[j] = vals[r];
          }
          *reinterpret_cast<uint4*>(out + pos + q0) = v.u;
        }
        for (uint32_t k = threadIdx.x; k < lead + (tile_total - tail0); k += kBlock) {
          const uint32_t q = k < lead ? k : tail0 + (k - lead);
          out[pos + q] = vals[first_run_past(ends, 0, tile_runs, q)];
        }
        pos += tile_total;
      }
      if (status == kRleOk && pos != n) status = kRleBadLengths;
    }
    if (threadIdx.x == 0) a.status[chunk] = status;
    __syncthreads();  // shared memory is reused by the next chunk
  }
}

}  // namespace

void rle_decode(const RleDecodeArgs& a, cudaStream_t stream) {
  VLEC_REQUIRE(a.width == 1 || a.width == 2 || a.width == 4 || a.width == 8, "element width ", a.width,
               " is not 1, 2, 4 or 8");
  VLEC_REQUIRE(a.chunk_elements >= 1, "chunk_elements must be at least 1");
  const uint64_t chunks = rle_chunk_count(a.elements, a.chunk_elements);
  if (chunks == 0) return;
  VLEC_REQUIRE(a.payload && a.offsets && a.stored_bytes && a.runs && a.out && a.status, "rle_decode: null argument");
  const unsigned grid = static_cast<unsigned>(std::min<uint64_t>(chunks, 1u << 24));
  switch (a.width) {
    case 1: rle_decode_kernel<uint8_t><<<grid, kBlock, 0, stream>>>(a, chunks); break;
    case 2: rle_decode_kernel<uint16_t><<<grid, kBlock, 0, stream>>>(a, chunks); break;
    case 4: rle_decode_kernel<uint32_t><<<grid, kBlock, 0, stream>>>(a, chunks); break;
    case 8: rle_decode_kernel<uint64_t><<<grid, kBlock, 0, stream>>>(a, chunks); break;
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
