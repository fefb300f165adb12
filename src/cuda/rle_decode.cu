// cuda/rle_decode.cu: the GPU decoder of `rle` chunks (docs/FORMAT.md §6),
// validating like the CPU reader (cpu/frame_decompress.cpp).
//
// One thread block per chunk (grid-stride). After the chunk's header checks
// (R in 1..N, stored_bytes == align(R * w, 4) + 2R, zero padding, payload in
// bounds), the runs are taken a tile at a time (3,072 runs for bytes, 1,024
// for wider elements; each thread holds its consecutive runs packed in
// registers, loaded a tile ahead), and a BlockScan of the lengths gives every
// run its start in the tile (the inverse of PARLE's compaction). Then:
//  * bytes, when the tile's output fits 36 KB (short runs): the head fill.
//    Each run writes its value at its first byte of a shared staging area and
//    sets a bit in a run-head bitmap; each lane then takes 16 staged bytes and
//    their 16 head bits, and every byte becomes the value of the last head at
//    or before it: one byte permute a word, its selector looked up by the
//    word's 4 head bits, the value entering the group found by one ballot and
//    shuffle over the warp. No lane loops over a run, so run lengths do not
//    diverge the warps, and the output leaves as aligned 16-byte stores.
//  * otherwise (long runs, wider elements): the walk. The runs' ends and
//    values go to shared memory and thread t fills 16-byte groups t, t + 256,
//    ... of the output, finding the group's first run by a galloping search
//    from its previous one and filling the group from one run when it lies
//    inside it (most groups of long runs).
// H100, 1 GiB of u8 (bench/rle_bench, 2026-11-22): byte runs of mean length
// 6 decode at 1.56 TB/s (first version: 274 GB/s with a binary search per
// element; 692 with 16-byte groups and the walk alone; 1,168 with the head
// fill; 1,438 loading runs a tile ahead; 1,564 with 12 runs a thread), the
// sparse volume at 1.55 TB/s.
//
// Corrupt input never makes the kernel leave its buffers: every read is
// inside [offset, offset + stored_bytes) once that range is checked against
// the payload, and elements are written only while the running sum of the
// lengths stays within the chunk; a tile that would overflow it stops the chunk
// with kRleBadLengths before anything of it is written.
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <type_traits>

#include "cuda/cuda_check.hpp"
#include "cuda/rle_common.cuh"
#include "cuda/rle_gpu.hpp"

namespace vlec::cuda {

namespace {

using namespace rle_detail;

constexpr int kBlock = 256;

// Tile geometry by element type. Bytes take 12 runs a thread: a tile of byte
// runs of mean length 6 spans ~18 KB of output, 4.5 16-byte groups a thread,
// so the head fill's last round is half full on average. With 8 runs a thread
// a tile spans ~768 groups, 3 a thread, and half the tiles needed a fourth
// round for a few groups past 768 (byte runs: 1,457 GB/s with 8 runs a thread
// at 5 blocks an SM, 1,564 with 12 at 4; 12 at 5 spills and runs at 1,381).
template <typename T>
struct TileShape {
  static constexpr int kItems = sizeof(T) == 1 ? 12 : 4;
  static constexpr int kRuns = kBlock * kItems;
  // Blocks an SM for bytes: 4 (64 registers, 43 KB of shared memory a block).
  static constexpr int kMinBlocks = sizeof(T) == 1 ? 4 : 1;
};

// The head-fill expansion of byte tiles (rle_decode_kernel<uint8_t>): a tile
// whose output fits kStage bytes is expanded in shared memory by writing each
// run's value at its first byte and a bit into a run-head bitmap (one store and
// one shared atomic a run, whatever its length), then every byte takes the
// value of the last head at or before it, 16 bytes a lane: a byte permute per
// word with a selector looked up by the word's 4 head bits, and across lanes
// one ballot and shuffle. No thread loops over a run, so the warps do not
// diverge on run lengths (the first design, a word-building loop per run, ran
// with 13.5 of 32 lanes active and 692 GB/s on byte runs).
struct HeadStage {
  static constexpr uint32_t kStage = 36864;  // twice a tile of byte runs of mean length 6 (static: under 48 KB)
  alignas(16) uint8_t stage[kStage + 16];  // run values at their first byte, other bytes stale
};
// Kept outside the union with the walk's arrays: the head bits are zero
// between tiles (set by the scatter, cleared by the fill as it reads them), so
// a tile needs no clearing pass and no barrier for it.
struct HeadBits {
  uint32_t heads[(HeadStage::kStage + 16) / 32 + 4];  // bit p: stage byte p starts a run
  uint32_t warp_carry[kBlock / 32];                   // value of the byte before warp w's stretch
  uint32_t select[16];                                // byte-permute selector by 4-bit head mask
};
struct NoFill {};

template <typename T>
struct DecodeShared {
  using Scan = cub::BlockScan<uint32_t, kBlock, cub::BLOCK_SCAN_WARP_SCANS>;
  typename Scan::TempStorage scan;
  std::conditional_t<sizeof(T) == 1, HeadBits, NoFill> bits;  // bytes only
  union {
    struct {
      uint32_t ends[TileShape<T>::kRuns];  // inclusive end of each run of the tile, from the tile's first element
      T vals[TileShape<T>::kRuns];
    } walk;
    std::conditional_t<sizeof(T) == 1, HeadStage, NoFill> fill;  // bytes only
  };
};

// The first run r >= lo whose inclusive end is past tile position q: the
// current run in one read (long runs), else a galloping then binary search.
__device__ __forceinline__ uint32_t first_run_past(const uint32_t* ends, uint32_t lo, uint32_t n, uint32_t q) {
  if (ends[lo] > q) return lo;
  uint32_t step = 1, hi = lo;
  while (true) {  // ends[n - 1] is the tile's total, past every q asked for
    lo = hi + 1;
    hi = min(hi + step, n - 1);
    if (ends[hi] > q) break;
    step *= 2;
  }
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (ends[mid] > q) hi = mid; else lo = mid + 1;
  }
  return lo;
}

// Selector of __byte_perm(word, carry x4, sel) that gives each byte of a word
// the value of the last head at or before it in the word (bit b of h: byte b
// is a head), or the carry (selector 4) before the word's first head.
__device__ __forceinline__ uint32_t head_fill_selector(uint32_t h) {
  uint32_t sel = 0, last = 4;
  for (uint32_t b = 0; b < 4; ++b) {
    if (h >> b & 1) last = b;
    sel |= last << (4 * b);
  }
  return sel;
}

// Phase 1 of the head fill: this thread's runs put their values and head bits
// into the staging area (stage byte base + tile position), and the thread that
// holds the byte before a warp's stretch leaves its value for that warp.
template <typename Runs>
__device__ __forceinline__ void scatter_heads(HeadStage& f, HeadBits& hb, const Runs& runs, uint32_t p,
                                              uint32_t sum, uint32_t stretch_bytes) {
  constexpr int kItems = sizeof(runs.codes) / sizeof(uint32_t) * 2;
  const uint32_t lo = p, hi = p + sum;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    if (j < static_cast<int>(runs.count)) {
      f.stage[p] = runs.val(j);
      atomicOr(&hb.heads[p >> 5], 1u << (p & 31));
      p += runs.len(j);
    }
  }
  uint32_t q = stretch_bytes - 1;  // the byte before warp w's stretch
  for (uint32_t w = 1; w < kBlock / 32; ++w, q += stretch_bytes) {
    if (q - lo >= sum) continue;  // not this thread's (a stretch starting at stage_end is empty: harmless)
    uint32_t e = hi, v = 0;  // the value of the last run that ends after q
#pragma unroll
    for (int j = kItems - 1; j >= 0; --j) {
      if (q < e && j < static_cast<int>(runs.count)) v = runs.val(j);
      e -= runs.len(j);
    }
    hb.warp_carry[w] = v;
  }
}

// Phase 2: warp w fills its stretch of 16-byte groups of the staging area, a
// group a lane and 32 groups a step, and writes the tile's bytes to `out`
// (tile position q at out[q], stage byte base + q; aligned groups map to
// aligned 16-byte stores since the stage starts at the output's offset mod 16).
__device__ __forceinline__ void fill_heads(const HeadStage& f, HeadBits& hb, uint32_t base, uint32_t stage_end,
                                           uint32_t stretch_groups, uint8_t* out) {
  const uint32_t* select = hb.select;
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const uint32_t groups = (stage_end + 15) / 16;
  const uint32_t g_begin = warp * stretch_groups, g_end = min(groups, g_begin + stretch_groups);
  uint32_t carry = warp == 0 ? 0 : hb.warp_carry[warp];  // warp 0 starts at a head (tile position 0)
  const uint32_t below = (1u << lane) - 1;
  for (uint32_t g0 = g_begin; g0 < g_end; g0 += 32) {
    const uint32_t g = g0 + lane;
    const bool in = g < g_end;
    uint4 s = in ? reinterpret_cast<const uint4*>(f.stage)[g] : make_uint4(0, 0, 0, 0);
    const uint32_t m = in ? (hb.heads[g >> 1] >> (16 * (g & 1))) & 0xFFFFu : 0;
    if (in && g % 2 == 0) hb.heads[g >> 1] = 0;  // lane g + 1 read the word in the same load
    // The value of this lane's last head, for the lanes above it.
    uint32_t last = 0;
    if (m) {
      const uint32_t i = 31 - __clz(m);
      const uint32_t word = i < 4 ? s.x : i < 8 ? s.y : i < 12 ? s.z : s.w;
      last = (word >> (8 * (i & 3))) & 0xFFu;
    }
    const uint32_t with_heads = __ballot_sync(0xFFFFFFFFu, m != 0);
    const uint32_t lower = with_heads & below;
    const uint32_t from_lower = __shfl_sync(0xFFFFFFFFu, last, lower ? 31 - __clz(lower) : 0);
    uint32_t rep = (lower ? from_lower : carry) * 0x01010101u;
    s.x = __byte_perm(s.x, rep, select[m & 15]), rep = __byte_perm(s.x, 0, 0x3333);
    s.y = __byte_perm(s.y, rep, select[m >> 4 & 15]), rep = __byte_perm(s.y, 0, 0x3333);
    s.z = __byte_perm(s.z, rep, select[m >> 8 & 15]), rep = __byte_perm(s.z, 0, 0x3333);
    s.w = __byte_perm(s.w, rep, select[m >> 12]);
    if (with_heads) carry = __shfl_sync(0xFFFFFFFFu, last, 31 - __clz(with_heads));
    if (!in) continue;
    const uint32_t b0 = 16 * g;  // stage byte of the group
    if (b0 >= base && b0 + 16 <= stage_end) {
      *reinterpret_cast<uint4*>(out + (b0 - base)) = s;
    } else {  // the tile's first or last group: its bytes inside the tile
      for (uint32_t b = max(b0, base); b < min(b0 + 16, stage_end); ++b) {
        const uint32_t k = b - b0, word = k < 4 ? s.x : k < 8 ? s.y : k < 12 ? s.z : s.w;
        out[b - base] = static_cast<uint8_t>(word >> (8 * (k % 4)));
      }
    }
  }
}

// 16 bytes of copies of `v`.
template <typename T>
__device__ __forceinline__ uint4 splat16(T v) {
  if constexpr (sizeof(T) == 8) {
    const uint32_t lo = static_cast<uint32_t>(v), hi = static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32);
    return make_uint4(lo, hi, lo, hi);
  } else {
    const uint32_t x = static_cast<uint32_t>(v) * (sizeof(T) == 1 ? 0x01010101u : sizeof(T) == 2 ? 0x00010001u : 1u);
    return make_uint4(x, x, x, x);
  }
}

// Any tile: the runs' ends and values go to shared memory and each thread
// fills 16-byte groups of consecutive elements (one vector store each; a warp
// writes 512 contiguous bytes), walking forward through the runs from one
// search per group. The few elements before the first and after the last
// whole group of the tile are written one by one.
template <typename T>
__device__ __forceinline__ void expand_walk(const uint32_t* ends, const T* vals, uint32_t tile_runs,
                                            uint32_t tile_total, uint32_t head, T* out) {
  constexpr uint32_t G = 16 / sizeof(T);  // elements of a 16-byte group
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
    uint32_t r = lo, end = ends[r];
    T cur = vals[r];
    if (end >= q0 + G) {  // the group lies in one run (long runs: most groups)
      v.u = splat16(cur);
    } else {
#pragma unroll
      for (uint32_t j = 0; j < G; ++j) {
        while (end <= q0 + j) end = ends[++r], cur = vals[r];  // ends[tile_runs - 1] == tile_total bounds the walk
        v.e[j] = cur;
      }
    }
    *reinterpret_cast<uint4*>(out + q0) = v.u;
  }
  for (uint32_t k = threadIdx.x; k < lead + (tile_total - tail0); k += kBlock) {
    const uint32_t q = k < lead ? k : tail0 + (k - lead);
    out[q] = vals[first_run_past(ends, 0, tile_runs, q)];
  }
}

// A thread's kItems consecutive runs of a tile, kept packed in registers:
// length codes two a word and, for bytes, values four a word (a tile of byte
// runs keeps 8 runs a thread within the register cap of TileShape).
template <typename T, int kItems>
struct ThreadRuns {
  uint32_t codes[kItems / 2];
  uint32_t packed[sizeof(T) == 1 ? kItems / 4 : 1];
  T vals[sizeof(T) == 1 ? 1 : kItems];
  uint32_t count = 0;

  // Runs k0 .. k0 + kItems - 1 of the tile that starts at run t, those below tile_runs.
  __device__ __forceinline__ void load(const uint8_t* src, const uint16_t* lens, uint32_t t, uint32_t k0,
                                       uint32_t tile_runs) {
    count = tile_runs > k0 ? min(static_cast<uint32_t>(kItems), tile_runs - k0) : 0;
    if (count == kItems) {  // 4-byte aligned: t + k0 is a multiple of kItems
#pragma unroll
      for (int i = 0; i < kItems / 2; ++i) codes[i] = reinterpret_cast<const uint32_t*>(lens + t + k0)[i];
      if constexpr (sizeof(T) == 1) {
#pragma unroll
        for (int i = 0; i < kItems / 4; ++i) packed[i] = reinterpret_cast<const uint32_t*>(src + t + k0)[i];
      } else {
#pragma unroll
        for (int j = 0; j < kItems; ++j) vals[j] = load_value<T>(src + (t + k0 + j) * sizeof(T));
      }
    } else {
#pragma unroll
      for (int i = 0; i < kItems / 2; ++i) codes[i] = 0;
      if constexpr (sizeof(T) == 1) {
#pragma unroll
        for (int i = 0; i < kItems / 4; ++i) packed[i] = 0;
      }
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if (j < static_cast<int>(count)) {  // no early exit: j stays a constant, the arrays registers
          codes[j / 2] |= uint32_t{lens[t + k0 + j]} << (16 * (j % 2));
          if constexpr (sizeof(T) == 1) packed[j / 4] |= uint32_t{src[t + k0 + j]} << (8 * (j % 4));
          else vals[j] = load_value<T>(src + (t + k0 + j) * sizeof(T));
        }
      }
    }
  }
  __device__ __forceinline__ uint32_t len(int j) const {
    return j < static_cast<int>(count) ? ((codes[j / 2] >> (16 * (j % 2))) & 0xFFFFu) + 1 : 0;
  }
  __device__ __forceinline__ T val(int j) const {
    if constexpr (sizeof(T) == 1) return static_cast<T>(packed[j / 4] >> (8 * (j % 4)));
    else return vals[j];
  }
};

template <typename T>
__global__ __launch_bounds__(kBlock, TileShape<T>::kMinBlocks) void rle_decode_kernel(RleDecodeArgs a, uint64_t chunks) {
  using Shape = TileShape<T>;
  using Scan = typename DecodeShared<T>::Scan;
  constexpr int kItems = Shape::kItems;
  constexpr int kTileRuns = Shape::kRuns;
  __shared__ DecodeShared<T> sh;
  constexpr unsigned w = sizeof(T);
  const uint32_t C = a.chunk_elements;

  if constexpr (sizeof(T) == 1) {  // read after a tile's first barrier
    if (threadIdx.x < 16) sh.bits.select[threadIdx.x] = head_fill_selector(threadIdx.x);
    for (uint32_t i = threadIdx.x; i < sizeof(sh.bits.heads) / 4; i += kBlock) sh.bits.heads[i] = 0;
  }
  for (uint64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(C, a.elements - chunk * C));  // C is a u32
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
    if (status == kRleOk && raw) {
      for (uint64_t k = threadIdx.x; k < n; k += kBlock) out[k] = load_value<T>(src + k * w);
    } else if (status == kRleOk) {
      const uint16_t* lens = reinterpret_cast<const uint16_t*>(src + lengths_offset(R, w));
      uint32_t pos = 0;  // elements of the chunk written so far (32-bit: fewer registers)
      const uint32_t k0 = threadIdx.x * kItems;
      // The next tile's runs are loaded a tile ahead, into registers, and
      // arrive while this tile is expanded: without it every tile waits a
      // full memory latency (byte runs: 1,168 -> 1,438 GB/s with the head
      // fill; a cp.async copy to shared memory instead ran at 1,396).
      ThreadRuns<T, kItems> runs;
      runs.load(src, lens, 0, k0, min(static_cast<uint32_t>(kTileRuns), R));
      // The padding check after the first tile's loads (inside the checked
      // payload), so that their latencies overlap.
      for (uint64_t i = uint64_t{R} * w; i < lengths_offset(R, w); ++i)
        if (src[i] != 0) status = kRleBadPadding;
      const uint32_t runs_to_expand = status == kRleOk ? R : 0;
      for (uint32_t t = 0; t < runs_to_expand; t += kTileRuns) {
        const uint32_t tile_runs = min(static_cast<uint32_t>(kTileRuns), R - t);
        ThreadRuns<T, kItems> next;
        if (tile_runs < R - t) next.load(src, lens, t + kTileRuns, k0, min(static_cast<uint32_t>(kTileRuns), R - t - kTileRuns));
        uint32_t sum = 0;
#pragma unroll
        for (int j = 0; j < kItems; ++j) sum += runs.len(j);
        __syncthreads();  // every thread is done with the previous tile's shared memory
        uint32_t first, tile_total;
        Scan(sh.scan).ExclusiveSum(sum, first, tile_total);
        if (tile_total > n - pos) {  // uniform: the runs overflow the chunk
          status = kRleBadLengths;
          break;
        }
        const uint32_t head = (G - (mis + pos) % G) % G;  // elements before the first aligned group
        bool staged = false;
        if constexpr (sizeof(T) == 1) {
          staged = tile_total <= HeadStage::kStage;  // uniform: the scan's aggregate
          if (staged) {
            const uint32_t base = (G - head) % G, stage_end = base + tile_total;
            constexpr uint32_t kWarps = kBlock / 32;
            const uint32_t groups = (stage_end + 15) / 16;
            const uint32_t stretch_groups = (groups + 32 * kWarps - 1) / (32 * kWarps) * 32;
            scatter_heads(sh.fill, sh.bits, runs, base + first, sum, stretch_groups * 16);
            __syncthreads();
            fill_heads(sh.fill, sh.bits, base, stage_end, stretch_groups, reinterpret_cast<uint8_t*>(out + pos));
          }
        }
        if (!staged) {
#pragma unroll
          for (int j = 0; j < kItems; ++j) {
            first += runs.len(j);
            if (j < static_cast<int>(runs.count)) sh.walk.ends[k0 + j] = first, sh.walk.vals[k0 + j] = runs.val(j);
          }
          __syncthreads();
          expand_walk<T>(sh.walk.ends, sh.walk.vals, tile_runs, tile_total, head, out + pos);
        }
        pos += tile_total;
        runs = next;
      }
      if (status == kRleOk && pos != n) status = kRleBadLengths;  // (a padding error keeps its own status)
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
