// cuda/rle_encode_chunked.cu: the `chunked` GPU run-length encoder, after
// Rutter ("Run-length encoding on graphics hardware", 2011): each chunk is
// compressed by one thread block, the compressed sizes are prefix-summed, and
// the chunks are written densely.
//
// Why it is fast: every input byte is loaded by a coalesced 16-byte vector
// load into a shared-memory tile (Rutter's column-order lesson: neighbouring
// threads touch neighbouring addresses), and the chunk's runs come from two
// BlockScans per tile with no global temporary at all:
//   1. a max-scan of the run starts (PARLE's backward mask: element i starts a
//      run when it differs from i-1) gives every element the start of its
//      natural run, so the 65,536 splits are the elements whose distance from
//      it is a multiple of 65,536 (splitting is greedy from the run start);
//   2. a sum-scan of those run heads gives each run its index in the chunk.
// Pass 1 (count) writes R and the stored size; cub::DeviceScan over the chunks
// places them; pass 2 is the same blocks again writing each run's value (at its
// head) and length code (at its end) straight into the packed payload and the
// streams. Rutter stages every chunk in a worst-case slot and copies it
// ("defragments") after the scan; recomputing instead re-reads the chunk,
// mostly from L2, and never writes or re-reads staged runs.
#include <cub/block/block_scan.cuh>

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/rle_common.cuh"
#include "cuda/rle_gpu.hpp"

namespace vlec::cuda {

namespace {

using namespace rle_detail;

constexpr int kBlock = 128;
constexpr int kItems = 8;
constexpr int kTile = kBlock * kItems;  // elements per tile

struct MaxOp {
  __device__ uint32_t operator()(uint32_t a, uint32_t b) const { return a > b ? a : b; }
};

template <typename T>
struct TileStorage {
  alignas(16) T main[kTile];  // elements t0 .. t0 + kTile - 1 of the chunk
  T prev, next;               // elements t0 - 1 and t0 + kTile (when they exist)
};

// Coalesced load of one tile of the chunk at `base` (n elements) into shared memory.
template <typename T>
__device__ __forceinline__ void load_tile(TileStorage<T>& s, const T* base, uint64_t t0, uint64_t n) {
  const T* src = base + t0;
  constexpr int kVec = 16 / sizeof(T);
  if (t0 + kTile <= n && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
    const uint4* v = reinterpret_cast<const uint4*>(src);
    uint4* d = reinterpret_cast<uint4*>(s.main);
    for (int k = threadIdx.x; k < kTile / kVec; k += kBlock) d[k] = __ldg(v + k);
  } else {
    for (int k = threadIdx.x; k < kTile; k += kBlock)
      if (t0 + k < n) s.main[k] = src[k];
  }
  if (threadIdx.x == 0) {
    if (t0 > 0) s.prev = base[t0 - 1];
    if (t0 + kTile < n) s.next = base[t0 + kTile];
  }
}

template <typename T>
__device__ __forceinline__ T tile_at(const TileStorage<T>& s, int k) {  // k in -1 .. kTile
  return k < 0 ? s.prev : k >= kTile ? s.next : s.main[k];
}

// One block per chunk (grid-stride over chunks). kWrite = false: count the runs
// and store R and the stored size. kWrite = true: write the runs at the places
// fixed by the scans.
template <typename T, bool kWrite>
__global__ __launch_bounds__(kBlock) void chunked_kernel(const T* __restrict__ in, uint64_t elements, uint32_t C,
                                                         RleEncodeArgs a) {
  using Scan = cub::BlockScan<uint32_t, kBlock>;
  __shared__ typename Scan::TempStorage scan_temp;
  __shared__ TileStorage<T> s;
  constexpr unsigned w = sizeof(T);
  const uint64_t chunks = (elements + C - 1) / C;

  for (uint64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const T* base = in + chunk * C;
    const uint64_t n = std::min<uint64_t>(C, elements - chunk * C);
    uint8_t* vals = nullptr;
    uint8_t* lens = nullptr;
    uint8_t* svals = nullptr;
    uint16_t* slens = nullptr;
    if (kWrite) {
      const uint32_t R = a.runs[chunk];
      if (writes_payload(a, chunk, w)) {
        vals = a.payload + a.payload_offsets[chunk];
        lens = vals + lengths_offset(R, w);
        if (threadIdx.x == 0) write_padding(vals, R, w);
      }
      if (a.values) {
        const uint64_t r0 = a.run_offsets[chunk];
        svals = a.values + r0 * w;
        slens = a.lengths + r0;
      }
    }
    uint32_t start_carry = 0;  // start of the natural run in progress (position in the chunk)
    uint32_t runs_carry = 0;   // runs begun in earlier tiles
    for (uint64_t t0 = 0; t0 < n; t0 += kTile) {
      __syncthreads();  // the previous tile's shared memory is free
      load_tile(s, base, t0, n);
      __syncthreads();
      const int k0 = threadIdx.x * kItems;
      // Backward mask: the last natural run start among this thread's items.
      uint32_t last_start = 0;
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const uint64_t i = t0 + k0 + j;
        if (i < n && (i == 0 || tile_at(s, k0 + j) != tile_at(s, k0 + j - 1))) last_start = static_cast<uint32_t>(i);
      }
      uint32_t start, max_agg;
      Scan(scan_temp).ExclusiveScan(last_start, start, start_carry, MaxOp(), max_agg);
      start_carry = max(start_carry, max_agg);
      // Run heads: natural starts and the 65,536-element splits after them.
      uint32_t heads = 0;
      {
        uint32_t st = start;
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          const uint64_t i = t0 + k0 + j;
          if (i < n) {
            if (i == 0 || tile_at(s, k0 + j) != tile_at(s, k0 + j - 1)) st = static_cast<uint32_t>(i);
            heads += ((static_cast<uint32_t>(i) - st) & (kMaxRun - 1)) == 0;
          }
        }
      }
      __syncthreads();  // scan_temp is reused
      uint32_t before, tile_runs;
      Scan(scan_temp).ExclusiveSum(heads, before, tile_runs);
      if (kWrite) {
        uint32_t r = runs_carry + before;  // index of the next run head
        uint32_t st = start;
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          const uint64_t i = t0 + k0 + j;
          if (i < n) {
            const T x = tile_at(s, k0 + j);
            if (i == 0 || x != tile_at(s, k0 + j - 1)) st = static_cast<uint32_t>(i);
            const uint32_t d = static_cast<uint32_t>(i) - st;
            if ((d & (kMaxRun - 1)) == 0) {  // a run head: its value
              if (vals) store_value<T>(vals + uint64_t{r} * w, x);
              if (svals) reinterpret_cast<T*>(svals)[r] = x;
              ++r;
            }
            const bool end = i + 1 == n || tile_at(s, k0 + j + 1) != x || ((d + 1) & (kMaxRun - 1)) == 0;
            if (end) {  // a run end: its length code
              const uint16_t code = static_cast<uint16_t>(d & (kMaxRun - 1));
              if (lens) reinterpret_cast<uint16_t*>(lens)[r - 1] = code;
              if (slens) slens[r - 1] = code;
            }
          }
        }
      }
      runs_carry += tile_runs;
    }
    if (!kWrite && threadIdx.x == 0) {
      a.runs[chunk] = runs_carry;
      a.stored_bytes[chunk] = static_cast<uint32_t>(payload_bytes(runs_carry, w));
    }
  }
}

template <typename T>
void launch(const RleEncodeArgs& a, void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  const uint64_t chunks = rle_chunk_count(a.elements, a.chunk_elements);
  const unsigned grid = static_cast<unsigned>(std::min<uint64_t>(chunks, 1u << 24));
  const T* in = static_cast<const T*>(a.in);
  chunked_kernel<T, false><<<grid, kBlock, 0, stream>>>(in, a.elements, a.chunk_elements, a);
  CUDA_CHECK(cudaGetLastError());
  rle_offsets(a, chunks, d_temp, temp_bytes, stream);
  if (a.payload || a.values) {
    chunked_kernel<T, true><<<grid, kBlock, 0, stream>>>(in, a.elements, a.chunk_elements, a);
    CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

// Chunks of up to 65,536 elements (no run is ever split) take the one-pass
// kernel (rle_encode_chunked_onepass.cu); larger chunks the two passes above.
std::size_t rle_chunked_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements) {
  if (chunk_elements <= kMaxRun) return rle_chunked_onepass_temp_bytes(elements, chunk_elements);
  return rle_offsets_temp_bytes(rle_chunk_count(elements, chunk_elements));
}

void rle_encode_chunked(const RleEncodeArgs& a, void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  if (a.chunk_elements <= kMaxRun) return rle_encode_chunked_onepass(a, d_temp, temp_bytes, stream);
  switch (a.width) {
    case 1: launch<uint8_t>(a, d_temp, temp_bytes, stream); break;
    case 2: launch<uint16_t>(a, d_temp, temp_bytes, stream); break;
    case 4: launch<uint32_t>(a, d_temp, temp_bytes, stream); break;
    case 8: launch<uint64_t>(a, d_temp, temp_bytes, stream); break;
  }
}

}  // namespace vlec::cuda
