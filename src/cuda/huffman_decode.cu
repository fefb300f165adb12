// cuda/huffman_decode.cu: see huffman_decode.hpp. One warp decodes one chunk
// and verifies it: the chunk's XXH3 is folded from the rows the lanes hold
// in registers (xxh3_warp.cuh), so checking costs no second pass.
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
#include "cuda/xxh3_warp.cuh"
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

// Four symbols of a lane, stored with one vector store.
template <typename Sym>
__device__ __forceinline__ void store_group(void* base, uint64_t group, const Sym (&s)[4]) {
  if constexpr (sizeof(Sym) == 1) {
    static_cast<uint32_t*>(base)[group] = uint32_t{s[0]} | uint32_t{s[1]} << 8 | uint32_t{s[2]} << 16 |
                                          uint32_t{s[3]} << 24;
  } else if constexpr (sizeof(Sym) == 2) {
    static_cast<uint2*>(base)[group] = make_uint2(uint32_t{s[0]} | uint32_t{s[1]} << 16,
                                                  uint32_t{s[2]} | uint32_t{s[3]} << 16);
  } else {
    static_cast<uint4*>(base)[group] = make_uint4(s[0], s[1], s[2], s[3]);
  }
}

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
//
// The warp reads the chunk's words in order (the layout hands them out by
// ballot), so it keeps the next 64 in two 32-word windows, one word per lane,
// and a refill is two shuffles instead of a load: a window is loaded, fully
// coalesced, as soon as the one before it is entered, several steps before
// its first word is needed, so the decoder no longer waits on global memory
// at every step.
struct LaneDecoder {
  uint64_t buf = 0;
  uint32_t bits = 0;
  uint32_t bad = 0;  // set when a long code is invalid
  const uint32_t* words = nullptr;
  uint32_t last_word = 0;  // index of the chunk's last word
  uint32_t base = 0;       // warp-uniform: next word of the chunk
  uint32_t wbase = 0;      // warp-uniform: first word of win0 (base - wbase < 32)
  uint32_t win0 = 0, win1 = 0;  // words wbase + lane and wbase + 32 + lane

  // Loads are clamped into the chunk: an overrun is caught by the word count.
  __device__ __forceinline__ uint32_t load(uint32_t i) const { return __ldg(words + min(i, last_word)); }

  __device__ __forceinline__ void start(unsigned lane) {
    win0 = load(lane);
    win1 = load(32 + lane);
  }

  __device__ __forceinline__ void refill(bool active, uint32_t threshold) {
    const bool need = active && bits < threshold;
    const uint32_t mask = __ballot_sync(kFullMask, need);
    const uint32_t r = base - wbase + __popc(mask & lanemask_lt());  // < 63
    const uint32_t from0 = __shfl_sync(kFullMask, win0, r & 31);
    const uint32_t from1 = __shfl_sync(kFullMask, win1, r & 31);
    const uint32_t w = need ? (r < 32 ? from0 : from1) : 0u;
    buf |= uint64_t{w} << bits;
    bits += need ? 32u : 0u;
    base += __popc(mask);
    if (base - wbase >= 32) {  // warp-uniform: win0 is used up
      win0 = win1;
      wbase += 32;
      win1 = load(wbase + 32 + (threadIdx.x % kLanes));
    }
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

// Zero padding after a chunk (its bytes [from, to) of the payload).
__device__ bool padding_zero(const uint8_t* payload, uint64_t from, uint64_t to, unsigned lane) {
  bool ok = true;
  for (uint64_t i = from + lane; i < to; i += kLanes) ok = ok && payload[i] == 0;
  return __all_sync(kFullMask, ok);
}

template <typename Sym, unsigned K, bool kLong>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) huffman_decode_kernel(const HuffmanDecodeArgs a) {
  extern __shared__ uint32_t s_entry[];
  __shared__ uint32_t s_canon[3 * kCanonSlots];
  const uint32_t table_size = a.table.entry ? 1u << a.table.bits : 0;
  for (uint32_t i = threadIdx.x; i < table_size; i += blockDim.x) s_entry[i] = a.table.entry[i];
  if (kLong && threadIdx.x < 3 * kCanonSlots) s_canon[threadIdx.x] = a.table.canon[threadIdx.x];
  __syncthreads();
  const SharedTables t{s_entry, s_canon, a.table.sorted, table_size - 1, a.table.bits, a.table.max_length};
  const unsigned lane = threadIdx.x % kLanes;
  const uint64_t c = uint64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / kLanes;
  if (c >= a.chunk_count) return;

  const ChunkDesc chunk = a.chunks[c];
  const uint64_t first = c * a.chunk_elements;
  const uint64_t n = min(uint64_t{a.chunk_elements}, a.elements - first);
  const uint64_t bytes = n * sizeof(Sym);
  Sym* out = static_cast<Sym*>(a.out) + first;
  const uint8_t* out_bytes = reinterpret_cast<const uint8_t*>(out);
  // The payload's zero padding: after this chunk, and after the last one up to the payload's end.
  const uint64_t end = chunk.offset + (uint64_t{chunk.stored_bytes} + 3) / 4 * 4;
  bool padding_ok = padding_zero(a.payload, chunk.offset + chunk.stored_bytes, end, lane);
  if (c + 1 == a.chunk_count) padding_ok = padding_ok && padding_zero(a.payload, end, a.payload_bytes, lane);
  uint32_t status = kChunkOk;

  if (chunk.raw) {
    const uint32_t* src = reinterpret_cast<const uint32_t*>(a.payload + chunk.offset);
    uint32_t* dst = reinterpret_cast<uint32_t*>(out);
    for (uint64_t i = lane; i < bytes / 4; i += kLanes) dst[i] = __ldg(src + i);
    for (uint64_t i = bytes / 4 * 4 + lane; i < bytes; i += kLanes)
      reinterpret_cast<uint8_t*>(out)[i] = a.payload[chunk.offset + i];
    __syncwarp();
    if (a.verify) {
      const uint64_t hash = warp_hash(out_bytes, bytes, lane);
      if (lane == 0 && hash != chunk.checksum) status = kChunkChecksum;
    }
    if (!padding_ok) status = kChunkPadding;
    if (lane == 0) a.status[c] = status;
    return;
  }

  constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
  const uint64_t hash_blocks = bytes > 240 ? (bytes - 1) / 1024 : 0;
  const uint32_t threshold = K * a.table.max_length;
  LaneDecoder d;
  d.words = reinterpret_cast<const uint32_t*>(a.payload + chunk.offset);
  const uint32_t word_count = chunk.stored_bytes / 4;
  d.last_word = word_count - 1;  // Huffman chunks hold at least one word (frame.cpp)
  d.start(lane);
  RowHasher<Sym> hasher;
  uint64_t acc = init_acc_lane(lane);
  const uint64_t full_rows = n / kRow;
  for (uint64_t row = 0; row < full_rows; ++row) {
    Sym s[4];
#pragma unroll
    for (unsigned step = 0; step < kGroup / K; ++step) {
      d.refill(true, threshold);
#pragma unroll
      for (unsigned k = 0; k < K; ++k) s[step * K + k] = static_cast<Sym>(d.template decode<kLong>(t));
    }
    store_group(out, row * kLanes + lane, s);
    if (a.verify && row / kRowsPerBlock < hash_blocks) {  // warp-uniform
      hasher.add(s, static_cast<unsigned>(row % kRowsPerBlock), lane);
      if (row % kRowsPerBlock == kRowsPerBlock - 1) hasher.fold(acc, lane);
    }
  }
  // The last, partial row: this lane owns `mine` symbols of it.
  const uint32_t rest = static_cast<uint32_t>(n % kRow);
  if (rest) {
    const uint32_t mine = rest > lane * kGroup ? min(rest - lane * kGroup, kGroup) : 0;
    Sym* tail = out + full_rows * kRow + lane * kGroup;
    for (unsigned step = 0; step < kGroup / K; ++step) {
      d.refill(step * K < mine, threshold);
      for (unsigned k = 0; k < K; ++k)
        if (step * K + k < mine) tail[step * K + k] = static_cast<Sym>(d.template decode<kLong>(t));
    }
  }
  const uint32_t bad_mask = __ballot_sync(kFullMask, d.bad);
  const uint32_t pad_mask = __ballot_sync(kFullMask, d.buf != 0);
  status = bad_mask ? kChunkBadCode : d.base != word_count ? kChunkWordCount : pad_mask || !padding_ok ? kChunkPadding
                                                                                                      : kChunkOk;
  if (a.verify && status == kChunkOk) {
    __syncwarp();  // the tail of the chunk is hashed from what the lanes stored
    const uint64_t hash = bytes <= 240 ? (lane == 0 ? xxh3::hash64_short(out_bytes, bytes) : 0)
                                       : finish_long_warp(acc, out_bytes, bytes, lane);
    if (lane == 0 && hash != chunk.checksum) status = kChunkChecksum;
  }
  if (lane == 0) a.status[c] = status;
}

template <typename Sym>
void launch_typed(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((a.chunk_count + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const std::size_t smem = a.table.entry ? sizeof(uint32_t) << a.table.bits : 0;
  const bool long_codes = a.table.max_length > a.table.bits;
  const unsigned K = huffman::symbols_per_step(a.table.max_length);
  const dim3 grid(blocks), block(kWarpsPerBlock * 32);
  if (K == 4)
    huffman_decode_kernel<Sym, 4, false><<<grid, block, smem, stream>>>(a);
  else if (K == 2 && !long_codes)
    huffman_decode_kernel<Sym, 2, false><<<grid, block, smem, stream>>>(a);
  else if (K == 2)
    huffman_decode_kernel<Sym, 2, true><<<grid, block, smem, stream>>>(a);
  else if (!long_codes)
    huffman_decode_kernel<Sym, 1, false><<<grid, block, smem, stream>>>(a);
  else
    huffman_decode_kernel<Sym, 1, true><<<grid, block, smem, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_huffman_decode(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  if (a.chunk_count == 0) return;
  switch (a.width) {
    case 1: return launch_typed<uint8_t>(a, stream);
    case 2: return launch_typed<uint16_t>(a, stream);
    case 4: return launch_typed<uint32_t>(a, stream);
  }
  VLEC_REQUIRE(false, "GPU Huffman decoding takes 1-, 2- or 4-byte elements, not ", a.width);
}

}  // namespace vlec::cuda
