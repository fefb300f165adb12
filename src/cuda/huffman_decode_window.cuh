// cuda/huffman_decode_window.cuh: the register-window refill: the chunk's
// next 64 words in two 32-word register windows, one shuffle a refill (each
// lane offers the one window word that may be asked of it), the window
// advanced inside every refill. kSplit: the bit buffer of
// huffman_decode_lanes.cuh (lo, hi, used); otherwise the previous decoder's
// 64-bit buffer with a bit count, kept as a gpu_bench variant.
#pragma once

#include "cuda/huffman_decode_lanes.cuh"

namespace vlec::cuda {
namespace decode_lanes {

template <unsigned K, bool kSplit>
struct WindowDecoder {
  uint32_t lo = 0, hi = 0, used = 64;  // kSplit: the bits held are (hi:lo) >> used
  uint64_t buf = 0;                    // !kSplit: `bits` bits
  uint32_t bits = 0;
  uint32_t limit = 0;  // kSplit: a lane takes a word when used > limit (= 64 - T); else when bits < T
  uint32_t bad = 0;
  const uint32_t* words = nullptr;
  uint32_t last_word = 0;
  uint32_t base = 0;            // warp-uniform: next word of the chunk
  uint32_t wbase = 0;           // warp-uniform: first word of win0 (base - wbase < 32)
  uint32_t win0 = 0, win1 = 0;  // words wbase + lane and wbase + 32 + lane
  uint32_t lanes_below = 0;
  uint32_t lane = 0;

  __device__ __forceinline__ uint32_t load(uint32_t i) const { return __ldg(words + min(i, last_word)); }

  __device__ __forceinline__ void start(unsigned lane_index, unsigned, uint32_t t) {
    lane = lane_index;
    lanes_below = lanemask_lt();
    limit = kSplit ? 64 - t : t;
    win0 = load(lane);
    win1 = load(32 + lane);
  }
  __device__ __forceinline__ void prepare_row() {}

  __device__ __forceinline__ void refill(bool active) {
    const bool need = active && (kSplit ? used > limit : bits < limit);
    const uint32_t mask = __ballot_sync(kFullMask, need);
    const uint32_t o = base - wbase;
    const uint32_t offered = lane >= o ? win0 : win1;
    if constexpr (kSplit) {
      // The shuffle takes the source lane mod 32 itself.
      const uint32_t from = __shfl_sync(kFullMask, offered, o + __popc(mask & lanes_below));
      lo = need ? hi : lo;
      hi = need ? from : hi;
      used = need ? used - 32 : used;
    } else {
      const uint32_t from = __shfl_sync(kFullMask, offered, (o + __popc(mask & lanes_below)) & 31);
      const uint32_t w = need ? from : 0u;
      buf |= uint64_t{w} << bits;
      bits += need ? 32u : 0u;
    }
    base += __popc(mask);
    if (base - wbase >= 32) {  // warp-uniform: win0 is used up
      win0 = win1;
      wbase += 32;
      win1 = load(wbase + 32 + lane);
    }
  }

  __device__ __forceinline__ bool leftover_bits() const {
    if constexpr (kSplit) return used < 64 && ((uint64_t{hi} << 32 | lo) >> used) != 0;
    else return buf != 0;
  }
  __device__ __forceinline__ uint32_t held() const { return kSplit ? 64 - used : bits; }
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

  template <typename Shape, bool kLong>
  __device__ __forceinline__ uint32_t decode_one(const LongTables& t) {
    const uint32_t e = lookup_single<Shape, kLong>(t, peek(), held(), bad);
    consume(e >> 16);
    return e & 0xFFFF;
  }
};

}  // namespace decode_lanes
}  // namespace vlec::cuda
