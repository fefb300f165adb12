// cuda/huffman_decode.cu: see huffman_decode.hpp. One warp decodes one chunk
// (or two, interleaved, for more independent work per thread).
//
// Why it is fast: the hot loop is branch-free. A refill is a ballot, two
// popcounts and one predicated load of a word whose index is clamped into the
// chunk (an overrun is caught once, at the end, by the word count); a symbol
// is one shared-memory lookup and a shift. The kernel is specialised on the
// symbol type, on K (symbols per refill step) and on whether codes longer
// than the shared table exist, so none of these is a run-time switch, and
// the rare long codes take an inline path that costs the common case one
// compare.
#include "cuda/cuda_check.hpp"
#include "cuda/huffman_decode.hpp"
#include "huffman/layout.hpp"

namespace vlec::cuda {

namespace {

using huffman::kGroup;
using huffman::kLanes;
using huffman::kRow;

constexpr unsigned kWarpsPerBlock = 8;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

__device__ __forceinline__ uint32_t lanemask_lt() {
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// Four symbols of a lane, packed for one vector store.
template <typename Sym> struct Group;
template <> struct Group<uint8_t> {
  uint32_t v = 0;
  __device__ void set(unsigned i, uint32_t s) { v |= s << (8 * i); }
  __device__ void store(void* base, uint64_t group) const { static_cast<uint32_t*>(base)[group] = v; }
};
template <> struct Group<uint16_t> {
  uint2 v = {0, 0};
  __device__ void set(unsigned i, uint32_t s) {
    if (i < 2) v.x |= s << (16 * i); else v.y |= s << (16 * (i - 2));
  }
  __device__ void store(void* base, uint64_t group) const { static_cast<uint2*>(base)[group] = v; }
};
template <> struct Group<uint32_t> {
  uint4 v = {0, 0, 0, 0};
  __device__ void set(unsigned i, uint32_t s) {
    if (i == 0) v.x = s; else if (i == 1) v.y = s; else if (i == 2) v.z = s; else v.w = s;
  }
  __device__ void store(void* base, uint64_t group) const { static_cast<uint4*>(base)[group] = v; }
};

// Shared-memory view of the decode tables.
struct SharedTables {
  const uint32_t* entry;   // 2^bits primary entries
  const uint32_t* canon;   // first[], count[], offset[] (kCanonSlots each)
  const uint32_t* sorted;  // global: symbols in canonical order
  uint32_t mask;
  unsigned bits, max_length;
};

// A code longer than the primary table, resolved with the canonical
// First/Entry arrays; returns (length << 16) | symbol, or 0 if not a code.
__device__ __forceinline__ uint32_t decode_long(const SharedTables& t, uint64_t buf) {
  const unsigned L = t.max_length;
  const uint32_t v = __brev(static_cast<uint32_t>(buf)) >> (32 - L);
  for (unsigned l = t.bits + 1; l <= L; ++l) {
    const uint32_t code = v >> (L - l);
    const uint32_t first = t.canon[l];
    if (code - first < t.canon[kCanonSlots + l])
      return (l << 16) | __ldg(t.sorted + t.canon[2 * kCanonSlots + l] + code - first);
  }
  return 0;
}

// One lane's decoder state, and the chunk it reads.
struct LaneDecoder {
  uint64_t buf = 0;
  uint32_t bits = 0;
  uint32_t bad = 0;  // set when a long code is invalid
  const uint32_t* words = nullptr;
  uint32_t last_word = 0;  // index of the chunk's last word
  uint32_t base = 0;       // warp-uniform: next word of the chunk

  __device__ __forceinline__ void refill(bool active, uint32_t threshold) {
    const bool need = active && bits < threshold;
    const uint32_t mask = __ballot_sync(kFullMask, need);
    const uint32_t idx = min(base + __popc(mask & lanemask_lt()), last_word);
    uint32_t w = 0;
    if (need) w = __ldg(words + idx);
    buf |= uint64_t{w} << bits;
    bits += need ? 32u : 0u;
    base += __popc(mask);
  }

  template <bool kLong>
  __device__ __forceinline__ uint32_t decode(const SharedTables& t) {
    uint32_t e = t.entry[static_cast<uint32_t>(buf) & t.mask];
    if (kLong && e < 0x10000) {
      e = decode_long(t, buf);
      if ((e >> 16) == 0 || (e >> 16) > bits) bad = 1, e = 0;
    }
    const unsigned len = e >> 16;
    buf >>= len;
    bits -= len;
    return e & 0xFFFF;
  }
};

__device__ void copy_raw_chunk(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst, uint32_t bytes,
                               unsigned lane) {
  const uint32_t words = bytes / 4;
  const uint32_t* s = reinterpret_cast<const uint32_t*>(src);
  uint32_t* d = reinterpret_cast<uint32_t*>(dst);
  for (uint32_t i = lane; i < words; i += kLanes) d[i] = __ldg(s + i);
  for (uint32_t i = words * 4 + lane; i < bytes; i += kLanes) dst[i] = src[i];
}

// A chunk being decoded by the warp.
template <typename Sym>
struct ChunkCursor {
  LaneDecoder d;
  Sym* out = nullptr;
  uint64_t index = 0;
  uint64_t full_rows = 0;
  uint32_t rest = 0;        // symbols in the final partial row
  uint32_t word_count = 0;
  bool live = false;        // a Huffman chunk still to finish (not raw, not past the end)
};

template <typename Sym, unsigned K, bool kLong>
__device__ __forceinline__ void decode_row(ChunkCursor<Sym>& c, const SharedTables& t, uint32_t threshold,
                                           uint64_t row, unsigned lane) {
  Group<Sym> g;
#pragma unroll
  for (unsigned step = 0; step < kGroup / K; ++step) {
    c.d.refill(true, threshold);
#pragma unroll
    for (unsigned k = 0; k < K; ++k) g.set(step * K + k, c.d.template decode<kLong>(t));
  }
  g.store(c.out, row * kLanes + lane);
}

template <typename Sym, unsigned K, bool kLong>
__device__ void finish_chunk(ChunkCursor<Sym>& c, const SharedTables& t, uint32_t threshold, uint64_t from_row,
                             const HuffmanDecodeArgs& a, unsigned lane) {
  for (uint64_t row = from_row; row < c.full_rows; ++row) decode_row<Sym, K, kLong>(c, t, threshold, row, lane);
  // The last, partial row: this lane owns `mine` symbols of it.
  if (c.rest) {
    const uint32_t mine = c.rest > lane * kGroup ? min(c.rest - lane * kGroup, kGroup) : 0;
    Sym* tail = c.out + c.full_rows * kRow + lane * kGroup;
    for (unsigned step = 0; step < kGroup / K; ++step) {
      c.d.refill(step * K < mine, threshold);
      for (unsigned k = 0; k < K; ++k)
        if (step * K + k < mine) tail[step * K + k] = static_cast<Sym>(c.d.template decode<kLong>(t));
    }
  }
  const uint32_t bad_mask = __ballot_sync(kFullMask, c.d.bad);
  const uint32_t pad_mask = __ballot_sync(kFullMask, c.d.buf != 0);
  if (lane == 0)
    a.status[c.index] = bad_mask ? kChunkBadCode
                        : c.d.base != c.word_count ? kChunkWordCount
                        : pad_mask ? kChunkPadding
                                   : kChunkOk;
}

// kChunks chunks per warp: their rows are decoded in lockstep so that each
// thread has kChunks independent dependency chains in flight.
template <typename Sym, unsigned K, bool kLong, unsigned kChunks>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    huffman_decode_kernel(const HuffmanDecodeArgs a) {
  extern __shared__ uint32_t s_entry[];
  __shared__ uint32_t s_canon[3 * kCanonSlots];
  const uint32_t table_size = a.table.entry ? 1u << a.table.bits : 0;
  for (uint32_t i = threadIdx.x; i < table_size; i += blockDim.x) s_entry[i] = a.table.entry[i];
  if (kLong && threadIdx.x < 3 * kCanonSlots) s_canon[threadIdx.x] = a.table.canon[threadIdx.x];
  __syncthreads();
  const SharedTables t{s_entry, s_canon, a.table.sorted, table_size - 1, a.table.bits, a.table.max_length};
  const uint32_t threshold = K * a.table.max_length;
  const unsigned lane = threadIdx.x % kLanes;
  const uint64_t warp = uint64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / kLanes;

  ChunkCursor<Sym> cur[kChunks];
  uint64_t common_rows = ~uint64_t{0};
#pragma unroll
  for (unsigned k = 0; k < kChunks; ++k) {
    ChunkCursor<Sym>& c = cur[k];
    c.index = warp * kChunks + k;
    if (c.index >= a.chunk_count) {
      common_rows = 0;
      continue;
    }
    const ChunkDesc chunk = a.chunks[c.index];
    const uint64_t first = c.index * a.chunk_elements;
    const uint64_t n = min(uint64_t{a.chunk_elements}, a.elements - first);
    c.out = static_cast<Sym*>(a.out) + first;
    if (chunk.raw) {
      copy_raw_chunk(a.payload + chunk.offset, reinterpret_cast<uint8_t*>(c.out), chunk.stored_bytes, lane);
      if (lane == 0) a.status[c.index] = kChunkOk;
      common_rows = 0;
      continue;
    }
    c.live = true;
    c.d.words = reinterpret_cast<const uint32_t*>(a.payload + chunk.offset);
    c.word_count = chunk.stored_bytes / 4;
    c.d.last_word = c.word_count - 1;  // Huffman chunks hold at least one word (frame.cpp)
    c.full_rows = n / kRow;
    c.rest = static_cast<uint32_t>(n % kRow);
    common_rows = min(common_rows, c.full_rows);
  }
  for (uint64_t row = 0; row < common_rows; ++row) {
#pragma unroll
    for (unsigned k = 0; k < kChunks; ++k) decode_row<Sym, K, kLong>(cur[k], t, threshold, row, lane);
  }
#pragma unroll
  for (unsigned k = 0; k < kChunks; ++k)
    if (cur[k].live) finish_chunk<Sym, K, kLong>(cur[k], t, threshold, common_rows, a, lane);
}

template <typename Sym, unsigned kChunks>
void launch_typed(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  const uint64_t warps = (a.chunk_count + kChunks - 1) / kChunks;
  const unsigned blocks = static_cast<unsigned>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const std::size_t smem = a.table.entry ? sizeof(uint32_t) << a.table.bits : 0;
  const bool long_codes = a.table.max_length > a.table.bits;
  const unsigned K = huffman::symbols_per_step(a.table.max_length);
  const dim3 grid(blocks), block(kWarpsPerBlock * 32);
  if (K == 4)
    huffman_decode_kernel<Sym, 4, false, kChunks><<<grid, block, smem, stream>>>(a);
  else if (K == 2 && !long_codes)
    huffman_decode_kernel<Sym, 2, false, kChunks><<<grid, block, smem, stream>>>(a);
  else if (K == 2)
    huffman_decode_kernel<Sym, 2, true, kChunks><<<grid, block, smem, stream>>>(a);
  else if (!long_codes)
    huffman_decode_kernel<Sym, 1, false, kChunks><<<grid, block, smem, stream>>>(a);
  else
    huffman_decode_kernel<Sym, 1, true, kChunks><<<grid, block, smem, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

template <typename Sym>
void launch_width(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  if (a.chunks_per_warp == 2)
    launch_typed<Sym, 2>(a, stream);
  else
    launch_typed<Sym, 1>(a, stream);
}

}  // namespace

void launch_huffman_decode(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  if (a.chunk_count == 0) return;
  switch (a.width) {
    case 1: return launch_width<uint8_t>(a, stream);
    case 2: return launch_width<uint16_t>(a, stream);
    case 4: return launch_width<uint32_t>(a, stream);
  }
  VLEC_REQUIRE(false, "GPU Huffman decoding takes 1-, 2- or 4-byte elements, not ", a.width);
}

}  // namespace vlec::cuda
