// cuda/encode_lane_writer.cuh: one lane's writer of the Huffman chunk
// layout (docs/FORMAT.md §5) on the GPU: the decoders' refills replayed step
// by step (a ballot and popcounts give each word its slot), the step's codes
// appended, each completed word stored at its slot. Used by the lanes
// encoder (encode_lanes.cu), whose warps each write a range of a chunk's
// rows, and by the warp encoder (encode_warp.cu), whose warps each write
// whole chunks.
//
// Why it is shaped so: the lane state stays 32-bit (the bits past a word
// come from one funnel shift), the refill is branch-free (selects, no
// divergent block), and the ownership checks that a range's first words
// need are compiled out (kCheck) once every lane has passed them.
#pragma once

#include <cstdint>

#include "cuda/encode_rows.cuh"

namespace vlec::cuda {
namespace {

// Fix-up mode (pass_b): the high bits of the words each thread completes
// for the range before its warp's, two slots a thread of the 256.
__shared__ uint32_t s_heads[2 * kWarps * 32];

// One lane's writer in pass B. `acc` holds the low `acc_bits` bits of the
// lane's word `word`; words below `own_from` were taken before this range and
// are stored by the warp that took them. The slots of the words taken and
// not yet stored wait in s0, s1: never more than two are, since a decoder
// refills while it still holds bits (docs/FORMAT.md §5). How many are taken
// and incomplete follows from the state: the decoder's buffer plus the bits
// of the current word make whole words, (buffer + acc_bits) / 32 of them;
// minus those `behind` that are an earlier range's.
struct LaneWriter {
  uint32_t acc = 0, acc_bits = 0;
  uint32_t word = 0, own_from = 0;
  uint32_t buffer = 0;  // the mirrored decoder's buffered bits
  uint32_t s0 = 0, s1 = 0;
  uint32_t bound = 0;  // kBound: words at or past this slot are not stored (the warp encoder's slot ends there)

  // Words taken by an earlier range and not complete (0 once past own_from).
  template <bool kCheck>
  __device__ __forceinline__ uint32_t behind() const {
    return kCheck && word < own_from ? own_from - word : 0u;
  }
  // Words taken and incomplete that are ours. Signed: past the range
  // (lookahead) nothing is taken, the buffer may run below zero, and the
  // count then reads 0 or less.
  __device__ __forceinline__ int pending() const {
    return static_cast<int>(buffer + acc_bits) / 32 - static_cast<int>(behind<true>());
  }
  // Inside the range (buffer >= 0): is no word of ours pending?
  template <bool kCheck>
  __device__ __forceinline__ bool none_pending() const {
    return buffer + acc_bits < 32u * (1u + behind<kCheck>());
  }
  // Take a word if the decoder would (before a step); `base` is warp-uniform.
  // Branch-free: selects instead of a divergent block. A take with nothing
  // pending writes both slots (s1 is rewritten by the next take).
  template <bool kCheck>
  __device__ __forceinline__ void refill(bool active, uint32_t T, uint32_t& base) {
    const bool need = active && buffer < T;
    const uint32_t mask = __ballot_sync(kFull, need);
    const uint32_t slot = base + __popc(mask & lanemask_lt());
    s0 = need && none_pending<kCheck>() ? slot : s0;
    s1 = need ? slot : s1;
    buffer += need ? 32u : 0u;
    base += __popc(mask);
  }
  // Append up to 32 bits (one step's codes, merged) and store the word they
  // complete. The bits past the word come from one funnel shift, so the lane
  // state stays 32-bit. kCheck: the range's first words may not be ours
  // (tracked by `word`); once every lane is past own_from, `word` is left
  // behind (still >= own_from) and the check dropped.
  // fix_up: a completed word that is an earlier range's goes to this
  // thread's two s_heads slots, [0] the last such word, [1] the one before
  // (the earlier range's warp left the word's low bits: fix_up_boundary).
  template <bool kCheck, bool kBound = false>
  __device__ __forceinline__ void append(uint32_t code, uint32_t len, uint32_t* words, bool fix_up = false) {
    const uint32_t spill = __funnelshift_l(code, 0u, acc_bits);
    acc |= code << acc_bits;
    acc_bits += len;
    buffer -= len;
    const bool full = acc_bits >= 32;
    const bool store = kCheck ? full && word >= own_from : full;
    if (store && (!kBound || s0 < bound)) words[s0] = acc;
    if (kCheck && fix_up && full && word < own_from) s_heads[2 * threadIdx.x + own_from - word - 1] = acc;
    s0 = store ? s1 : s0;
    if (kCheck) word += full;
    acc = full ? spill : acc;
    acc_bits &= 31u;
  }
  // The chunk ended: the pending words (zero-padded) are the lane's last. If
  // the current word is not ours, the first pending word has no bits yet.
  template <bool kBound = false>
  __device__ __forceinline__ void flush(uint32_t* words) {
    const int n = pending();
    if (n <= 0) return;
    if (!kBound || s0 < bound) words[s0] = word >= own_from ? acc : 0u;
    if (n > 1 && (!kBound || s1 < bound)) words[s1] = 0;
  }
};

// One row of a lane: kGroup / K steps of K symbols, entry(i) giving symbol
// i's code. `kInside` the range the lanes take words; past it (lookahead)
// they only complete words already taken. kBound: stores stop at w.bound.
template <unsigned K, bool kInside, bool kCheck, bool kBound = false, typename Entry>
__device__ __forceinline__ void encode_row(LaneWriter& w, unsigned mine, Entry&& entry, uint32_t T, uint32_t& base,
                                           uint32_t* words, bool fix_up = false) {
#pragma unroll
  for (unsigned step = 0; step < kGroup / K; ++step) {
    if (kInside) w.refill<kCheck>(step * K < mine, T, base);
    // Merge the step's codes: K * L <= 32 bits by the refill rule.
    uint32_t code = 0, len = 0;
#pragma unroll
    for (unsigned k = 0; k < K; ++k) {
      if (step * K + k < mine) {
        const uint32_t e = entry(step * K + k);
        code |= (e & 0xFFFFFFu) << len;
        len += e >> 24;
      }
    }
    if (kInside || w.pending() > 0) w.append<kCheck, kBound>(code, len, words, fix_up);
  }
}

}  // namespace
}  // namespace vlec::cuda
