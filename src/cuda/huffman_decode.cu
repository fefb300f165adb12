// cuda/huffman_decode.cu: see huffman_decode.hpp. One warp decodes one chunk
// and verifies it: the chunk's XXH3 is folded from the rows the lanes hold
// in registers (xxh3_warp.cuh), so checking costs no second pass.
//
// Why it is fast: the decoder is instruction-bound, so the hot loop is
// branch-free in the common case and short. A refill is a ballot, two
// popcounts and one shuffle from a register window of the chunk's next
// words. A step of K >= 2 symbols is one lookup in a shared pair table
// (both codes and their total length); otherwise a symbol is one lookup in a
// shared single table, and a code longer than its index is one load from a
// second-level table (huffman/gpu_tables.hpp). The tables' index widths are
// fixed per K and symbol width, so masks and offsets are constants, and the
// kernel is specialised on the symbol type, K, pairs and long codes. Full
// rows go block by block of the hash, so no row tests whether to hash.
#include "cuda/cuda_check.hpp"
#include "cuda/huffman_decode.hpp"
#include "cuda/xxh3_warp.cuh"
#include "huffman/gpu_tables.hpp"
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

// The decode tables in shared memory: the pair table (kPairs kernels, 32 KiB
// at offset 0), then the single table. Their index widths are fixed per K and
// symbol width (huffman/gpu_tables.hpp), so a lookup is a mask with a
// constant and one LDS at a constant offset from the shared window, with no
// table pointers held in registers.
extern __shared__ uint4 s_decode_tables[];

template <typename Sym, unsigned K, bool kPairs>
struct TableShape {
  static constexpr unsigned kSingleBits = K == 1 ? 13 : 11;
  static constexpr unsigned kPairBits = sizeof(Sym) == 1 ? 13 : 12;
  static constexpr uint32_t kPairBytes = kPairs ? (sizeof(Sym) == 1 ? 4u : 8u) << kPairBits : 0;
  static constexpr uint32_t kSharedBytes = kPairBytes + (4u << kSingleBits);
};

// The canonical arrays for long codes without a second level (kLong kernels).
__shared__ uint32_t s_canon[3 * kCanonSlots];

// The rare long codes read the rest of the tables through the kernel's
// parameters (constant bank), so they hold no registers in the hot loop.
using LongTables = DeviceDecodeTable;

// A long code of a codebook with too many second-level entries: the
// canonical First/Entry walk, out of line (no such codebook is fast anyway).
// Returns (length << 16) | symbol, 0 if no code.
__device__ __noinline__ uint32_t decode_canonical(const uint32_t* canon, const uint32_t* sorted, unsigned from,
                                                  unsigned L, uint32_t low_bits) {
  const uint32_t v = __brev(low_bits) >> (32 - L);
  for (unsigned l = from; l <= L; ++l) {
    const uint32_t code = v >> (L - l);
    const uint32_t first = canon[l];
    if (code - first < canon[kCanonSlots + l])
      return (l << 16) | __ldg(sorted + canon[2 * kCanonSlots + l] + code - first);
  }
  return 0;
}

// A code longer than the single table (entry `e` has kGpuLong): one load of
// its second-level entry (global memory, through L1).
template <unsigned kSingleBits>
__device__ __forceinline__ uint32_t decode_long(const LongTables& t, uint32_t e, uint64_t buf) {
  const unsigned sub_bits = e & 31;
  if (sub_bits == 0)
    return decode_canonical(s_canon, t.sorted, kSingleBits + 1, t.max_length, static_cast<uint32_t>(buf));
  return __ldg(t.sub + ((e & ~huffman::kGpuLong) >> 5) +
               (static_cast<uint32_t>(buf >> kSingleBits) & ((1u << sub_bits) - 1)));
}

// One code from the single table: (length << 16) | symbol. A long code that
// is no code, or longer than the `bits` the lane holds, sets `bad`.
template <typename Shape, bool kLong>
__device__ __forceinline__ uint32_t lookup_single(const LongTables& t, uint64_t buf, uint32_t bits, uint32_t& bad) {
  const uint32_t* single = reinterpret_cast<const uint32_t*>(s_decode_tables) + Shape::kPairBytes / 4;
  uint32_t e = single[static_cast<uint32_t>(buf) & ((1u << Shape::kSingleBits) - 1)];
  if (kLong && (e & huffman::kGpuLong)) {
    e = decode_long<Shape::kSingleBits>(t, e, buf);
    if ((e >> 16) == 0 || (e >> 16) > bits) bad = 1, e = 0;
  }
  return e;
}

// Pair-table entries (huffman/chunk_codec.hpp): s1 | s2 << W | total length
// << 2W, or, with the flag bit 2W + 7, a step the entry cannot complete,
// holding s1 | l1 << 2W when the first code fits (l1 = 0 if not).
template <typename Sym>
struct PairEntry {
  using E = uint64_t;
  static constexpr unsigned W = 16;
};
template <>
struct PairEntry<uint8_t> {
  using E = uint32_t;
  static constexpr unsigned W = 8;
};

// Two codes with one lookup; the rare step the pair table cannot complete
// (a lane whose two codes do not both fit in its index) takes single lookups.
template <typename Sym, typename Shape, bool kLong>
__device__ __forceinline__ typename PairEntry<Sym>::E lookup_pair(const LongTables& t, uint64_t buf, uint32_t bits,
                                                                  uint32_t& bad) {
  using E = typename PairEntry<Sym>::E;
  constexpr unsigned W = PairEntry<Sym>::W;
  constexpr E kSlow = E{1} << (2 * W + 7);
  E e = reinterpret_cast<const E*>(s_decode_tables)[static_cast<uint32_t>(buf) & ((1u << Shape::kPairBits) - 1)];
  if (e & kSlow) {
    uint32_t s1 = static_cast<uint32_t>(e) & ((1u << W) - 1);
    uint32_t l1 = static_cast<uint32_t>(e >> (2 * W)) & 63;
    if (l1 == 0) {
      const uint32_t e1 = lookup_single<Shape, kLong>(t, buf, bits, bad);
      s1 = e1 & 0xFFFF;
      l1 = e1 >> 16;
    }
    const uint32_t e2 = lookup_single<Shape, kLong>(t, buf >> l1, bits - l1, bad);
    e = s1 | E{e2 & 0xFFFF} << W | E{l1 + (e2 >> 16)} << (2 * W);
  }
  return e;
}

// One lane's decoder state, and the chunk it reads.
//
// The warp reads the chunk's words in order (the layout hands them out by
// ballot), so it keeps the next 64 in two 32-word windows, one word per lane,
// and a refill is one shuffle instead of a load: a window is loaded, fully
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

  uint32_t lanes_below = 0;     // lanemask_lt, read once
  uint32_t lane = 0;

  __device__ __forceinline__ void start(unsigned lane_index) {
    lane = lane_index;
    lanes_below = lanemask_lt();
    win0 = load(lane);
    win1 = load(32 + lane);
  }

  // The words a refill hands out are window positions o .. o + 31 at most
  // (o = base - wbase < 32), and position p sits in lane p mod 32: in win0
  // if p < 32, which for p in that range means lane >= o, else in win1. So
  // each lane offers the one word of its own that may be asked for, and one
  // shuffle (not one per window) delivers every lane's word.
  __device__ __forceinline__ void refill(bool active, uint32_t threshold) {
    const bool need = active && bits < threshold;
    const uint32_t mask = __ballot_sync(kFullMask, need);
    const uint32_t o = base - wbase;
    const uint32_t offered = lane >= o ? win0 : win1;
    const uint32_t from = __shfl_sync(kFullMask, offered, (o + __popc(mask & lanes_below)) & 31);
    const uint32_t w = need ? from : 0u;
    buf |= uint64_t{w} << bits;
    bits += need ? 32u : 0u;
    base += __popc(mask);
    if (base - wbase >= 32) {  // warp-uniform: win0 is used up
      win0 = win1;
      wbase += 32;
      win1 = load(wbase + 32 + lane);
    }
  }

  __device__ __forceinline__ void consume(uint32_t len) {
    buf >>= len;
    bits -= len;
  }

  // The K symbols of one step into s[0..K-1].
  template <typename Sym, unsigned K, bool kPairs, bool kLong>
  __device__ __forceinline__ void decode_step(const LongTables& t, Sym* s) {
    using Shape = TableShape<Sym, K, kPairs>;
    if constexpr (kPairs) {
      constexpr unsigned W = PairEntry<Sym>::W;
#pragma unroll
      for (unsigned h = 0; h < K / 2; ++h) {
        const auto e = lookup_pair<Sym, Shape, kLong>(t, buf, bits, bad);
        s[2 * h] = static_cast<Sym>(e & ((1u << W) - 1));
        s[2 * h + 1] = static_cast<Sym>((e >> W) & ((1u << W) - 1));
        consume(static_cast<uint32_t>(e >> (2 * W)));
      }
    } else {
#pragma unroll
      for (unsigned k = 0; k < K; ++k) {
        const uint32_t e = lookup_single<Shape, kLong>(t, buf, bits, bad);
        s[k] = static_cast<Sym>(e & 0xFFFF);
        consume(e >> 16);
      }
    }
  }

  // One symbol (the last, partial row, where a lane may own fewer than K).
  template <typename Shape, bool kLong>
  __device__ __forceinline__ uint32_t decode_one(const LongTables& t) {
    const uint32_t e = lookup_single<Shape, kLong>(t, buf, bits, bad);
    consume(e >> 16);
    return e & 0xFFFF;
  }
};

// Zero padding after a chunk (its bytes [from, to) of the payload).
__device__ bool padding_zero(const uint8_t* payload, uint64_t from, uint64_t to, unsigned lane) {
  bool ok = true;
  for (uint64_t i = from + lane; i < to; i += kLanes) ok = ok && payload[i] == 0;
  return __all_sync(kFullMask, ok);
}

// Decode and verify chunk c with the calling warp.
template <typename Sym, unsigned K, bool kPairs, bool kLong>
__device__ __forceinline__ void decode_chunk(const HuffmanDecodeArgs& a, const LongTables& t, uint64_t c,
                                             unsigned lane) {
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
  const uint32_t full_rows = static_cast<uint32_t>(n / kRow);  // n < 2^32 (chunk_elements is 32-bit)
  // The hash's whole 1 KiB blocks lie in the full rows (the last block, even
  // when whole, is hashed from memory with the tail): decode them block by
  // block, folding each into the hash, so the row loop tests nothing per row.
  const uint32_t hashed_blocks = a.verify ? static_cast<uint32_t>(hash_blocks) : 0;
  Sym* lane_out = out + lane * kGroup;
  uint32_t row = 0;
  auto decode_row = [&](Sym (&s)[4]) {
#pragma unroll
    for (unsigned step = 0; step < kGroup / K; ++step) {
      d.refill(true, threshold);
      d.template decode_step<Sym, K, kPairs, kLong>(t, s + step * K);
    }
    store_group(lane_out, uint64_t{row} * kLanes, s);
  };
  for (uint32_t block = 0; block < hashed_blocks; ++block) {
#pragma unroll 1
    for (unsigned r = 0; r < kRowsPerBlock; ++r, ++row) {
      Sym s[4];
      decode_row(s);
      hasher.add(s, r, lane);
    }
    hasher.fold(acc, lane);
  }
#pragma unroll 1
  for (; row < full_rows; ++row) {
    Sym s[4];
    decode_row(s);
  }
  // The last, partial row: this lane owns `mine` symbols of it.
  const uint32_t rest = static_cast<uint32_t>(n % kRow);
  if (rest) {
    const uint32_t mine = rest > lane * kGroup ? min(rest - lane * kGroup, kGroup) : 0;
    Sym* tail = out + uint64_t{full_rows} * kRow + lane * kGroup;
    for (unsigned step = 0; step < kGroup / K; ++step) {
      d.refill(step * K < mine, threshold);
      for (unsigned k = 0; k < K; ++k)
        if (step * K + k < mine) tail[step * K + k] = static_cast<Sym>(d.template decode_one<TableShape<Sym, K, kPairs>, kLong>(t));
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
    if (lane == 0 && hash != a.chunks[c].checksum) status = kChunkChecksum;  // read again: no register held
  }
  if (lane == 0) a.status[c] = status;
}

// Warp w of block b decodes chunk 8b + w, then those one grid further (only
// with resident_blocks: the grid then fills the GPU once).
template <typename Sym, unsigned K, bool kPairs, bool kLong>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, 4) huffman_decode_kernel(const HuffmanDecodeArgs a) {
  using Shape = TableShape<Sym, K, kPairs>;
  if (a.table.single) {  // null only for frames without a codebook (all chunks raw)
    uint32_t* s_single = reinterpret_cast<uint32_t*>(s_decode_tables) + Shape::kPairBytes / 4;
    for (uint32_t i = threadIdx.x; i < (1u << Shape::kSingleBits); i += blockDim.x) s_single[i] = a.table.single[i];
    if constexpr (kPairs) {
      const uint4* pair = static_cast<const uint4*>(a.table.pair);
      for (uint32_t i = threadIdx.x; i < Shape::kPairBytes / 16; i += blockDim.x) s_decode_tables[i] = pair[i];
    }
    if (kLong && threadIdx.x < 3 * kCanonSlots) s_canon[threadIdx.x] = a.table.canon[threadIdx.x];
  }
  __syncthreads();
  const LongTables& t = a.table;
  const unsigned lane = threadIdx.x % kLanes;
  for (uint64_t c = uint64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / kLanes; c < a.chunk_count;
       c += uint64_t{gridDim.x} * kWarpsPerBlock)
    decode_chunk<Sym, K, kPairs, kLong>(a, t, c, lane);
}

template <typename Sym, unsigned K, bool kPairs, bool kLong>
void launch_kernel(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  const auto kernel = huffman_decode_kernel<Sym, K, kPairs, kLong>;
  const std::size_t smem = TableShape<Sym, K, kPairs>::kSharedBytes;
  const uint64_t needed = (a.chunk_count + kWarpsPerBlock - 1) / kWarpsPerBlock;
  uint64_t blocks = needed;
  if (a.resident_blocks) {
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kWarpsPerBlock * 32, smem));
    blocks = std::min(needed, uint64_t(std::max(sms, 1)) * std::max(per_sm, 1));
  }
  VLEC_REQUIRE(blocks < (uint64_t{1} << 31), "too many chunks for one GPU decode launch: ", a.chunk_count);
  kernel<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, smem, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

template <typename Sym>
void launch_typed(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  VLEC_REQUIRE(!a.table.single || a.table.single_bits == huffman::gpu_single_bits(a.table.max_length),
               "GPU decode tables of the wrong shape");
  const bool long_codes = a.table.max_length > a.table.single_bits;
  const bool pairs = a.table.use_pairs && a.table.pair;
  const unsigned K = huffman::symbols_per_step(a.table.max_length);
  if (K == 4 && pairs)  // codes of at most 8 bits: the single table holds them all
    launch_kernel<Sym, 4, true, false>(a, stream);
  else if (K == 4)
    launch_kernel<Sym, 4, false, false>(a, stream);
  else if (K == 2 && pairs)
    long_codes ? launch_kernel<Sym, 2, true, true>(a, stream) : launch_kernel<Sym, 2, true, false>(a, stream);
  else if (K == 2)
    long_codes ? launch_kernel<Sym, 2, false, true>(a, stream) : launch_kernel<Sym, 2, false, false>(a, stream);
  else
    long_codes ? launch_kernel<Sym, 1, false, true>(a, stream) : launch_kernel<Sym, 1, false, false>(a, stream);
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
