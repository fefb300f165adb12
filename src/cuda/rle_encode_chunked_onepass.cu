// cuda/rle_encode_chunked_onepass.cu: Rutter's `chunked` run-length encoder
// ("Run-length encoding on graphics hardware", 2011) in one pass, for chunks
// of at most 65,536 elements (the default chunk size and below), where no run
// is ever split.
//
// Rutter compresses each chunk in its own block, prefix-sums the compressed
// sizes in a second step, and then moves every chunk to its place. Here the
// prefix sum is a decoupled look-back (chunk_scan.cuh) inside the same
// kernel, so each block, as soon as it has counted its chunk's runs, knows
// where the chunk goes and writes it there:
//   1. count: coalesced 16-byte loads of the chunk, each element compared with
//      the one before it (PARLE's backward mask), summed over the block;
//   2. place: the chunk's payload size and run count are published and the
//      block looks back over its predecessors for their sums (chunk ids come
//      from an atomic ticket, so every predecessor is running or done);
//   3. write: the chunk again, tile by tile (it is still in L2: a few tens of
//      MB are in flight over the whole GPU), each thread a contiguous
//      segment; a BlockScan numbers the run heads, which go to shared memory
//      as positions; then values and length codes (differences of
//      neighbouring heads) are stored by consecutive threads to consecutive
//      addresses, so the stores coalesce.
// DRAM sees the input once and the output once. The result is byte for byte
// the two-pass kernel's (rle_encode_chunked.cu), which remains for larger
// chunks, whose runs may need splitting at 65,536.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <algorithm>

#include "cuda/chunk_scan.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/launch_cache.hpp"
#include "cuda/rle_common.cuh"
#include "cuda/rle_gpu.hpp"
#include "cuda/warp_index.cuh"

namespace vlec::cuda {

namespace {

using namespace rle_detail;

constexpr int kThreads = 256;
constexpr int kSegBytes = 32;                     // bytes of a thread's segment in the write pass
constexpr int kTileBytes = kThreads * kSegBytes;  // 8 KiB of input a tile

template <typename T>
struct OnepassShared {
  static constexpr int kSeg = kSegBytes / static_cast<int>(sizeof(T));
  static constexpr int kTile = kThreads * kSeg;
  alignas(16) T tile[kTile];
  uint16_t heads[kTile];  // chunk-relative positions of the tile's run heads, in order
  union {
    typename cub::BlockScan<uint32_t, kThreads>::TempStorage scan;
    typename cub::BlockReduce<uint32_t, kThreads>::TempStorage reduce;
  } cub;
  uint64_t chunk, payload_offset, run_offset;
  uint32_t runs;
  bool raw;  // stored raw by the frame: no runs in the payload
  T before;  // the element before the tile
};

// Bytes: bit 7 of each byte of the result is set where w's byte differs from
// the byte before it (shifted holds, byte for byte, the preceding bytes).
// Four comparisons in five integer instructions.
__device__ __forceinline__ uint32_t byte_heads(uint32_t w, uint32_t shifted) {
  const uint32_t d = w ^ shifted;
  return (d | ((d & 0x7F7F7F7Fu) + 0x7F7F7F7Fu)) & 0x80808080u;
}

// Head bits of N consecutive words of bytes, given the byte before the first.
template <int N>
__device__ __forceinline__ void word_heads(const uint32_t* w, uint32_t before, uint32_t* h) {
  h[0] = byte_heads(w[0], (w[0] << 8) | before);
#pragma unroll
  for (int q = 1; q < N; ++q) h[q] = byte_heads(w[q], __funnelshift_l(w[q - 1], w[q], 8));
}

// Runs that start in a vector of kVec elements, given the element before it.
template <typename T, int kVec>
__device__ __forceinline__ uint32_t vector_heads(const T (&x)[kVec], T prev, bool first) {
  uint32_t h = first || x[0] != prev;
#pragma unroll
  for (int j = 1; j < kVec; ++j) h += x[j] != x[j - 1];
  return h;
}

template <typename T>
__device__ __forceinline__ uint32_t count_chunk_heads(const T* base, uint64_t n, bool vectors) {
  constexpr int kVec = 16 / sizeof(T);
  uint32_t heads = 0;
  const uint64_t full = vectors ? n / kVec : 0;
#pragma unroll 8
  for (uint64_t v = threadIdx.x; v < full; v += kThreads) {
    union {
      uint4 u;
      T e[kVec];
    } x;
    x.u = __ldg(reinterpret_cast<const uint4*>(base) + v);
    if constexpr (sizeof(T) == 1) {  // word-wide: the ALU pipe is the limit here
      const uint32_t w[4] = {x.u.x, x.u.y, x.u.z, x.u.w};
      // The chunk's first byte always starts a run: compare it with its complement.
      const uint32_t before = v > 0 ? uint32_t{__ldg(base + v * kVec - 1)} : (~w[0] & 0xFFu);
      uint32_t h[4];
      word_heads<4>(w, before, h);
      heads += __popc(h[0]) + __popc(h[1]) + __popc(h[2]) + __popc(h[3]);
    } else {
      const T prev = v > 0 ? __ldg(base + v * kVec - 1) : T{};
      heads += vector_heads<T, kVec>(x.e, prev, v == 0);
    }
  }
  for (uint64_t i = full * kVec + threadIdx.x; i < n; i += kThreads)
    heads += i == 0 || __ldg(base + i) != __ldg(base + i - 1);
  return heads;
}

// The store step for bytes written into an rle payload alone: each thread
// takes 4 consecutive runs whose payload index is a multiple of 4 and writes
// their values with one 32-bit store and their length codes with two (the
// values and the codes start 4-byte aligned), instead of a byte and a 16-bit
// store a run. Run done + j (j < tile_runs) starts at heads[j]; the run
// before run `done` started at open_head; a run's code is written once the
// next run's head is known, so run done + tile_runs - 1's code waits for the
// next tile (or the chunk's end).
__device__ __forceinline__ void store_byte_runs_by_quads(const uint8_t* tile, const uint16_t* heads, uint64_t t0,
                                                         uint32_t done, uint32_t tile_runs, uint32_t open_head,
                                                         uint8_t* vals, uint16_t* lens) {
  if (tile_runs == 0) return;
  const uint32_t first_code = done > 0 ? done - 1 : 0;    // codes first_code .. done + tile_runs - 2
  const uint32_t end_code = done + tile_runs - 1;         // (exclusive)
  const uint32_t end_value = done + tile_runs;            // values done .. end_value - 1
  const auto head = [&](uint32_t g) -> uint32_t {         // head of run g, g in [done - 1, end_value)
    return g + 1 == done ? open_head : heads[g - done];
  };
  for (uint32_t q = first_code / 4 + threadIdx.x; 4 * q < end_value; q += kThreads) {
    const uint32_t g0 = 4 * q;
    if (g0 >= done && g0 + 4 <= end_code) {  // four values and four codes, all of this tile
      uint32_t h[5];
#pragma unroll
      for (int i = 0; i < 5; ++i) h[i] = heads[g0 + i - done];
      uint32_t v = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) v |= uint32_t{tile[h[i] - t0]} << (8 * i);
      *reinterpret_cast<uint32_t*>(vals + g0) = v;
      reinterpret_cast<uint32_t*>(lens + g0)[0] = (h[1] - h[0] - 1) | (h[2] - h[1] - 1) << 16;
      reinterpret_cast<uint32_t*>(lens + g0)[1] = (h[3] - h[2] - 1) | (h[4] - h[3] - 1) << 16;
    } else {
      for (uint32_t g = g0; g < g0 + 4; ++g) {
        if (g >= done && g < end_value) vals[g] = tile[head(g) - t0];
        if (g >= first_code && g < end_code && g + 1 >= done)
          lens[g] = static_cast<uint16_t>(head(g + 1) - head(g) - 1);
      }
    }
  }
}

// Bytes fit 48 registers without spilling (5 blocks an SM: more chunks in
// flight for a kernel bound by issue and by its per-chunk latency chain).
template <typename T>
__global__ __launch_bounds__(kThreads, sizeof(T) == 1 ? 5 : 4) void onepass_kernel(const T* __restrict__ in, uint64_t elements, uint32_t C,
                                                           RleEncodeArgs a, ChunkScanState payload_scan,
                                                           ChunkScanState run_scan) {
  using S = OnepassShared<T>;
  constexpr int kSeg = S::kSeg, kTile = S::kTile;
  constexpr unsigned w = sizeof(T);
  __shared__ S s;
  const uint64_t chunks = (elements + C - 1) / C;
  const unsigned lane = threadIdx.x & 31;
  for (;;) {
    __syncthreads();  // s.chunk and the tile are free
    if (threadIdx.x == 0) s.chunk = atomicAdd(payload_scan.ticket, 1u);
    __syncthreads();
    const uint64_t chunk = s.chunk;
    if (chunk >= chunks) return;
    const T* base = in + chunk * C;
    const uint64_t n = std::min<uint64_t>(C, elements - chunk * C);
    const bool vectors = (reinterpret_cast<uintptr_t>(base) & 15) == 0;

    // 1. count.
    const uint32_t mine = count_chunk_heads(base, n, vectors);
    const uint32_t R = cub::BlockReduce<uint32_t, kThreads>(s.cub.reduce).Sum(mine);

    // 2. place: warp 0 looks back for the payload offset, warp 1 at the same
    // time for the run offset.
    if (threadIdx.x == 0) s.runs = R;  // the reduction's result is in thread 0
    __syncthreads();
    const unsigned warp = uniform_warp_index();
    if (warp < 2) {
      const uint32_t runs = s.runs;
      const uint64_t stored = payload_bytes(runs, w);
      // A chunk the frame stores raw takes its raw size in the frame's payload
      // (RleEncodeArgs::skip_raw_chunks) and gets no runs written.
      const bool raw = a.skip_raw_chunks && stored >= n * w;
      if (warp == 0) {
        const uint64_t place = align4(raw ? n * w : stored);
        const uint64_t poff = scan_exclusive_prefix(payload_scan, chunk, place, lane);
        if (lane == 0) {
          a.runs[chunk] = runs;
          a.stored_bytes[chunk] = static_cast<uint32_t>(stored);
          a.payload_offsets[chunk] = poff;
          if (chunk + 1 == chunks) a.payload_offsets[chunks] = poff + place;
          s.payload_offset = poff;
          s.raw = raw;
        }
      } else {
        const uint64_t roff = scan_exclusive_prefix(run_scan, chunk, runs, lane);
        if (lane == 0) {
          a.run_offsets[chunk] = roff;
          if (chunk + 1 == chunks) a.run_offsets[chunks] = roff + runs;
          s.run_offset = roff;
        }
      }
    }
    __syncthreads();
    if ((!a.payload || s.raw) && !a.values) continue;
    const uint32_t runs = s.runs;
    uint8_t* vals = a.payload && !s.raw ? a.payload + s.payload_offset : nullptr;
    uint16_t* lens = vals ? reinterpret_cast<uint16_t*>(vals + lengths_offset(runs, w)) : nullptr;
    T* svals = a.values ? reinterpret_cast<T*>(a.values) + s.run_offset : nullptr;
    uint16_t* slens = a.values ? a.lengths + s.run_offset : nullptr;
    if (threadIdx.x == 0 && vals) write_padding(vals, runs, w);

    // 3. write, tile by tile.
    // Whole tiles are fetched into registers one tile ahead, so the next
    // tile's loads are in flight while this one is scanned and written.
    constexpr int kFetch = kTileBytes / 16 / kThreads;  // 16-byte loads a thread a tile
    uint4 ahead[kFetch];
    const auto whole = [&](uint64_t t) { return vectors && t + kTile <= n; };
    const auto fetch = [&](uint64_t t) {
      const uint4* src = reinterpret_cast<const uint4*>(base + t);
#pragma unroll
      for (int q = 0; q < kFetch; ++q) ahead[q] = __ldg(src + threadIdx.x + q * kThreads);
    };
    if (whole(0)) fetch(0);
    uint32_t done = 0;       // runs whose heads came in earlier tiles
    uint32_t open_head = 0;  // head of the last of them (its length is not known yet)
    for (uint64_t t0 = 0; t0 < n; t0 += kTile) {
      const int m = static_cast<int>(std::min<uint64_t>(kTile, n - t0));
      __syncthreads();  // the previous tile's heads and elements are consumed
      if (whole(t0)) {
        uint4* dst = reinterpret_cast<uint4*>(s.tile);
#pragma unroll
        for (int q = 0; q < kFetch; ++q) dst[threadIdx.x + q * kThreads] = ahead[q];
        if (whole(t0 + kTile)) fetch(t0 + kTile);
      } else {
        for (int k = threadIdx.x; k < m; k += kThreads) s.tile[k] = __ldg(base + t0 + k);
      }
      if (threadIdx.x == 0 && t0 > 0) s.before = __ldg(base + t0 - 1);
      __syncthreads();
      // The thread's segment, from shared memory into registers with two
      // 16-byte loads (element-wise loads of neighbouring segments, 32 bytes
      // apart, would hit the same banks 8 ways).
      const int k0 = threadIdx.x * kSeg;
      union {
        uint4 u[kSegBytes / 16];
        T e[kSeg];
      } seg;
#pragma unroll
      for (int q = 0; q < kSegBytes / 16; ++q) seg.u[q] = reinterpret_cast<const uint4*>(s.tile + k0)[q];
      const T before = k0 > 0 ? s.tile[k0 - 1] : s.before;
      uint32_t h = 0;
      uint32_t r, tile_runs;
      if constexpr (sizeof(T) == 1) {
        constexpr int kWords = kSegBytes / 4;
        const uint32_t* w = reinterpret_cast<const uint32_t*>(seg.u);
        uint32_t hb[kWords];
        word_heads<kWords>(w, t0 + k0 == 0 ? (~w[0] & 0xFFu) : uint32_t{before}, hb);
#pragma unroll
        for (int q = 0; q < kWords; ++q) {
          const int valid = m - (k0 + 4 * q);  // bytes of this word inside the tile
          if (valid < 4) hb[q] &= valid <= 0 ? 0u : (0x80808080u >> (8 * (4 - valid)));
          h += __popc(hb[q]);
        }
        cub::BlockScan<uint32_t, kThreads>(s.cub.scan).ExclusiveSum(h, r, tile_runs);
#pragma unroll
        for (int q = 0; q < kWords; ++q)
          for (uint32_t t = hb[q]; t; t &= t - 1)
            s.heads[r++] = static_cast<uint16_t>(t0 + k0 + 4 * q + ((__ffs(t) - 1) >> 3));
      } else {
#pragma unroll
        for (int j = 0; j < kSeg; ++j) {
          const T p = j > 0 ? seg.e[j - 1] : before;
          h += k0 + j < m && ((t0 + k0 + j == 0) || seg.e[j] != p);
        }
        cub::BlockScan<uint32_t, kThreads>(s.cub.scan).ExclusiveSum(h, r, tile_runs);
#pragma unroll
        for (int j = 0; j < kSeg; ++j) {
          const T p = j > 0 ? seg.e[j - 1] : before;
          if (k0 + j < m && ((t0 + k0 + j == 0) || seg.e[j] != p))
            s.heads[r++] = static_cast<uint16_t>(t0 + k0 + j);
        }
      }
      __syncthreads();
      // Run done + j starts at heads[j]; run done + j - 1 ends just before it.
      if (sizeof(T) == 1 && vals && !svals && tile_runs >= kThreads) {  // short runs: quads pay
        store_byte_runs_by_quads(reinterpret_cast<const uint8_t*>(s.tile), s.heads, t0, done, tile_runs, open_head,
                                 vals, lens);
      } else {
      for (uint32_t j = threadIdx.x; j < tile_runs; j += kThreads) {
        const uint32_t head = s.heads[j];
        const T x = s.tile[head - t0];
        if (vals) store_value<T>(vals + uint64_t{done + j} * w, x);
        if (svals) svals[done + j] = x;
        if (done + j > 0) {
          const uint32_t prev_head = j > 0 ? s.heads[j - 1] : open_head;
          const uint16_t code = static_cast<uint16_t>(head - prev_head - 1);
          if (lens) lens[done + j - 1] = code;
          if (slens) slens[done + j - 1] = code;
        }
      }
      }
      if (tile_runs > 0) open_head = s.heads[tile_runs - 1];
      done += tile_runs;
    }
    if (threadIdx.x == 0) {  // the chunk's last run ends with the chunk
      const uint16_t code = static_cast<uint16_t>(n - open_head - 1);
      if (lens) lens[runs - 1] = code;
      if (slens) slens[runs - 1] = code;
    }
  }
}

template <typename T>
void launch(const RleEncodeArgs& a, void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  const uint64_t chunks = rle_chunk_count(a.elements, a.chunk_elements);
  TempCarver t{static_cast<uint8_t*>(d_temp)};
  ChunkScanState payload_scan{t.take<unsigned long long>(chunks), t.take<unsigned int>(1)};
  ChunkScanState run_scan{t.take<unsigned long long>(chunks), payload_scan.ticket};
  VLEC_REQUIRE(t.used <= temp_bytes, "chunked: temporary storage too small");
  // The three pieces are consecutive: one memset clears them.
  CUDA_CHECK(cudaMemsetAsync(d_temp, 0, t.used, stream));
  const unsigned grid = static_cast<unsigned>(
      std::min<uint64_t>(chunks, resident_blocks(reinterpret_cast<const void*>(onepass_kernel<T>), kThreads)));
  onepass_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(a.in), a.elements, a.chunk_elements, a,
                                                   payload_scan, run_scan);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::size_t rle_chunked_onepass_temp_bytes(uint64_t elements, uint32_t chunk_elements) {
  const uint64_t chunks = rle_chunk_count(elements, chunk_elements);
  TempCarver t{nullptr};
  t.take<unsigned long long>(chunks);
  t.take<unsigned int>(1);
  t.take<unsigned long long>(chunks);
  return t.used;
}

void rle_encode_chunked_onepass(const RleEncodeArgs& a, void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  switch (a.width) {
    case 1: launch<uint8_t>(a, d_temp, temp_bytes, stream); break;
    case 2: launch<uint16_t>(a, d_temp, temp_bytes, stream); break;
    case 4: launch<uint32_t>(a, d_temp, temp_bytes, stream); break;
    case 8: launch<uint64_t>(a, d_temp, temp_bytes, stream); break;
  }
}

}  // namespace vlec::cuda
