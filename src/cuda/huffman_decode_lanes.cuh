// cuda/huffman_decode_lanes.cuh: the per-lane part of the GPU Huffman
// decoder (huffman_decode.cu): the shared-memory table lookups and one lane's
// bit buffer with the warp's supply of chunk words.
//
// Why it is fast: the decoder is bound by the latency of each warp's chain
// of dependent instructions (Nsight Compute: ~10 cycles between a warp's
// instructions, 8 warps a scheduler) and by the ALU pipe, and the refill
// (docs/FORMAT.md §5: before each step, every lane holding fewer than T bits
// takes the chunk's next word, in lane order) sits on that chain. So:
// - the chunk's next words wait in two 32-word register windows loaded
//   coalesced, and a refill is one shuffle (each lane offers the one window
//   word that may be asked of it). The refill after a window is loaded
//   reads it (the select of the offered word), so the window two ahead is
//   prefetched into L1 and that load waits for an L1 hit, not for HBM;
// - the bit buffer is the lane's last two words (lo, hi) and the number of
//   their bits already used: taking a word is lo = hi, hi = word,
//   used -= 32 (three selects, where a 64-bit buffer took a shift-or of four
//   ALU instructions), consuming a code is one add, and the bits ahead are
//   one funnel shift.
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

// Volatile: read once into a register. Left to itself the compiler reads
// SR_LTMASK again at every refill (an S2R whose latency the ballot's popcount
// then waits for).
__device__ __forceinline__ uint32_t lanemask_lt() {
  uint32_t m;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// The decode tables in shared memory: the pair table (kPairs kernels, 32 KiB
// at offset 0), then the single table. Their
// index widths are fixed per K and symbol width (huffman/gpu_tables.hpp), so
// a lookup is a mask with a constant and one LDS at a constant offset from
// the shared window, with no table pointers held in registers.
extern __shared__ uint4 s_decode_tables[];

// The tables' shared-window address, computed once and held in a register:
// the empty volatile asm makes it opaque, where the compiler otherwise
// rebuilt it at every lookup under the 48-register cap (S2R SR_CgaCtaId and
// three more instructions a step). Lookups are ld.shared at constant offsets
// from it.
__device__ __forceinline__ uint32_t pinned_tables_base() {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(s_decode_tables));
  asm volatile("" : "+r"(a));
  return a;
}
__device__ __forceinline__ uint32_t lds32(uint32_t address) {
  uint32_t v;
  asm("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address));
  return v;
}
__device__ __forceinline__ uint64_t lds64(uint32_t address) {
  uint64_t v;
  asm("ld.shared.u64 %0, [%1];" : "=l"(v) : "r"(address));
  return v;
}

template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
struct TableShape {
  // kLong: 0 no codes beyond the single table, 1 long codes, 2 long codes
  // and the 13-bit single table for K = 2 (huffman::gpu_single_bits: no
  // pairs, codes above 11 bits common), which K = 1 always has.
  static_assert(kLong != 2 || (K == 2 && !kPairs), "the wide single table is for K = 2 without pairs");
  static constexpr unsigned kSingleBits = K == 1 || kLong == 2 ? 13 : 11;
  static constexpr unsigned kPairBits = sizeof(Sym) == 1 ? 13 : 12;
  static constexpr uint32_t kPairBytes = kPairs ? (sizeof(Sym) == 1 ? 4u : 8u) << kPairBits : 0;
  static constexpr uint32_t kSharedBytes = kPairBytes + (4u << kSingleBits);
  // The second level goes to shared memory (after the tables) when the block
  // still fits five to an SM: 5 x (43 KiB + the static tables + 1 KiB) <= 228 KiB.
  static constexpr uint32_t kSharedBudget = 43u << 10;
  static constexpr uint32_t kMaxSharedSub = kSharedBudget > kSharedBytes ? (kSharedBudget - kSharedBytes) / 4 : 0;
  static_assert(kSharedBudget <= 48u << 10, "launches set no dynamic shared memory attribute above 48 KiB");
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
// its second-level entry, from shared memory where the launch copied the
// second level there (after the single table, at byte kSubOffset), else from
// global memory through L1. `v` holds the lane's next 32 bits (a code has at
// most 24).
//
// Why shared memory: where codes longer than the single table are common (u16
// quantization codes of 65,536 bins: nearly every warp-step has a lane with
// one), this load sits on every step's chain, and from global memory it
// misses L1 whenever the chunk's streaming words have evicted the table.
template <unsigned kSingleBits, uint32_t kSubOffset>
__device__ __forceinline__ uint32_t decode_long(const LongTables& t, uint32_t base, uint32_t e, uint32_t v) {
  const unsigned sub_bits = e & 31;
  if (sub_bits == 0) return decode_canonical(s_canon, t.sorted, kSingleBits + 1, t.max_length, v);
  const uint32_t i = ((e & ~huffman::kGpuLong) >> 5) + ((v >> kSingleBits) & ((1u << sub_bits) - 1));
  if (t.sub_shared) return lds32(base + kSubOffset + 4 * i);
  return __ldg(t.sub + i);
}

// One code from the single table: (length << 16) | symbol. A long code that
// is no code, or longer than the `bits` the lane holds, sets `bad`.
template <typename Shape, unsigned kLong>
__device__ __forceinline__ uint32_t lookup_single(const LongTables& t, uint32_t base, uint32_t v, uint32_t bits,
                                                  uint32_t& bad) {
  uint32_t e = lds32(base + Shape::kPairBytes + 4 * (v & ((1u << Shape::kSingleBits) - 1)));
  if (kLong && (e & huffman::kGpuLong)) {
    e = decode_long<Shape::kSingleBits, Shape::kSharedBytes>(t, base, e, v);
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
template <typename Sym, typename Shape, unsigned kLong>
__device__ __forceinline__ typename PairEntry<Sym>::E lookup_pair(const LongTables& t, uint32_t base, uint32_t v,
                                                                  uint32_t bits, uint32_t& bad) {
  using E = typename PairEntry<Sym>::E;
  constexpr unsigned W = PairEntry<Sym>::W;
  constexpr E kSlow = E{1} << (2 * W + 7);
  const uint32_t at = base + sizeof(E) * (v & ((1u << Shape::kPairBits) - 1));
  E e;
  if constexpr (sizeof(E) == 4) e = lds32(at);
  else e = lds64(at);
  if (e & kSlow) {
    uint32_t s1 = static_cast<uint32_t>(e) & ((1u << W) - 1);
    uint32_t l1 = static_cast<uint32_t>(e >> (2 * W)) & 63;
    if (l1 == 0) {
      const uint32_t e1 = lookup_single<Shape, kLong>(t, base, v, bits, bad);
      s1 = e1 & 0xFFFF;
      l1 = e1 >> 16;
    }
    const uint32_t e2 = lookup_single<Shape, kLong>(t, base, v >> l1, bits - l1, bad);
    e = s1 | E{e2 & 0xFFFF} << W | E{l1 + (e2 >> 16)} << (2 * W);
  }
  return e;
}

// One lane's decoder. The warp reads its chunk's words in order (the layout
// hands them out by ballot), so the next ones wait in 32-word register
// windows, one word per lane: window w holds words wbase + 32w + lane.
//
// kSplit: the (lo, hi, used) buffer described at the top; otherwise a 64-bit
// buffer with a bit count (buf |= word << bits). kPrefetch: prefetch into L1
// the window two ahead. kWindows == 3: instead, a third window loaded into
// registers one ahead (the compiler loads it into a spare register and moves
// it at once, so the move waits for HBM: measured slower). The other
// combinations stay as gpu_bench variants (huffman_decode.cu).
//
// kRowWindows (K = 2, split buffer, prefetch): three windows, moved on once a
// row instead of after every refill. A row starts with the next word in win0
// (o = base - wbase < 32); its first refill hands out positions o .. o + 31,
// its second o' .. o' + 31 with o' < 64, so win0..win2 hold them all, and
// after the row the windows move on while o >= 32 (at most twice). Checked
// after every refill, the move was if-converted into eleven predicated
// instructions issued at every step (the window load and prefetch with
// their clamps and moves), ~a quarter of a skewed-byte step.
template <unsigned K, bool kSplit, unsigned kWindows, bool kPrefetch, bool kRowWindows = false>
struct LaneDecoder {
  static_assert(kWindows == 2 || (kWindows == 3 && !kPrefetch), "two windows (prefetching or not) or three");
  static_assert(!kRowWindows || (K == 2 && kSplit && kWindows == 2 && kPrefetch),
                "row windows: K = 2, the split buffer and the prefetch");
  uint32_t lo = 0, hi = 0, used = 64;  // kSplit: the bits held are (hi:lo) >> used
  uint64_t buf = 0;                    // !kSplit: `bits` bits
  uint32_t bits = 0;
  uint32_t limit = 0;  // kSplit: a lane takes a word when used > limit (= 64 - T); else when bits < T
  uint32_t bad = 0;    // set when a long code is invalid
  const uint32_t* words = nullptr;
  uint32_t last_word = 0;       // index of the chunk's last word
  uint32_t base = 0;            // warp-uniform: the next word to hand out
  uint32_t wbase = 0;           // warp-uniform: first word of win0 (base - wbase < 32)
  uint32_t win0 = 0, win1 = 0;  // words wbase + lane and wbase + 32 + lane
  uint32_t win2 = 0;            // kWindows == 3: word wbase + 64 + lane, in flight; kRowWindows: that word
  uint32_t lanes_below = 0;
  uint32_t lane = 0;
  uint32_t tables = 0;  // pinned_tables_base()

  // Loads are clamped into the chunk: an overrun is caught by the word count.
  __device__ __forceinline__ uint32_t load(uint32_t i) const { return __ldg(words + min(i, last_word)); }
  __device__ __forceinline__ static void prefetch_l1(const uint32_t* p) {
    asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
  }

  __device__ __forceinline__ void start(unsigned lane_index, uint32_t threshold) {
    lane = lane_index;
    lanes_below = lanemask_lt();
    tables = pinned_tables_base();
    limit = kSplit ? 64 - threshold : threshold;
    win0 = load(lane);
    win1 = load(32 + lane);
    if constexpr (kWindows == 3 || kRowWindows) win2 = load(64 + lane);
    if constexpr (kRowWindows) prefetch_l1(words + min(96 + lane, last_word));
    else if constexpr (kPrefetch) prefetch_l1(words + min(64 + lane, last_word));
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

  // The words a refill hands out are window positions o .. o + 31 at most
  // (o = base - wbase < 32), and position p sits in lane p mod 32: in win0
  // if p < 32, which for p in that range means lane >= o, else in win1. So
  // each lane offers the one word of its own that may be asked for, and one
  // shuffle delivers every lane's word.
  //
  // kRowWindows: `kFirst` is a row's first refill (o < 32); a second one
  // offers from win1 and win2 when o >= 32 (warp-uniform), and the caller
  // moves the windows on after the row (next_row).
  template <bool kFirst = true>
  __device__ __forceinline__ void refill(bool active) {
    const bool need = active && (kSplit ? used > limit : bits < limit);
    const uint32_t mask = __ballot_sync(kFullMask, need);
    const uint32_t o = base - wbase;
    uint32_t offered;
    if (!kRowWindows || kFirst) {
      offered = lane >= o ? win0 : win1;
    } else {
      const bool up = o >= 32;
      offered = lane >= (o & 31) ? (up ? win1 : win0) : (up ? win2 : win1);
    }
    if constexpr (kSplit) {
      // The shuffle takes the source lane mod 32 itself.
      const uint32_t from = __shfl_sync(kFullMask, offered, o + __popc(mask & lanes_below));
      // A lane that takes a word holds fewer than T <= 32 bits, all in hi.
      lo = need ? hi : lo;
      hi = need ? from : hi;
      used = need ? used - 32 : used;
    } else {
      const uint32_t from = __shfl_sync(kFullMask, offered, (o + __popc(mask & lanes_below)) & 31);
      buf |= uint64_t{need ? from : 0u} << bits;
      bits += need ? 32u : 0u;
    }
    base += __popc(mask);
    if (!kRowWindows && base - wbase >= 32) {  // warp-uniform: win0 is used up
      win0 = win1;
      wbase += 32;
      if constexpr (kWindows == 3) {
        win1 = win2;
        win2 = load(wbase + 64 + lane);
      } else {
        win1 = load(wbase + 32 + lane);
        if constexpr (kPrefetch) prefetch_l1(words + min(wbase + 96 + lane, last_word));
      }
    }
  }

  // kRowWindows, after a row: move the windows on until win0 holds the
  // next word (a row takes at most 64 words, so twice at most).
  __device__ __forceinline__ void next_row() {
    if constexpr (kRowWindows) {
#pragma unroll 1
      while (base - wbase >= 32) {  // warp-uniform
        win0 = win1;
        win1 = win2;
        wbase += 32;
        win2 = load(wbase + 64 + lane);
        prefetch_l1(words + min(wbase + 96 + lane, last_word));
      }
    }
  }

  // Bits left in the buffer at the chunk's end (padding: must be zero).
  __device__ __forceinline__ bool leftover_bits() const {
    if constexpr (kSplit) return used < 64 && ((uint64_t{hi} << 32 | lo) >> used) != 0;
    else return buf != 0;
  }

  // The K symbols of one step into s[0..K-1].
  template <typename Sym, bool kPairs, unsigned kLong>
  __device__ __forceinline__ void decode_step(const LongTables& t, Sym* s) {
    using Shape = TableShape<Sym, K, kPairs, kLong>;
    if constexpr (kPairs) {
      constexpr unsigned W = PairEntry<Sym>::W;
#pragma unroll
      for (unsigned h = 0; h < K / 2; ++h) {
        const auto e = lookup_pair<Sym, Shape, kLong>(t, tables, peek(), held(), bad);
        s[2 * h] = static_cast<Sym>(e & ((1u << W) - 1));
        s[2 * h + 1] = static_cast<Sym>((e >> W) & ((1u << W) - 1));
        consume(static_cast<uint32_t>(e >> (2 * W)));
      }
    } else {
#pragma unroll
      for (unsigned k = 0; k < K; ++k) s[k] = static_cast<Sym>(decode_one<Shape, kLong>(t));
    }
  }

  // Bytes, K = 2 with the pair table: the step's two symbols as the low 16
  // bits of the result (s1 | s2 << 8; the bits above are not cleared).
  template <typename Shape, unsigned kLong>
  __device__ __forceinline__ uint32_t decode_pair_bytes(const LongTables& t) {
    const uint32_t e = lookup_pair<uint8_t, Shape, kLong>(t, tables, peek(), held(), bad);
    consume(e >> 16);
    return e;
  }

  // One symbol (also the last, partial row, where a lane may own fewer than K).
  template <typename Shape, unsigned kLong>
  __device__ __forceinline__ uint32_t decode_one(const LongTables& t) {
    const uint32_t e = lookup_single<Shape, kLong>(t, tables, peek(), held(), bad);
    consume(e >> 16);
    return e & 0xFFFF;
  }
};

}  // namespace decode_lanes
}  // namespace vlec::cuda
