// cuda/wavelet_encode_kernels.cu: see wavelet_encode_kernels.hpp.
#include "cuda/wavelet_encode_kernels.hpp"

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <type_traits>

#include "cuda/cuda_check.hpp"
#include "cuda/launch_cache.hpp"
#include "cuda/wavelet_encode_symbols.cuh"
#include "cuda/wavelet_encode_tiles.cuh"
#include "wavelet/shift_rule.hpp"

namespace vlec::cuda::wavelet_gpu {

bool symbols_row_tiles = true;
unsigned symbols_block_tiles = 4;
bool histogram_tiles_by_list = true;

namespace {

constexpr uint64_t kMaxBlocks = uint64_t{1} << 20;
// Histograms of up to this many bins are counted in shared memory (32 KiB).
constexpr uint32_t kSharedBins = 8192;
// Wider histograms of boxes of at least this many values are counted by
// histogram_wide_kernel, kWideTiles tiles a block, in 16-bit counters of all
// 65,536 bins in shared memory (two a word: 128 KiB; a block adds at most
// kWideTiles * kTileValues = 32,768 values, so no counter carries into its
// neighbour), flushed once per block: one global atomic per bin the block
// saw instead of one per value (hdr_room16 mirrored to 8192^2 spent 5.5 ms
// in per-value 64-bit atomics). Smaller wide boxes keep those.
constexpr uint32_t kWideTiles = 16;
constexpr uint64_t kWideMinValues = uint64_t{kWideTiles} * kTileValues;
constexpr uint32_t kWideWords = kHistBins / 2;
constexpr unsigned kWideThreads = 1024;
// The tops and (narrow) histogram kernels take kBlockTiles consecutive tiles
// a block: a tile is 8 values a thread, so a block per tile spent as long on
// finding its box, zeroing and flushing its counters and reducing as on its
// values (u16 8192^2: tops 0.23 ms, histogram 0.35 ms for 268 MB of
// coefficients, ~0.09 ms at the device's bandwidth).
constexpr uint32_t kBlockTiles = 8;
// Shared low-bit words of one tile: kTileValues values of up to 24 bits, plus
// the partial words at both ends.
constexpr uint32_t kTileWords = (kTileValues * 24 + 31) / 32 + 2;

using namespace encode_tiles;

struct MaxOp {
  __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const { return a > b ? a : b; }
};

template <typename T>
__global__ void split_kernel(const T* samples, unsigned planes, bool rct, uint64_t pixels, int32_t* planar) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < pixels; i += uint64_t{gridDim.x} * blockDim.x) {
    const T* px = samples + i * planes;
    unsigned p = 0;
    if (rct) {
      const int32_t r = px[0], g = px[1], b = px[2];
      planar[i] = (r + 2 * g + b) >> 2;
      planar[pixels + i] = b - g;
      planar[2 * pixels + i] = r - g;
      p = 3;
    }
    for (; p < planes; ++p) planar[p * pixels + i] = px[p];
  }
}

__global__ void swap16_kernel(const uint16_t* in, uint16_t* out, uint64_t count) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count; i += uint64_t{gridDim.x} * blockDim.x) {
    const uint16_t v = in[i];
    out[i] = static_cast<uint16_t>((v >> 8) | (v << 8));
  }
}

__global__ void __launch_bounds__(kEncodeThreads) tops_kernel(PlaneGeometry g, const EncodeBox* boxes,
                                                              uint32_t box_count, uint32_t tile_count,
                                                              uint32_t* tops) {
  using Reduce = cub::BlockReduce<uint32_t, kEncodeThreads>;
  __shared__ typename Reduce::TempStorage scratch;
  const uint32_t first = blockIdx.x * kBlockTiles, end = min(tile_count, first + kBlockTiles);
  uint32_t top = 0;
  for (uint32_t ti = first; ti < end; ++ti) {
    const EncodeTile tile = tile_at(boxes, box_count, ti);
    const EncodeBox b = boxes[tile.box];
    const TileValues<kEncodeThreads> v(g, b, tile);
#pragma unroll
    for (unsigned i = 0; i < v.kItems; ++i) top = max(top, v.z[i]);  // invalid items are 0
    // The box's largest value goes out where its run of tiles in this block
    // ends: at the block's last tile or the box's.
    if (ti + 1 == end || tile.start + tile.count == b.n) {
      const uint32_t block_top = Reduce(scratch).Reduce(top, MaxOp{});
      if (threadIdx.x == 0) atomicMax(&tops[b.slot], block_top);
      top = 0;
      __syncthreads();  // scratch is reused
    }
  }
}

// Whether histogram_wide_kernel counts the box (histogram_kernel the others).
__device__ bool wide_box(const EncodeBox& b, uint32_t bins) { return bins > kSharedBins && b.n >= kWideMinValues; }

// Shared counters kept over a block's consecutive tiles of one box: opening
// a new box flushes the last one's (Flush: the kernel's way to add its
// counters to the box's histogram) and zeroes `words` of them.
template <unsigned Threads, typename Flush>
struct BoxCounters {
  uint32_t* shared;
  uint32_t box = ~0u, words = 0;
  unsigned long long* out = nullptr;

  __device__ explicit BoxCounters(uint32_t* counters) : shared(counters) {}
  __device__ void open(uint32_t new_box, uint32_t new_words, unsigned long long* new_out) {
    if (new_box == box) return;
    close();
    box = new_box, words = new_words, out = new_out;
    __syncthreads();  // the flush has read every counter
    for (uint32_t w = threadIdx.x; w < words; w += Threads) shared[w] = 0;
    __syncthreads();
  }
  __device__ void close() {
    if (box == ~0u) return;
    __syncthreads();
    Flush{}(shared, words, out);
  }
};

// Zero the bins each box's histogram will use (they follow from its top):
// at most 65,536 a box, where a memset of every slot's 65,536 was 14-42 MB
// for a small image. Only the listed boxes: the others' tops may not be
// final yet (wavelet_encode.cu counts level 1 while the coarser levels are
// still being transformed).
__global__ void __launch_bounds__(1024) zero_used_bins_kernel(const EncodeBox* boxes, const uint32_t* tops,
                                                               unsigned long long* hist) {
  const uint32_t slot = boxes[blockIdx.y].slot;
  const uint32_t bins = box_bins(tops[slot]).bins;
  const uint32_t u = blockIdx.x * 1024 + threadIdx.x;
  if (u < bins) hist[uint64_t{slot} * kHistBins + u] = 0;
}

struct FlushCounts {  // 32-bit counters, one a bin
  __device__ void operator()(const uint32_t* counts, uint32_t bins, unsigned long long* out) const {
    for (uint32_t s = threadIdx.x; s < bins; s += kEncodeThreads)
      if (counts[s]) atomicAdd(&out[s], static_cast<unsigned long long>(counts[s]));
  }
};

// Tiles block_tiles * blockIdx.x ...: boxes of up to kSharedBins bins in
// shared counters, kept over a block's consecutive tiles of one box and
// flushed when the box changes; wider boxes of fewer than kWideMinValues
// values with per-value global atomics (the wide kernel takes the others).
// (Four blocks an SM: the cursor's fields took it to 70 registers, three.)
__global__ void __launch_bounds__(kEncodeThreads, 4) histogram_kernel(PlaneGeometry g, const EncodeBox* boxes,
                                                                   uint32_t box_count, uint32_t tile_count,
                                                                   const uint32_t* tops, unsigned long long* hist,
                                                                   uint32_t block_tiles) {
  __shared__ uint32_t shared[kSharedBins];
  BoxCounters<kEncodeThreads, FlushCounts> counts(shared);
  const uint32_t first = blockIdx.x * block_tiles, end = min(tile_count, first + block_tiles);
  TileCursor cur(boxes, box_count, tops);
  for (uint32_t ti = first; ti < end; ++ti) {  // every test below is uniform across the block
    cur.at(ti);
    const EncodeBox& b = cur.b;
    const BoxBins bb = cur.bb;
    unsigned long long* out = hist + uint64_t{b.slot} * kHistBins;
    if (bb.bins > kSharedBins) {
      if (wide_box(b, bb.bins)) continue;  // histogram_wide_kernel counts it
      const TileValues<kEncodeThreads> v(g, b, cur.tile, cur.w);
#pragma unroll
      for (unsigned i = 0; i < v.kItems; ++i)
        if (v.valid(i)) atomicAdd(&out[v.z[i] >> bb.k], 1ull);
      continue;
    }
    counts.open(cur.tile.box, bb.bins, out);
    const TileValues<kEncodeThreads> v(g, b, cur.tile, cur.w);
#pragma unroll
    for (unsigned i = 0; i < v.kItems; ++i)
      if (v.valid(i)) atomicAdd(&shared[v.z[i] >> bb.k], 1u);
  }
  counts.close();
}

struct FlushPairs {  // 16-bit counters, two a word
  __device__ void operator()(const uint32_t* pairs, uint32_t words, unsigned long long* out) const {
    for (uint32_t w = threadIdx.x; w < words; w += kWideThreads) {
      const uint32_t p = pairs[w];
      if (p & 0xFFFF) atomicAdd(&out[2 * w], static_cast<unsigned long long>(p & 0xFFFF));
      if (p >> 16) atomicAdd(&out[2 * w + 1], static_cast<unsigned long long>(p >> 16));
    }
  }
};

// Where no box is wide (most images), a chunk costs one look at its tiles,
// all at once (a block per chunk, each looking at 16 tiles in turn, took
// 0.14 ms at 8192^2 for nothing).
__device__ bool wide_tile(const EncodeBox* boxes, uint32_t box_count, const uint32_t* tops, uint32_t ti) {
  const EncodeBox& b = boxes[tile_at(boxes, box_count, ti).box];
  return wide_box(b, box_bins(tops[b.slot]).bins);
}

__device__ void count_wide_chunk(const PlaneGeometry& g, const EncodeBox* boxes, uint32_t box_count,
                                 uint32_t tile_count, const uint32_t* tops, unsigned long long* hist,
                                 uint32_t* pairs, uint32_t chunk, bool wide_pairs) {
  const uint32_t first = chunk * kWideTiles, end = min(tile_count, first + kWideTiles);
  const bool mine = threadIdx.x < end - first && wide_tile(boxes, box_count, tops, first + threadIdx.x);
  if (!__syncthreads_or(mine)) return;
  BoxCounters<kWideThreads, FlushPairs> counts(pairs);
  TileCursor cur(boxes, box_count, tops);
  auto count = [&](uint32_t z, unsigned k) {
    const uint32_t v = z >> k;
    atomicAdd(&pairs[v >> 1], 1u << (16 * (v & 1)));
  };
  for (uint32_t ti = first; ti < end; ++ti) {  // every test below is uniform across the block
    cur.at(ti);
    const EncodeBox& b = cur.b;
    const BoxBins bb = cur.bb;
    if (!wide_box(b, bb.bins)) continue;
    counts.open(cur.tile.box, (bb.bins + 1) / 2, hist + uint64_t{b.slot} * kHistBins);
    const uint64_t at0 = cur.w.index(g, b);
    if (wide_pairs && ti + 1 < end && ti + 1 < cur.next_box_tile && cur.w.x + 2 * kTileValues <= b.nx &&
        at0 % 4 == 0) {
      // This tile and the next, in one row of the box: four values a thread
      // with one 16-byte load (two a tile, each tile's steps cost more than
      // its counting: ~65 instructions a warp's value, SASS).
      static_assert(2 * kTileValues == 4 * kWideThreads, "a pair of tiles is one int4 a thread");
      const int4 q = *reinterpret_cast<const int4*>(g.coeffs + at0 + 4 * threadIdx.x);
      count(zigzag(q.x), bb.k), count(zigzag(q.y), bb.k), count(zigzag(q.z), bb.k), count(zigzag(q.w), bb.k);
      cur.at(++ti);
      continue;
    }
    const TileValues<kWideThreads> values(g, b, cur.tile, cur.w);
#pragma unroll
    for (unsigned i = 0; i < values.kItems; ++i)
      if (values.valid(i)) count(values.z[i], bb.k);
  }
  counts.close();
}

// Chunks of kWideTiles tiles, a block taking every gridDim.x-th: the tiles
// of boxes with more than kSharedBins bins and at least kWideMinValues values
// (the others are histogram_kernel's). Consecutive tiles of one box share the
// counters; a new box flushes them first.
__global__ void __launch_bounds__(kWideThreads, 1) histogram_wide_kernel(PlaneGeometry g, const EncodeBox* boxes,
                                                                         uint32_t box_count, uint32_t tile_count,
                                                                         const uint32_t* tops,
                                                                         unsigned long long* hist,
                                                                         bool wide_pairs) {
  extern __shared__ uint32_t pairs[];  // bins 2w and 2w + 1 in the low and high half of word w
  const uint32_t chunks = (tile_count + kWideTiles - 1) / kWideTiles;
  for (uint32_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x)
    count_wide_chunk(g, boxes, box_count, tile_count, tops, hist, pairs, chunk, wide_pairs);
}

// Four consecutive values a thread (quad q of the tile: thread q %
// kEncodeThreads), so that a thread reads its four coefficients with one
// 16-byte load and writes its four symbols with one store where they are
// aligned, and reads one neighbour for the run count instead of one a value.
// RowTiles: a whole tile inside one row of its box (every tile of a box
// whose rows are whole tiles: the finest levels of large images, most of
// their values) takes a straight path: the tile's two quads a thread loaded
// at once from one row address, the value before each quad the lane
// before's last (a shuffle; lane 0 alone loads it), at 5 blocks an SM (48
// registers: the general path's 64-bit walk spills a few words, the straight
// path none). Other tiles walk the box a quad at a time and load each quad's
// neighbour; without RowTiles (images with few such tiles) only that path is
// compiled, in 48 registers unspilled. Nsight Compute, smooth u16 8192^2:
// 263 us the walk alone, 207 us with RowTiles (276 us at 60 registers, 4
// blocks an SM). (TileValues' all-loads-first form took 100 registers here
// and ran slower: 0.37 -> 0.50 ms for u16 8192^2.) Since session 35 (4
// tiles a block, the tile in shared memory) it runs at 6 blocks an SM, 40
// registers: 27 spill stores (a handful in the straight path), and 3-4 %
// faster than at 5 blocks and 48 registers all the same (H200, Nsight
// Compute, three builds in one call: hdr_room16 160.3 -> 154.8 us, MR 136.4
// -> 131.7, smooth 143.1 -> 138.5; session 34's alternations agree). The
// TileRun in shared memory, in place of a copy of its steps, changed
// nothing measurable (136.3 / 143.5 / 161.1 us before it, at 5 blocks).
template <bool RowTiles>
__global__ void __launch_bounds__(kEncodeThreads, 6)
    symbols_kernel(PlaneGeometry g, const EncodeBox* boxes, uint32_t box_count, uint32_t tile_count,
                   uint32_t block_tiles, const EncodeGroup* groups, unsigned long long* runs) {
  using Reduce = cub::BlockReduce<uint32_t, kEncodeThreads>;
  __shared__ typename Reduce::TempStorage scratch;
  __shared__ uint32_t words[kTileWords];
  // The tile, its group and its first coefficient's array index, found by
  // thread 0 and read by the block. (Held in every thread's registers
  // across the block's tiles, the box's fields spilled at the register cap.)
  __shared__ TileRun s;
  __shared__ EncodeGroup s_grp;
  __shared__ uint64_t s_row_at;
  // The block's tiles, one after another: a run of one box's tiles needs its
  // box, fields and position found once, and the low-bit words are zeroed
  // as they are flushed (all zero between tiles); the run starts are summed
  // over the block's tiles of one group.
  const uint32_t first = blockIdx.x * block_tiles, end = min(tile_count, first + block_tiles);
  for (uint32_t w = threadIdx.x; w < kTileWords; w += kEncodeThreads) words[w] = 0;
  uint32_t group = ~0u, starts = 0;  // (block-uniform group)
  for (uint32_t ti = first; ti < end; ++ti) {
    if (threadIdx.x == 0) {  // the tile, its box and group (the others read them after the barrier)
      if (s.at(boxes, box_count, ti, ti != first)) s_grp = groups[s.b.group];
      s_row_at = s.w.index(g, s.b);
    }
    __syncthreads();  // A: the tile is read; the last tile's words are flushed
    if (s.b.group != group) {  // uniform across the block
      if (group != ~0u) {
        const uint32_t sum = Reduce(scratch).Sum(starts);
        if (threadIdx.x == 0 && sum) atomicAdd(&runs[group], static_cast<unsigned long long>(sum));
        starts = 0;  // (scratch is next used after barrier B)
      }
      group = s.b.group;
    }
    const EncodeTile tile = s.tile;
    const EncodeGroup grp = s_grp;
    const unsigned k = grp.shift;
    const uint64_t first_value = s.b.dest + tile.start;  // group index of the tile's first value
    // The tile's low bits: [first_value * k, (first_value + count) * k), words w0 .. w_end - 1.
    const uint64_t bit_begin = first_value * k, bit_end = (first_value + tile.count) * k;
    const uint64_t w0 = bit_begin / 32;
    const uint32_t nwords = static_cast<uint32_t>((bit_end + 31) / 32 - w0);
    const TileOut out{grp.symbols + grp.width * first_value, words, grp.width, k, k ? (1u << k) - 1 : 0,
                      static_cast<uint32_t>(bit_begin % 32), first_value % 4 == 0};
    if constexpr (RowTiles) {
      const uint64_t row_at = s_row_at, x = s.w.x;
      if (tile.count == kTileValues && x + kTileValues <= s.b.nx && row_at % 4 == 0 && out.aligned)
        row_tile(g, s.b, tile, row_at, x, out, starts);  // (uniform across the block)
      else
        walk_tile(g, s.b, tile, out, starts);
    } else {
      walk_tile(g, s.b, tile, out, starts);
    }
    __syncthreads();  // B: the tile's words are complete, and s is read
    if (!k) continue;
    // Words wholly inside the tile's bits belong to it alone: plain stores.
    // The first and last may hold bits of the neighbouring tiles: OR them in.
    for (uint32_t w = threadIdx.x; w < nwords; w += kEncodeThreads) {
      const uint64_t word_begin = (w0 + w) * 32;
      const uint32_t v = words[w];
      words[w] = 0;
      if (word_begin >= bit_begin && word_begin + 32 <= bit_end)
        grp.low[w0 + w] = v;
      else if (v)
        atomicOr(&grp.low[w0 + w], v);
    }
  }
  const uint32_t sum = Reduce(scratch).Sum(starts);
  if (threadIdx.x == 0 && sum) atomicAdd(&runs[group], static_cast<unsigned long long>(sum));
}

unsigned grid_for(uint64_t items) {
  return static_cast<unsigned>(std::clamp<uint64_t>((items + kEncodeThreads - 1) / kEncodeThreads, 1, kMaxBlocks));
}

}  // namespace

void launch_split(const void* samples, unsigned sample_bytes, unsigned planes, bool rct, uint64_t pixels,
                  int32_t* planar, cudaStream_t stream) {
  if (pixels == 0) return;
  if (sample_bytes == 1)
    split_kernel<<<grid_for(pixels), kEncodeThreads, 0, stream>>>(static_cast<const uint8_t*>(samples), planes, rct,
                                                                   pixels, planar);
  else
    split_kernel<<<grid_for(pixels), kEncodeThreads, 0, stream>>>(static_cast<const uint16_t*>(samples), planes, rct,
                                                                   pixels, planar);
  CUDA_CHECK(cudaGetLastError());
}

void launch_swap16(const uint16_t* in, uint16_t* out, uint64_t count, cudaStream_t stream) {
  if (count == 0) return;
  swap16_kernel<<<grid_for(count), kEncodeThreads, 0, stream>>>(in, out, count);
  CUDA_CHECK(cudaGetLastError());
}

uint32_t number_tiles(EncodeBox* boxes, std::size_t count) {
  uint64_t tiles = 0;
  for (std::size_t b = 0; b < count; ++b) {
    boxes[b].tile0 = static_cast<uint32_t>(tiles);
    tiles += (boxes[b].n + kTileValues - 1) / kTileValues;
    VLEC_REQUIRE(tiles < (uint64_t{1} << 32), "wavelet encode of more than 2^32 tiles");
  }
  return static_cast<uint32_t>(tiles);
}

void launch_tops(const PlaneGeometry& g, const EncodeBox* boxes, uint32_t box_count, uint32_t tile_count,
                 uint32_t* tops, cudaStream_t stream) {
  if (tile_count == 0) return;
  tops_kernel<<<(tile_count + kBlockTiles - 1) / kBlockTiles, kEncodeThreads, 0, stream>>>(g, boxes, box_count,
                                                                                             tile_count, tops);
  CUDA_CHECK(cudaGetLastError());
}

void launch_histogram(const PlaneGeometry& g, const EncodeBox* boxes, uint32_t box_count, uint32_t tile_count,
                      const uint32_t* tops, unsigned long long* hist, cudaStream_t stream) {
  if (tile_count == 0) return;
  VLEC_REQUIRE(box_count < 65536, "too many wavelet boxes for one launch: ", box_count);
  zero_used_bins_kernel<<<dim3(kHistBins / 1024, box_count), 1024, 0, stream>>>(boxes, tops, hist);
  CUDA_CHECK(cudaGetLastError());
  constexpr std::size_t kWideShared = std::size_t{4} * kWideWords;
  set_attribute_once(histogram_wide_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                     static_cast<int>(kWideShared));
  // One block of 1,024 threads an SM (128 KiB of shared memory each).
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const uint32_t chunks = (tile_count + kWideTiles - 1) / kWideTiles;
  histogram_wide_kernel<<<std::min<uint32_t>(chunks, static_cast<uint32_t>(std::max(sms, 1))), kWideThreads,
                          kWideShared, stream>>>(g, boxes, box_count, tile_count, tops, hist,
                                                    wide_histogram_tile_pairs);
  CUDA_CHECK(cudaGetLastError());
  // kBlockTiles tiles a block, or fewer where that leaves the SMs under 4
  // blocks each (a short list: its blocks' tiles, each waited for in turn,
  // are then the pass's time).
  const uint32_t per_sm = 4 * static_cast<uint32_t>(std::max(sms, 1));
  const uint32_t block_tiles =
      histogram_tiles_by_list ? std::clamp<uint32_t>((tile_count + per_sm - 1) / per_sm, 1, kBlockTiles) : kBlockTiles;
  histogram_kernel<<<(tile_count + block_tiles - 1) / block_tiles, kEncodeThreads, 0, stream>>>(
      g, boxes, box_count, tile_count, tops, hist, block_tiles);
  CUDA_CHECK(cudaGetLastError());
}

bool mostly_row_tiles(const EncodeBox* boxes, std::size_t count) {
  uint64_t row = 0, all = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const uint64_t tiles = (boxes[i].n + kTileValues - 1) / kTileValues;
    all += tiles;
    if (boxes[i].nx % kTileValues == 0) row += tiles;
  }
  return symbols_row_tiles && 2 * row >= all && all > 0;
}

void launch_symbols(const PlaneGeometry& g, const EncodeBox* boxes, uint32_t box_count, uint32_t tile_count,
                    const EncodeGroup* groups, unsigned long long* runs, bool row_tiles, cudaStream_t stream) {
  if (tile_count == 0) return;
  const uint32_t per_block = std::max(1u, symbols_block_tiles);
  const uint32_t blocks = (tile_count + per_block - 1) / per_block;
  if (row_tiles)
    symbols_kernel<true><<<blocks, kEncodeThreads, 0, stream>>>(g, boxes, box_count, tile_count, per_block, groups,
                                                                runs);
  else
    symbols_kernel<false><<<blocks, kEncodeThreads, 0, stream>>>(g, boxes, box_count, tile_count, per_block, groups,
                                                                 runs);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda::wavelet_gpu
