// cuda/huffman_decode_lanes.cuh: the per-lane part of the GPU Huffman
// decoder (huffman_decode.cu): the shared-memory table lookups and one lane's
// bit buffer with the warp's supply of chunk words.
//
// Why it is fast: the decoder is bound by the instructions it issues, and the
// refill (docs/FORMAT.md §5: before each step, every lane holding fewer than
// T bits takes the chunk's next word, in lane order) was half of them. Here a
// refill is a compare, a ballot, two popcounts, one LDS from a ring of the
// chunk's upcoming words in shared memory, and three selects:
// - the ring (128 words a warp) is topped up once per row, not per refill:
//   a row takes at most 32 * ceil(4L / 32) words (L <= 8, 16, 24 for K = 4,
//   2, 1), so a row that starts with that many words in the ring never runs
//   out; the words are loaded coalesced, two windows of 32 ahead, into
//   registers and stored to the ring, so no refill waits on global memory;
// - the bit buffer is the lane's last two words (lo, hi) and the number of
//   bits of them already used: taking a word is lo = hi, hi = word,
//   used -= 32 (three selects; no 64-bit shift-or), consuming a code is one
//   add, and the bits ahead are one funnel shift.
// A lookup is a mask and one LDS at a constant offset (huffman/gpu_tables.hpp
// fixes the index widths per K and symbol width); K >= 2 steps read both
// codes from a pair table.
#pragma once

#include <cstdint>

#include "cuda/huffman_decode.hpp"
#include "huffman/gpu_tables.hpp"
#include "huffman/layout.hpp"

namespace vlec::cuda {
namespace decode_lanes {

constexpr unsigned kFullMask = 0xFFFFFFFFu;

__device__ __forceinline__ uint32_t lanemask_lt() {
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// The decode tables in shared memory: the pair table (kPairs kernels, 32 KiB
// at offset 0), then the single table, then each warp's ring of words. Their
// index widths are fixed per K and symbol width (huffman/gpu_tables.hpp), so
// a lookup is a mask with a constant and one LDS at a constant offset from
// the shared window, with no table pointers held in registers.
extern __shared__ uint4 s_decode_tables[];

constexpr unsigned kRingWords = 128;  // per warp; a power of two

template <typename Sym, unsigned K, bool kPairs>
struct TableShape {
  static constexpr unsigned kSingleBits = K == 1 ? 13 : 11;
  static constexpr unsigned kPairBits = sizeof(Sym) == 1 ? 13 : 12;
  static constexpr uint32_t kPairBytes = kPairs ? (sizeof(Sym) == 1 ? 4u : 8u) << kPairBits : 0;
  static constexpr uint32_t kTableBytes = kPairBytes + (4u << kSingleBits);
  // The rings follow the tables (kTableBytes is a multiple of 16).
  static constexpr uint32_t kSharedBytes(unsigned warps) { return kTableBytes + warps * kRingWords * 4; }
};

// The canonical arrays for long codes without a second level (kLong kernels).
__shared__ uint32_t s_canon[3 * kCanonSlots];

// The rare long codes read the rest of the tables through the kernel's
// parameters (constant bank), so they hold no registers in the hot loop.
using LongTables = DeviceDecodeTable;

// A long code of a codebook with too many second-level entries: the
// canonical First/Entry walk, out of line (no such codebook is fast anyway).
// Returns (length << 16) | symbol, 0 if no code.
__device__ __noinline__ inline uint32_t decode_canonical(const uint32_t* canon, const uint32_t* sorted, unsigned from,
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
// its second-level entry (global memory, through L1). `v` holds the lane's
// next 32 bits (a code has at most 24).
template <unsigned kSingleBits>
__device__ __forceinline__ uint32_t decode_long(const LongTables& t, uint32_t e, uint32_t v) {
  const unsigned sub_bits = e & 31;
  if (sub_bits == 0) return decode_canonical(s_canon, t.sorted, kSingleBits + 1, t.max_length, v);
  return __ldg(t.sub + ((e & ~huffman::kGpuLong) >> 5) + ((v >> kSingleBits) & ((1u << sub_bits) - 1)));
}

// One code from the single table: (length << 16) | symbol. A long code that
// is no code, or longer than the `bits` the lane holds, sets `bad`.
template <typename Shape, bool kLong>
__device__ __forceinline__ uint32_t lookup_single(const LongTables& t, uint32_t v, uint32_t bits, uint32_t& bad) {
  const uint32_t* single = reinterpret_cast<const uint32_t*>(s_decode_tables) + Shape::kPairBytes / 4;
  uint32_t e = single[v & ((1u << Shape::kSingleBits) - 1)];
  if (kLong && (e & huffman::kGpuLong)) {
    e = decode_long<Shape::kSingleBits>(t, e, v);
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
// Pairs exist for K >= 2 (L <= 16), so `v >> l1` still holds the second code.
template <typename Sym, typename Shape, bool kLong>
__device__ __forceinline__ typename PairEntry<Sym>::E lookup_pair(const LongTables& t, uint32_t v, uint32_t bits,
                                                                  uint32_t& bad) {
  using E = typename PairEntry<Sym>::E;
  constexpr unsigned W = PairEntry<Sym>::W;
  constexpr E kSlow = E{1} << (2 * W + 7);
  E e = reinterpret_cast<const E*>(s_decode_tables)[v & ((1u << Shape::kPairBits) - 1)];
  if (e & kSlow) {
    uint32_t s1 = static_cast<uint32_t>(e) & ((1u << W) - 1);
    uint32_t l1 = static_cast<uint32_t>(e >> (2 * W)) & 63;
    if (l1 == 0) {
      const uint32_t e1 = lookup_single<Shape, kLong>(t, v, bits, bad);
      s1 = e1 & 0xFFFF;
      l1 = e1 >> 16;
    }
    const uint32_t e2 = lookup_single<Shape, kLong>(t, v >> l1, bits - l1, bad);
    e = s1 | E{e2 & 0xFFFF} << W | E{l1 + (e2 >> 16)} << (2 * W);
  }
  return e;
}

// One lane's decoder. The warp reads its chunk's words in order (the layout
// hands them out by ballot), so the next words wait in the warp's ring and a
// lane's word is at ring[(base + lanes below that take one) mod 128].
//
// kSplit: the buffer is (lo, hi, used) as described at the top; otherwise a
// 64-bit buffer with a bit count (buf |= word << bits), kept to measure the
// two against each other.
template <unsigned K, bool kSplit, uint32_t kRingOffset>
struct RingDecoder {
  // Words a row of 4 / K steps can take: each lane at most ceil(4L / 32).
  static constexpr unsigned kMaxLength = K == 4 ? 8 : K == 2 ? 16 : huffman::kMaxCodeLength;
  static constexpr unsigned kRowWords = huffman::kLanes * ((4 * kMaxLength + 31) / 32);
  static_assert(kRowWords + 31 <= kRingWords, "a row's words and the window being stored must fit the ring");

  uint32_t lo = 0, hi = 0, used = 64;  // kSplit: the bits held are (hi:lo) >> used
  uint64_t buf = 0;                    // !kSplit: `bits` bits
  uint32_t bits = 0;
  uint32_t limit = 0;    // kSplit: a lane takes a word when used > limit (= 64 - T); else when bits < T
  uint32_t bad = 0;      // set when a long code is invalid
  const uint32_t* words = nullptr;
  uint32_t last_word = 0;  // index of the chunk's last word
  uint32_t base = 0;       // warp-uniform: the next word to hand out
  uint32_t filled = 0;     // warp-uniform: words below this are in the ring (the 128 before it)
  uint32_t next0 = 0, next1 = 0;  // words filled + lane and filled + 32 + lane, loaded ahead
  uint32_t ring_warp = 0;  // this warp's ring: words kRingOffset + ring_warp .. + 127 of shared memory
  uint32_t lanes_below = 0;
  uint32_t lane = 0;

  // Loads are clamped into the chunk: an overrun is caught by the word count.
  __device__ __forceinline__ uint32_t load(uint32_t i) const { return __ldg(words + min(i, last_word)); }

  // A ring slot: (index mod 128) | ring_warp is one LOP3, and the ring's
  // offset is the LDS's immediate.
  __device__ __forceinline__ uint32_t& slot(uint32_t index) const {
    return (reinterpret_cast<uint32_t*>(s_decode_tables) + kRingOffset)[(index % kRingWords) | ring_warp];
  }

  __device__ __forceinline__ void start(unsigned lane_index, unsigned warp, uint32_t threshold) {
    lane = lane_index;
    lanes_below = lanemask_lt();
    ring_warp = warp * kRingWords;
    limit = kSplit ? 64 - threshold : threshold;
    next0 = load(lane);
    next1 = load(32 + lane);
  }

  // Store the next 32 words to the ring and load 32 more. The slots it
  // overwrites held words at least 96 below `filled`, all below base (all
  // handed out), but a lane may still be reading the last refill's words, so
  // the warp syncs before the store, and after it so every lane sees it.
  __device__ __forceinline__ void fill() {
    __syncwarp();
    slot(filled + lane) = next0;
    next0 = next1;
    next1 = load(filled + 64 + lane);
    filled += 32;
    __syncwarp();
  }

  // Before a row: the ring must hold the row's words [base, base + kRowWords).
  __device__ __forceinline__ void prepare_row() {
    while (filled - base < kRowWords) fill();
  }

  __device__ __forceinline__ uint32_t held() const { return kSplit ? 64 - used : bits; }

  // The lane's next 32 bits (zeros above the bits it holds). used < 64 here:
  // a lane that decodes holds at least T bits at its step's start and each
  // code takes at most L of them.
  __device__ __forceinline__ uint32_t peek() const {
    if constexpr (kSplit) return static_cast<uint32_t>((uint64_t{hi} << 32 | lo) >> used);
    else return static_cast<uint32_t>(buf);
  }

  __device__ __forceinline__ void consume(uint32_t len) {
    if constexpr (kSplit) {
      used += len;
    } else {
      buf >>= len;
      bits -= len;
    }
  }

  __device__ __forceinline__ void refill(bool active) {
    const bool need = active && (kSplit ? used > limit : bits < limit);
    const uint32_t mask = __ballot_sync(kFullMask, need);
    // Every lane reads (no divergent branch); a lane that takes no word reads
    // the word of the next lane that does, a broadcast, and drops it.
    const uint32_t w = slot(base + __popc(mask & lanes_below));
    if constexpr (kSplit) {
      // A lane that takes a word holds fewer than T <= 32 bits, all in hi.
      lo = need ? hi : lo;
      hi = need ? w : hi;
      used = need ? used - 32 : used;
    } else {
      buf |= uint64_t{need ? w : 0u} << bits;
      bits += need ? 32u : 0u;
    }
    base += __popc(mask);
  }

  // Bits left in the buffer at the chunk's end (padding: must be zero).
  __device__ __forceinline__ bool leftover_bits() const {
    if constexpr (kSplit) return used < 64 && ((uint64_t{hi} << 32 | lo) >> used) != 0;
    else return buf != 0;
  }

  // The K symbols of one step into s[0..K-1].
  template <typename Sym, bool kPairs, bool kLong>
  __device__ __forceinline__ void decode_step(const LongTables& t, Sym* s) {
    using Shape = TableShape<Sym, K, kPairs>;
    if constexpr (kPairs) {
      constexpr unsigned W = PairEntry<Sym>::W;
#pragma unroll
      for (unsigned h = 0; h < K / 2; ++h) {
        const auto e = lookup_pair<Sym, Shape, kLong>(t, peek(), held(), bad);
        s[2 * h] = static_cast<Sym>(e & ((1u << W) - 1));
        s[2 * h + 1] = static_cast<Sym>((e >> W) & ((1u << W) - 1));
        consume(static_cast<uint32_t>(e >> (2 * W)));
      }
    } else {
#pragma unroll
      for (unsigned k = 0; k < K; ++k) s[k] = static_cast<Sym>(decode_one<Shape, kLong>(t));
    }
  }

  // One symbol (also the last, partial row, where a lane may own fewer than K).
  template <typename Shape, bool kLong>
  __device__ __forceinline__ uint32_t decode_one(const LongTables& t) {
    const uint32_t e = lookup_single<Shape, kLong>(t, peek(), held(), bad);
    consume(e >> 16);
    return e & 0xFFFF;
  }
};

}  // namespace decode_lanes
}  // namespace vlec::cuda
